#!/usr/bin/env bash
# `prove` answers with its first word and exit code (0 equivalent, 1 not, 3 unknown); `variants`
# finds the multiply-past-matmul swap of RMSNorm+MatMul.
set -u
bin=$1 root=$2
dir=$root/tests/cli/prove
failed=0
expect() {
  local want_rc=$1 want_word=$2; shift 2
  out=$("$bin" "$@" 2>&1); rc=$?
  if [[ $rc -ne $want_rc || "$out" != "$want_word"* ]]; then
    echo "FAIL tilesweep $*: exit $rc (want $want_rc), output: $out"; failed=$((failed + 1))
  fi
}
expect 0 "equivalent" prove "$dir/row_scale_a.py" "$dir/row_scale_b.py"
expect 1 "not equivalent" prove "$dir/col_scale_a.py" "$dir/col_scale_b.py"
expect 3 "unknown" prove "$dir/tanh_odd_a.py" "$dir/tanh_odd_b.py"
expect 0 "equivalent" prove "$dir/exp_add_a.py" "$dir/exp_add_b.py"
expect 2 "error: parameter 's' is s: [1, K] in 'scaled' but s: [M, 1] in 'scaled'" prove "$dir/col_scale_a.py" "$dir/row_scale_b.py"
# Issue 18: parameters by name, literal and dim overflow as file:line:col errors, undefined
# elements, the deterministic budget.
expect 0 "equivalent" prove "$dir/swapped_params_a.py" "$dir/swapped_params_b.py"
expect 2 "error: parameter 'z' of 'f' has no namesake in 'f'" prove "$dir/swapped_params_a.py" "$dir/renamed_params_b.py"
expect 2 "$dir/huge_literal.py:2:16: error: number literal 1e400 is out of the range" prove "$dir/huge_literal.py" "$dir/huge_literal.py"
expect 2 "$dir/huge_dim.py:1:" prove "$dir/huge_dim.py" "$dir/huge_dim.py"
expect 1 "not equivalent" prove "$dir/zero_row_a.py" "$dir/zero_row_b.py"
expect 3 "unknown: resource limit exhausted (rlimit 1)" prove --rlimit 1 "$dir/row_scale_a.py" "$dir/row_scale_b.py"
out=$("$bin" prove "$dir/col_scale_a.py" "$dir/col_scale_b.py")
[[ "$out" == *"counterexample: at "* ]] || { echo "FAIL: no counterexample in: $out"; failed=$((failed + 1)); }
out=$("$bin" variants "$root/jobs/kernels/axon/rmsnorm_matmul.py")
[[ "$out" == *"mul@"*"past matmul@"*"equivalent"* ]] || { echo "FAIL: variants: $out"; failed=$((failed + 1)); }
[[ $failed -eq 0 ]] && echo ok
