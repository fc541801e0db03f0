#!/usr/bin/env bash
# Relations between dims that a kernel implies (N == 2 * F from the halves of a fused gate|up
# weight) are preconditions: `check` states them, `eval --shape` and job shapes check them, with
# an error at the op that implies the relation only when the given dims violate it.
set -u
bin=$1 root=$2
failed=0 n=0
k=$root/jobs/kernels/examples/llama_layer.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# expect RC SUBSTRING -- ARGS...: the exit status and a substring of stdout+stderr.
expect() {
  local rc=$1 want=$2; shift 3
  n=$((n + 1))
  got=$(cd "$tmp" && timeout 60 "$bin" "$@" 2>&1); local r=$?
  if [[ $r -ne $rc || "$got" != *"$want"* ]]; then
    echo "FAIL tilesweep $*: exit $r (want $rc)"; echo "  want: $want"; echo "  got:  $got"
    failed=$((failed + 1))
  fi
}
line=$(grep -n 'silu(h\[' "$k" | cut -d: -f1)
expect 0 "requires N == 2 * F" -- check "$k"
expect 0 "output 0" -- eval "$k" --kernel swiglu_mlp --shape T=4,C=8,F=6,N=12
expect 2 "$k:$line:28: error: kernel 'swiglu_mlp' requires N == 2 * F (operands of 'mul' must broadcast at line $line), which fails for C=8, F=6, N=10, T=4: N = 10 and 2 * F = 12" \
  -- eval "$k" --kernel swiglu_mlp --shape T=4,C=8,F=6,N=10
expect 2 "$k:$line:28: error: --shape: kernel 'swiglu_mlp' requires N == 2 * F (operands of 'mul' must broadcast at line $line), but the shape gives N = 200 and 2 * F = 256; pick dims where N == 2 * F holds" \
  -- lower "$k" --kernel swiglu_mlp --target trn2 --shape T=128,C=128,F=128,N=200
cat > "$tmp/job.toml" <<TOML
name = "relations"
targets = ["trn2"]
[[kernel]]
file = "$k"
name = "swiglu_mlp"
shapes = [{ T = 128, C = 256, F = 512, N = 1000 }]
TOML
expect 2 "job.toml:6:11: error: shape T=128,C=256,N=1000,F=512 does not fit kernel 'swiglu_mlp': it needs N == 2 * F (operands of 'mul' must broadcast at line $line, $k:$line:28), but N = 1000 and 2 * F = 1024" \
  -- run "$tmp/job.toml" --dry-run
sed -i 's/N = 1000/N = 1024/' "$tmp/job.toml"
expect 0 "" -- run "$tmp/job.toml" --dry-run
# The proofs assume the relation: the variants of the kernel are proved under N == 2 * F.
expect 0 "variant 1 [" -- variants "$k" --kernel swiglu_mlp
echo "$n cases, $failed failed"
[[ $failed -eq 0 ]]
