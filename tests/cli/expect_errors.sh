#!/usr/bin/env bash
# Runs `tilesweep check` on every bad kernel in DIR: each must exit 2 and print its expected
# message (the file's first line, `# expect: ...`) on stderr, with no crash or stack trace.
set -u
bin=$1 dir=$2
failed=0 n=0
cd "$dir" || exit 1
for f in *.py; do
  n=$((n + 1))
  want="$f$(head -n 1 "$f" | sed 's/^# expect: //')"
  got=$(timeout 20 "$bin" check "$f" 2>&1 >/dev/null)
  rc=$?
  if [[ $rc -ne 2 || "$got" != "$want" ]]; then
    echo "FAIL $f: exit $rc"
    echo "  want: $want"
    echo "  got:  $got"
    failed=$((failed + 1))
  fi
done
# Bad arguments: exit 2 with a message naming the argument.
check_arg() {
  local want=$1; shift
  n=$((n + 1))
  got=$("$bin" "$@" 2>&1 >/dev/null); rc=$?
  if [[ $rc -ne 2 || "$got" != *"$want"* ]]; then
    echo "FAIL tilesweep $*: exit $rc, want '$want', got '$got'"; failed=$((failed + 1))
  fi
}
ok=../../jobs/kernels/axon/matmul.py
check_arg "error: --shape: expected NAME=INT, got 'M' (e.g. --shape M=64,N=32)" eval "$ok" --shape M
check_arg "error: kernel 'matmul' has no dim 'Q'" eval "$ok" --shape M=2,K=2,N=2,Q=1
check_arg "error: dim N of kernel 'matmul' is not given; pass --shape N=..." eval "$ok" --shape M=2,K=2
check_arg "error: no kernel 'matmull' in '$ok'; did you mean 'matmul'?" eval "$ok" --kernel matmull --shape M=2
check_arg "error: --input: kernel 'matmul' has no parameter 'q'" eval "$ok" --input q=x.npy
check_arg "error: cannot open 'missing.npy'" eval "$ok" --input x=missing.npy
check_arg "error: cannot open 'nope.py'" check nope.py
check_arg "--precision: f16 not in {f64,f32,bf16}" eval "$ok" --precision f16 --shape M=1
check_arg "error: cannot open 'nope.toml'" check "$ok" --ops nope.toml
check_arg "The following argument was not expected: --bogus" check "$ok" --bogus
check_arg "error: --cores = 3: trn1 has 2 NeuronCores per chip; give 1 to 2" score "$ok" --shape M=128,K=128,N=128 --cores 3
check_arg "error: --cores = 0: trn2 has 8 NeuronCores per chip; give 1 to 8" lower "$ok" --target trn2 --shape M=128,K=128,N=128 --cores 0
check_arg "error: --cores = 9: trn3 has 8 NeuronCores per chip; give 1 to 8" score "$ok" --target trn3 --shape M=128,K=128,N=128 --cores 9
echo "$n cases, $failed failed"
[[ $failed -eq 0 ]]
