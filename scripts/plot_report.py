#!/usr/bin/python3
"""Plots a tilesweep archive (schema: results/README.md) as PNG files.

Writes into DIR:
  speedup_<kernel>_<target>.png        heatmap of heuristic / best latency over the kernel's shape
                                       grid (the two dims that vary; a single row when one varies
                                       or more than two do)
  pareto_<kernel>_<target>_<shape>.png simulated latency vs peak SBUF use of the kept feasible
                                       candidates (/candidates), with their Pareto front
  roofline_<suite>.png                 % of the roofline bound per kernel (geomean over shapes),
                                       one panel per target (each with its own geomean: targets
                                       are never mixed); suites from the kernel paths
All latencies are simulated (tilesweep's model of the target), and the plots say so.

Usage: python3 scripts/plot_report.py ARCHIVE.h5 -o DIR
Needs h5py, numpy and matplotlib (Debian: python3-h5py python3-matplotlib); uses the Agg backend,
so it runs without a display. Exits 2 with a message for a missing, non-archive or corrupt file.
"""
from __future__ import annotations

import argparse
import math
import os
import re
import sys
import textwrap
import tomllib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import read_archive  # noqa: E402

NOTE = "simulated latencies"


def safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)


def title(ax, text: str, width: int = 56) -> None:
    """A title wrapped to the figure instead of clipped at its edges."""
    ax.set_title("\n".join(textwrap.wrap(text, width)), fontsize=9)


def time_unit(values_ns: list[float]) -> tuple[float, str]:
    """The divisor and name of the unit that keeps the largest latency between 1 and 1000."""
    top = max((v for v in values_ns if v > 0 and math.isfinite(v)), default=1.0)
    for scale, name in ((1e6, "ms"), (1e3, "us")):
        if top >= scale:
            return scale, name
    return 1.0, "ns"


def dims_of(shape: str) -> dict[str, int]:
    return {k: int(v) for k, v in (part.split("=") for part in shape.split(",") if "=" in part)}


def suites(meta: dict, path: str) -> dict[str, str]:
    """kernel label -> 'axon' / 'nkibench' / 'other', from the job text(s) recorded."""
    texts = [meta.get("job_toml", "")]
    import h5py
    with h5py.File(path, "r") as f:  # a merged archive records its sources' jobs
        if "sources" in f:
            texts = [read_archive._text(t) for t in f["sources"]["job_toml"]]
    out = {}
    for text in texts:
        try:
            job = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            continue
        for k in job.get("kernel", []):
            file = k.get("file", "")
            label = k.get("label") or k.get("name") or os.path.splitext(os.path.basename(file))[0]
            parts = file.replace("\\", "/").split("/")
            out[label] = "axon" if "axon" in parts else "nkibench" if "nkibench" in parts else "other"
    return out


def speedup_heatmaps(best, out: str) -> list[str]:
    written = []
    for kernel, target in sorted({(r["kernel"], r["target"]) for r in best if r["mesh"] == "1"}):
        rows = [r for r in best if r["kernel"] == kernel and r["target"] == target and r["mesh"] == "1"]
        shapes = [dims_of(r["shape"]) for r in rows]
        speed = [float(r["heuristic_ns"]) / float(r["latency_ns"]) if float(r["latency_ns"]) > 0 else math.nan
                 for r in rows]
        varying = [d for d in (shapes[0] if shapes else {}) if len({s[d] for s in shapes}) > 1]
        if len(varying) == 2:
            ys, xs = sorted({s[varying[0]] for s in shapes}), sorted({s[varying[1]] for s in shapes})
            grid = np.full((len(ys), len(xs)), np.nan)
            for s, v in zip(shapes, speed):
                grid[ys.index(s[varying[0]]), xs.index(s[varying[1]])] = v
            xlabels, ylabels, xname, yname = [str(x) for x in xs], [str(y) for y in ys], varying[1], varying[0]
        else:
            grid = np.array([speed])
            xlabels, ylabels, xname, yname = [r["shape"] or "-" for r in rows], [""], "shape", ""
        fig, ax = plt.subplots(figsize=(max(4, 1.1 * len(xlabels) + 2), max(3, 0.6 * len(ylabels) + 2)))
        im = ax.imshow(grid, cmap="viridis", aspect="auto")
        for (i, j), v in np.ndenumerate(grid):
            if not math.isnan(v):
                ax.text(j, i, f"{v:.2f}x", ha="center", va="center", color="white", fontsize=8)
        ax.set_xticks(range(len(xlabels)), xlabels, rotation=45, ha="right", fontsize=7)
        ax.set_yticks(range(len(ylabels)), ylabels)
        ax.set_xlabel(xname)
        ax.set_ylabel(yname)
        title(ax, f"{kernel} on {target}: speedup over heuristic ({NOTE})", width=max(40, 9 * len(xlabels)))
        fig.colorbar(im, ax=ax)
        written.append(save(fig, out, f"speedup_{safe(kernel)}_{safe(target)}.png"))
    return written


