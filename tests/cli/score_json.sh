#!/usr/bin/env bash
# `score --json` is self-describing: it names the kernel, file, target, shape and mesh it
# searched, and whole quantities (bytes, counts) are JSON integers.
set -euo pipefail
bin=$1 root=$2
out=$("$bin" score "$root/jobs/kernels/axon/softmax.py" --target trn1 --shape M=256,N=256 --top 2 --max-block 2 --json)
/usr/bin/python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["kernel"] == "softmax" and d["target"] == "trn1" and d["mesh"] == "1", d
assert d["shape"] == {"M": 256, "N": 256}, d["shape"]
assert d["file"].endswith("softmax.py") and d["simulated"] is True
assert isinstance(d["candidates_scored"], int) and d["candidates_scored"] > 0
assert isinstance(d["pruned"], int) and 0 <= d["pruned"] <= d["candidates_scored"], d
top = d["top"][0]
for key in ("hbm_read_bytes", "hbm_write_bytes", "sbuf_peak_bytes", "psum_peak_bytes", "spill_bytes"):
    assert isinstance(top[key], int), (key, top[key])
assert top["hbm_read_bytes"] >= 256 * 256 * 4, top
assert 0 < d["best_ns"] and 0 < d["roofline_ns"], d
# The attainable bound (from the peaks of the target description) holds for every candidate listed.
assert 0 < d["attainable_ns"] <= d["best_ns"], d
for c in d["top"]:
    assert 0 < c["percent_of_attainable"] <= 100, c
    # (the percentages are printed with three decimals)
    ratio = d["roofline_ns"] / d["attainable_ns"]
    assert abs(c["percent_of_roofline"] / c["percent_of_attainable"] / ratio - 1) < 1e-3, c
    assert c["cores"] == 1, c
assert d["cores"] == 1, d
# Every variant and fusion form without candidates is listed with its reason (none here).
assert d["no_program"] == [], d["no_program"]
' "$out"
# --no-prune: every candidate simulated to the end, the same top and baselines.
full=$("$bin" score "$root/jobs/kernels/axon/softmax.py" --target trn1 --shape M=256,N=256 --top 2 --max-block 2 --json --no-prune)
/usr/bin/python3 -c '
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert b["pruned"] == 0, b
for key in ("best_ns", "baselines", "candidates_scored", "infeasible"):
    assert a[key] == b[key], (key, a[key], b[key])
assert [c["index"] for c in a["top"]] == [c["index"] for c in b["top"]], (a["top"], b["top"])
' "$out" "$full"
# --cores 2 on trn1 (its two cores): every candidate listed uses 1 or 2, the bound is for 2.
two=$("$bin" score "$root/jobs/kernels/axon/relu.py" --target trn1 --shape M=1024,N=256 --top 3 --cores 2 --json)
/usr/bin/python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["cores"] == 2, d
for c in d["top"]:
    assert c["cores"] in (1, 2) and (c["cores"] == 2) == ("cores=2" in c["config"]), c
    assert 0 < c["percent_of_attainable"] <= 100, c
assert d["top"][0]["cores"] == 2, d["top"][0]
' "$two"
