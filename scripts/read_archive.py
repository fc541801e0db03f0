#!/usr/bin/env python3
"""Reads a tilesweep HDF5 archive (schema: results/README.md; versions 1 to 4) and prints a summary.

Prints the /meta provenance and status, the row count of every table and the /best table
(latency, roofline, % of roofline, speedup over the heuristic baseline). Exits 2 with a message
when the file is missing, is not a tilesweep archive, or is truncated or corrupt.

Usage: python3 scripts/read_archive.py ARCHIVE.h5
Needs h5py and numpy (Debian: python3-h5py); uses pandas for the table when it is installed.

As a library: `load(path)` returns (meta dict, {table name: numpy structured array}) with text
columns decoded to str (meta also gets "<table>_rows" counts) and a version-1 archive's tables
given the version-2 columns; `frames(path)` returns pandas DataFrames.
"""
from __future__ import annotations

import math
import os
import sys

import h5py
import numpy as np

FORMAT = "tilesweep-archive"
SCHEMA_VERSION = 4
OLDEST_READABLE = 1  # version 1: one device only, no sharding / compute_ns (and /best collective_ns) columns
TABLES = ("candidates", "best", "proofs", "progress")


class BadArchive(Exception):
    """The message reads after "error: ": what is wrong, naming the path."""


def _text(v) -> str:
    return v.decode("utf-8") if isinstance(v, bytes) else str(v)


def _decode(table: np.ndarray) -> np.ndarray:
    """Text columns (fixed-length bytes "S", or variable-length objects) -> str objects."""
    text = [name for name in table.dtype.names if table.dtype[name].kind in "SO"]
    fields = [(name, object if name in text else table.dtype[name]) for name in table.dtype.names]
    out = np.empty(table.shape, dtype=fields)
    for name in table.dtype.names:
        out[name] = [_text(v) for v in table[name]] if name in text else table[name]
    return out


def _upgrade(table: np.ndarray) -> np.ndarray:
    """Adds the columns a version-1 table lacks, as tilesweep reads them: sharding "", compute_ns =
    latency_ns, collective_ns 0 (version 1 archives are one device only)."""
    names = table.dtype.names
    if "mesh" not in names or "sharding" in names:
        return table
    extra = [("sharding", object)]
    if "latency_ns" in names:
        extra.append(("compute_ns", "<f8"))
        if "collective_ns" not in names:
            extra.append(("collective_ns", "<f8"))
    out = np.empty(table.shape, dtype=[(n, table.dtype[n]) for n in names] + extra)
    for n in names:
        out[n] = table[n]
    out["sharding"] = ""
    if "latency_ns" in names:
        out["compute_ns"] = table["latency_ns"]
        if "collective_ns" not in names:
            out["collective_ns"] = 0.0
    return out


def read_meta(f: h5py.File, path: str) -> dict:
    def not_archive(what: str) -> BadArchive:
        return BadArchive(f"not a tilesweep archive: '{path}' {what}")

    if "meta" not in f:
        raise not_archive("has no /meta group")
    attrs = f["meta"].attrs
    if _text(attrs.get("format", "")) != FORMAT:
        raise not_archive(f'has no /meta attribute format = "{FORMAT}"')
    version = int(attrs.get("schema_version", -1))
    if not OLDEST_READABLE <= version <= SCHEMA_VERSION:
        raise not_archive(f"has schema version {version} (this script reads versions {OLDEST_READABLE} to "
                          f"{SCHEMA_VERSION})")
    meta = {k: (_text(v) if isinstance(v, (bytes, str)) else v) for k, v in attrs.items()}
    for keys, values, name in (("target_names", "target_texts", "targets"),
                               ("kernel_files", "kernel_sources", "kernel_sources"),
                               ("phase_names", "phase_seconds", "phase_seconds")):
        meta[name] = dict(zip((_text(k) for k in meta.pop(keys)),
                              (_text(v) if isinstance(v, bytes) else v for v in meta.pop(values))))
    return meta


def load(path: str, tables=TABLES):
    """(meta dict, {table: structured array}) for the named tables; raises BadArchive with the
    same wording as tilesweep's own reader."""
    if not os.path.isfile(path):
        raise BadArchive(f"cannot open archive '{path}': " +
                         ("it is a folder" if os.path.isdir(path) else "No such file or directory"))
    if not h5py.is_hdf5(path):
        raise BadArchive(f"not a tilesweep archive: '{path}' is not an HDF5 file")
    try:
        with h5py.File(path, "r") as f:
            meta = read_meta(f, path)
            out = {}
            for name in TABLES:
                if name not in f:
                    raise BadArchive(f"not a tilesweep archive: '{path}' has no /{name} table")
                meta[f"{name}_rows"] = f[name].shape[0]
                if name in tables:
                    out[name] = _upgrade(_decode(f[name][()]))
    except (OSError, KeyError, ValueError) as e:
        raise BadArchive(f"truncated or corrupt HDF5 file: '{path}' ({e})")
    return meta, out


def frames(path: str):
    import pandas as pd  # optional

    meta, tables = load(path)
    return meta, {name: pd.DataFrame.from_records(t) for name, t in tables.items()}


def _seconds(v: float) -> str:
    return "-" if math.isnan(v) else f"{v:.1f}s"


def _ns(v: float) -> str:
    return "-" if math.isnan(v) else f"{v:,.0f}"


def best_rows(best: np.ndarray) -> list[list[str]]:
    rows = [["kernel", "target", "shape", "mesh", "sharding", "latency_ns", "collective_ns", "roofline_ns", "%roof",
             "heuristic_ns", "speedup", "candidates", "infeasible"]]
    for r in best:
        lat, roof, heur = float(r["latency_ns"]), float(r["roofline_ns"]), float(r["heuristic_ns"])
        pct = "-" if math.isnan(lat) or math.isnan(roof) or lat <= 0 else f"{100 * roof / lat:.1f}"
        speedup = "-" if math.isnan(lat) or math.isnan(heur) or lat <= 0 else f"{heur / lat:.2f}x"
        rows.append([r["kernel"], r["target"], r["shape"], r["mesh"], r["sharding"] or "-", _ns(lat),
                     _ns(float(r["collective_ns"])), _ns(roof), pct, _ns(heur), speedup, str(r["candidates"]),
                     str(r["infeasible"])])
    return rows


def print_table(rows: list[list[str]]) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[1].startswith("-"):
        print(__doc__.strip().splitlines()[-5], file=sys.stderr)
        return 2
    path = argv[1]
    try:
        meta, tables = load(path, tables=("best",))
    except BadArchive as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"archive: {path}")
    print(f"status: {meta['status']}")
    print(f"job: {meta['job_name']} (hash {meta['job_hash']})")
    print(f"tilesweep {meta['tool_version']} (commit {meta['git_commit'] or '?'}), schema {meta['schema_version']}")
    print(f"ranks: {meta['ranks']}, threads: {meta['threads']}, {meta['start_time']} .. {meta['end_time']}")
    print("targets: " + (", ".join(meta["targets"]) or "-"))
    print("phases: " + (", ".join(f"{k} {_seconds(v)}" for k, v in meta["phase_seconds"].items()) or "-"))
    for name in TABLES:
        print(f"{name}: {meta[f'{name}_rows']} rows")
    print()
    print("best:")
    rows = best_rows(tables["best"])
    try:
        import pandas as pd  # optional: nicer alignment when installed
    except ImportError:
        print_table(rows)
    else:
        print(pd.DataFrame(rows[1:], columns=rows[0]).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