def pareto_plots(cands, out: str) -> list[str]:
    written = []
    feasible = cands[cands["feasible"]] if len(cands) else cands
    keys = sorted({(r["kernel"], r["target"], r["shape"], r["mesh"]) for r in feasible})
    for kernel, target, shape, mesh in keys:
        sel = [r for r in feasible if (r["kernel"], r["target"], r["shape"], r["mesh"]) == (kernel, target, shape, mesh)]
        pts = sorted((int(r["sbuf_peak_bytes"]), float(r["latency_ns"])) for r in sel)
        front, best = [], math.inf
        for sbuf, lat in pts:
            if lat < best:
                front.append((sbuf, lat))
                best = lat
        scale, unit = time_unit([p[1] for p in pts])
        fig, ax = plt.subplots(figsize=(5, 4))
        ax.scatter([p[0] / 1024 for p in pts], [p[1] / scale for p in pts], s=12, alpha=0.6, label="kept candidates")
        ax.step([p[0] / 1024 for p in front], [p[1] / scale for p in front], where="post", color="C3",
                label="Pareto front")
        ax.set_xlabel("peak SBUF use (KiB)")
        ax.set_ylabel(f"latency ({unit}, simulated)")
        ax.ticklabel_format(axis="y", style="plain", useOffset=False)
        title(ax, f"{kernel} {target} {shape}" + ("" if mesh == "1" else f" mesh {mesh}"), width=48)
        ax.legend(fontsize=7)
        mesh_part = "" if mesh == "1" else f"_mesh{safe(mesh)}"
        written.append(save(fig, out, f"pareto_{safe(kernel)}_{safe(target)}_{safe(shape)}{mesh_part}.png"))
    return written


def geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in xs) / len(xs))


def roofline_panels(best, suite_of: dict[str, str]) -> dict[str, dict[str, tuple[list[str], list[float], float]]]:
    """suite -> target -> (kernels, % of roofline per kernel as a geomean over shapes, their
    geomean): one panel per target, so a suite's geomean never mixes targets."""
    acc: dict[str, dict[str, dict[str, list[float]]]] = {}
    for r in best:
        lat, roof = float(r["latency_ns"]), float(r["roofline_ns"])
        if lat > 0 and roof > 0:
            suite = acc.setdefault(suite_of.get(r["kernel"], "other"), {})
            suite.setdefault(r["target"], {}).setdefault(r["kernel"], []).append(100 * roof / lat)
    panels: dict[str, dict[str, tuple[list[str], list[float], float]]] = {}
    for suite, targets in acc.items():
        for target, kernels in targets.items():
            names = sorted(kernels)
            values = [geomean(kernels[n]) for n in names]
            panels.setdefault(suite, {})[target] = (names, values, geomean(values))
    return panels


def roofline_bars(best, suite_of: dict[str, str], out: str) -> list[str]:
    written = []
    for suite, targets in sorted(roofline_panels(best, suite_of).items()):
        widest = max(len(names) for names, _, _ in targets.values())
        fig, axes = plt.subplots(1, len(targets), figsize=(len(targets) * max(4, 0.6 * widest + 2), 4.5),
                                 squeeze=False, sharey=True)
        for ax, (target, (names, values, geo)) in zip(axes[0], sorted(targets.items())):
            ax.bar(range(len(names)), values, color="C0")
            ax.axhline(geo, color="C3", linestyle="--", label=f"geomean {geo:.1f}%")
            ax.set_xticks(range(len(names)), names, rotation=45, ha="right", fontsize=7)
            ax.set_ylabel("% of roofline (geomean over shapes)")
            title(ax, f"suite {suite} on {target}: % of roofline ({NOTE})", width=40)
            ax.legend(fontsize=7)
        written.append(save(fig, out, f"roofline_{safe(suite)}.png"))
    return written


def save(fig, out: str, name: str) -> str:
    path = os.path.join(out, name)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description="Plot a tilesweep archive as PNGs.")
    p.add_argument("archive")
    p.add_argument("-o", "--out", required=True, help="folder for the PNGs (created if missing)")
    a = p.parse_args(argv[1:])
    try:
        meta, tables = read_archive.load(a.archive, tables=("best", "candidates"))
        suite_of = suites(meta, a.archive)
    except read_archive.BadArchive as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    written = speedup_heatmaps(tables["best"], a.out)
    written += pareto_plots(tables["candidates"], a.out)
    written += roofline_bars(tables["best"], suite_of, a.out)
    print(f"{len(written)} PNG(s) in {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
