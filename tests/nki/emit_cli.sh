#!/usr/bin/env bash
# The NKI-writing flags end to end: score --emit-nki writes the --top candidates, lower --emit-nki
# without --show writes the heuristic candidate and says so, --nki-api picks the dialect, a bad
# dialect is exit 2 (CLI11's check) with the choices named.
set -eu
bin=$1 root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
k=$root/jobs/kernels/axon/softmax.py

"$bin" score "$k" --target trn2 --shape M=256,N=256 --top 2 --threads 1 --emit-nki "$tmp/s" > "$tmp/score.txt"
grep -q "NKI (current API) of rank 1 (candidate " "$tmp/score.txt"
test -f "$tmp/s/softmax_trn2_rank1.py" && test -f "$tmp/s/softmax_trn2_rank2.py"
grep -q "^import nki$" "$tmp/s/softmax_trn2_rank1.py"
"$bin" score "$k" --target trn2 --shape M=256,N=256 --top 1 --threads 1 --json --emit-nki "$tmp/sj" --nki-api legacy \
  > "$tmp/score.json" 2> "$tmp/score.err"
/usr/bin/python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/score.json"
grep -q "NKI (legacy API) of rank 1" "$tmp/score.err"
grep -q "^import neuronxcc.nki as nki$" "$tmp/sj/softmax_trn2_rank1.py"

"$bin" lower "$k" --target trn1 --shape M=256,N=256 --emit-nki "$tmp/l" > "$tmp/lower.txt"
grep -q "heuristic candidate (no --show / --index given)" "$tmp/lower.txt"
grep -q "NKI (current API): $tmp/l/softmax_heuristic.py" "$tmp/lower.txt"
for f in "$tmp"/s/*.py "$tmp"/sj/*.py "$tmp"/l/*.py; do /usr/bin/python3 -m py_compile "$f"; done

set +e
"$bin" lower "$k" --target trn1 --shape M=256,N=256 --emit-nki "$tmp/x" --nki-api 2.26 > "$tmp/bad.txt" 2>&1
rc=$?
set -e
test "$rc" -ne 0
grep -q "nki-api" "$tmp/bad.txt"
echo ok
