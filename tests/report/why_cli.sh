#!/usr/bin/env bash
# `tilesweep why` end to end on data/why.toml: a key without a program says why (each variant and
# fusion form's reason, with or without <archive>.synthesis at hand), relu on 8 rows names its
# idle partitions, every best names its engines and memory; report's bound column agrees; --json
# parses; a filter matching nothing exits 2 naming the rows.
set -eu
bin=$1 root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail() { echo "FAIL: $*"; exit 1; }
"$bin" run "$root/tests/report/data/why.toml" --archive w.h5 -q >/dev/null
"$bin" why w.h5 > why.txt || fail "why: $(cat why.txt)"
while IFS= read -r want; do
  grep -qF -- "$want" why.txt || fail "missing '$want' in: $(cat why.txt)"
done <<'WANT'
repeat_rows trn1 M=256,N=512 mesh 1: no program
  no program: variant 0 (unfused): a slice stepping 2 along a dim repeated 3 times has no DMA access pattern
relu trn1 M=8,N=4104 mesh 1: scalar
; 8 of 128 partitions
  partitions used per fused group: g0 8 (of 128 on trn1)
softmax trn1 M=256,N=256 mesh 1: dma
  engines busy (of the latency): dma
  memory: HBM 256.0 KiB read, 256.0 KiB written, 0 B of them spilled; on-chip peaks per partition: SBUF
WANT
# the reasons without the synthesis records (the kernel prepared again)
rm w.h5.synthesis
"$bin" why w.h5 --kernel repeat_rows --target trn1 > why2.txt
grep -qF "variant 0 (unfused): a slice stepping 2 along a dim repeated 3 times" why2.txt || fail "without records: $(cat why2.txt)"
[ "$(grep -c ': ' why2.txt)" -ge 2 ] && ! grep -q '^relu' why2.txt || fail "--kernel did not filter: $(cat why2.txt)"
"$bin" report w.h5 | grep -qE '^ +relu +trn1 .* scalar [0-9]+% busy; 8 of 128 partitions( |$)' || fail "report's bound column"
"$bin" why w.h5 --json | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
assert [w["kernel"] for w in d] == ["repeat_rows", "relu", "softmax"], d
assert d[0]["bound"] == "no program" and len(d[0]["details"]) == 1, d[0]'
set +e
"$bin" why w.h5 --kernel relu --shape M=9,N=4104 > out.txt 2> err.txt; rc=$?
set -e
[ $rc -eq 2 ] && grep -qF "error: no (kernel, target, shape, mesh) of 'w.h5' matches; it has 3 rows: repeat_rows trn1" err.txt ||
  fail "exit $rc: $(cat err.txt)"
echo ok
