#!/usr/bin/env bash
# The unit tests under AddressSanitizer and UndefinedBehaviorSanitizer, in a build folder of
# their own (default build-asan/; $TILESWEEP_ASAN_DIR), so the normal build is left alone.
#   scripts/sanitize.sh                 the core libraries' tests: base, semantics, ir (front end,
#                                       interpreter, golden kernels, error corpus) and store
#   scripts/sanitize.sh --all           every unit test executable (a long build: all libraries)
#   scripts/sanitize.sh TARGET...       these test executables (e.g. sim_test report_test)
# Any sanitizer report fails the run (UBSan does not recover; ASan's leak check is on). Prints
# each test executable's result and exits non-zero when one failed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TILESWEEP_ASAN_DIR:-$root/build-asan}
jobs=${TILESWEEP_JOBS:-$(nproc 2>/dev/null || echo 2)}
core=(base_test semantics_test ir_test golden_test errors_test store_test)
all=("${core[@]}" cli_args_test sim_test execute_test nki_test nki_import_test mesh_test report_test job_test
     sweep_units_test sweep_sample_test)
if [[ $# -eq 0 ]]; then targets=("${core[@]}")
elif [[ $1 == --all ]]; then targets=("${all[@]}")
else targets=("$@"); fi

flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -O1 -g"
if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Debug -DTILESWEEP_BUILD_BENCH=OFF \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
fi
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1:strict_string_checks=1
export LSAN_OPTIONS=suppressions=$root/scripts/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# ASan's redzones make each frame of the front end's recursive evaluation ~10 KiB (about 6x the
# release build's), so the deepest expressions it accepts (ir/frontend.cpp kMaxEvalDepth) need
# ~10 MiB of stack here; the release build needs 1-2 MiB of the 8 MiB default (ctest
# ir.errors_stack_margin checks it at 4 MiB).
ulimit -s 65536
failed=()
for t in "${targets[@]}"; do
  exe=$(find "$build/tests" -type f -name "$t" -perm -u+x | head -1)
  [[ -n $exe ]] || { echo "sanitize: no executable for $t"; failed+=("$t"); continue; }
  start=$(date +%s)
  if (cd "$root" && "$exe" --gtest_brief=1 > "$build/$t.log" 2>&1); then
    echo "sanitize: $t passed ($(( $(date +%s) - start )) s; log $build/$t.log)"
  else
    echo "sanitize: $t FAILED (log $build/$t.log):"
    grep -E "ERROR: AddressSanitizer|runtime error|LeakSanitizer|\[  FAILED  \]" "$build/$t.log" | head -20
    failed+=("$t")
  fi
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "sanitize: ${#failed[@]} of ${#targets[@]} failed: ${failed[*]}"
  exit 1
fi
echo "sanitize: all ${#targets[@]} clean under ASan+UBSan"
