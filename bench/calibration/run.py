#!/usr/bin/env python3
"""Re-runs the calibration set (calibration.toml) through `tilesweep time` and prints one row per
point: kernel, measured, simulated, ratio, HBM bytes measured vs simulated, then whether each
family keeps its measured order. Usage: run.py TILESWEEP_BINARY [TARGET]. Standard library only."""
import json
import subprocess
import sys
import tomllib
from pathlib import Path

here = Path(__file__).resolve().parent
binary, target = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "trn1")
points = tomllib.loads((here / "calibration.toml").read_text())["point"]
print(f"| kernel | measured ms | simulated ms | sim / measured | HBM read MB meas / sim | HBM write MB meas / sim | spill MB meas / sim |")
print("|---|---:|---:|---:|---:|---:|---:|")
results, inside, hbm_points, hbm_inside = {}, 0, 0, 0
for p in points:
    cmd = [binary, "time", str(here / p["file"]), "--kernel", p["kernel"], "--target", target, "--json"]
    for a in p["args"]:
        cmd += ["--arg", a]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        print(f"| {p['name']} | {p['measured_ms']} | error: {run.stderr.strip()} | | | | |")
        continue
    d = json.loads(run.stdout)
    sim_ms = d["latency_ns"] / 1e6
    ratio = sim_ms / p["measured_ms"]
    inside += 0.8 <= ratio <= 1.25
    results[p["name"]] = (p, sim_ms)
    rd = f"{p['hbm_read_mb']:.1f} / {d['hbm_read_bytes'] / 1e6:.1f}" if "hbm_read_mb" in p else f"- / {d['hbm_read_bytes'] / 1e6:.1f}"
    wr = f"{p['hbm_write_mb']:.1f} / {d['hbm_write_bytes'] / 1e6:.1f}" if "hbm_write_mb" in p else f"- / {d['hbm_write_bytes'] / 1e6:.1f}"
    if "hbm_read_mb" in p:
        hbm_points += 1
        hbm_inside += all(abs(d[k] / 1e6 - p[m]) <= 0.1 * p[m]
                          for k, m in (("hbm_read_bytes", "hbm_read_mb"), ("hbm_write_bytes", "hbm_write_mb")))
    meas_spill = p["spill_save_mb"] + p["spill_reload_mb"] if "spill_save_mb" in p else None
    sp = f"{meas_spill:.1f} / {d['spill_bytes'] / 1e6:.1f}" if meas_spill is not None else f"- / {d['spill_bytes'] / 1e6:.1f}"
    print(f"| {p['name']} | {p['measured_ms']:.3f} | {sim_ms:.3f} | {ratio:.2f} | {rd} | {wr} | {sp} |")
print(f"\n{inside} of {len(points)} points within 0.8x-1.25x of the measurement")
print(f"HBM bytes (read and written) within 10 % of the profile: {hbm_points and hbm_inside} of {hbm_points} points")
families = {}
for p, sim in results.values():
    if "family" in p:
        families.setdefault(p["family"], []).append((p["order"], p["measured_ms"], sim, p["name"]))
for fam, rows in sorted(families.items()):
    rows.sort()
    kept = all(a[2] > b[2] for a, b in zip(rows, rows[1:]))
    print(f"{fam}: measured order {'kept' if kept else 'NOT kept'} ({' > '.join(f'{r[2]:.3f}' for r in rows)} ms simulated)")
