#!/usr/bin/env python3
"""Per-rank busy seconds, units and candidates from a tilesweep archive's /progress table.

Usage: python3 bench/progress_by_rank.py ARCHIVE.h5   (needs h5py)
The sum of all units' seconds approximates one rank's search time; a rank's busy seconds against
the search's wall time say how long it waited for work.
"""
import statistics
import sys

import h5py

with h5py.File(sys.argv[1], "r") as f:
    p = f["progress"][()]
ranks = sorted({int(r) for r in p["rank"]})
busy = {r: float(p["seconds"][p["rank"] == r].sum()) for r in ranks}
units = {r: int((p["rank"] == r).sum()) for r in ranks}
cands = {r: int(p["candidates"][p["rank"] == r].sum()) for r in ranks}
print(f"units {len(p)}; unit seconds total {sum(busy.values()):.1f}; "
      f"largest unit {p['seconds'].max():.2f} s")
workers = [busy[r] for r in ranks if r != 0] or [busy[0]]
print(f"busy: rank 0 {busy[0]:.1f} s ({units[0]} units); other ranks median "
      f"{statistics.median(workers):.1f} s, min {min(workers):.1f}, max {max(workers):.1f}")
print(" ".join(f"r{r}:{busy[r]:.0f}s/{units[r]}u/{cands[r] // 1000}k" for r in ranks))
