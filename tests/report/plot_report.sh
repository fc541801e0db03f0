#!/usr/bin/env bash
# scripts/plot_report.py writes non-empty PNGs (heatmap, Pareto fronts, roofline bars) for a
# real archive, and exits 2 for a file that is not one. Skipped (exit 0 with a note) when
# python3-h5py or python3-matplotlib is missing.
set -eu
bin=$1 root=$2
py=/usr/bin/python3
if ! $py -c 'import h5py, matplotlib' 2>/dev/null; then echo "skipped: needs python3-h5py and python3-matplotlib"; exit 0; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" run "$root/tests/report/data/a.toml" --archive "$tmp/a.h5" -q >/dev/null
$py "$root/scripts/plot_report.py" "$tmp/a.h5" -o "$tmp/png" >/dev/null
for f in speedup_softmax_trn1.png roofline_axon.png; do test -s "$tmp/png/$f" || { echo "missing $f"; exit 1; }; done
ls "$tmp/png"/pareto_softmax_trn1_*.png >/dev/null
for f in "$tmp/png"/*.png; do
  test -s "$f" && head -c 8 "$f" | grep -q PNG || { echo "not a PNG: $f"; exit 1; }
done
# Targets are never mixed: one roofline panel per target, each with its own geomean; the
# latency axis picks a unit that keeps its numbers short.
$py - "$root/scripts" <<'PY'
import math, sys
sys.path.insert(0, sys.argv[1])
import plot_report as p
row = lambda k, t, lat, roof: {"kernel": k, "target": t, "latency_ns": lat, "roofline_ns": roof}
best = [row("a", "trn1", 100, 50), row("a", "trn1", 100, 25), row("b", "trn1", 100, 50), row("a", "trn2", 100, 10)]
panels = p.roofline_panels(best, {"a": "axon", "b": "axon"})
assert sorted(panels["axon"]) == ["trn1", "trn2"], panels
names, values, geo = panels["axon"]["trn1"]
assert names == ["a", "b"] and abs(values[0] - math.sqrt(50 * 25)) < 1e-9 and abs(values[1] - 50) < 1e-9, panels
names, values, geo = panels["axon"]["trn2"]
assert names == ["a"] and abs(values[0] - 10) < 1e-9 and abs(geo - 10) < 1e-9, panels
assert p.time_unit([5e6, 2e6]) == (1e6, "ms") and p.time_unit([4000.0]) == (1e3, "us") and p.time_unit([12.0]) == (1.0, "ns")
PY
echo "x" > "$tmp/bad.h5"
set +e
$py "$root/scripts/plot_report.py" "$tmp/bad.h5" -o "$tmp/png2" 2>/dev/null
rc=$?
set -e
test $rc -eq 2 || { echo "bad archive: exit $rc"; exit 1; }
echo ok
