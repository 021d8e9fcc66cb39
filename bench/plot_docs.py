#!/usr/bin/env python3
"""Draws the figures in docs/figures/ from the JSON lines in bench/results/.

    tools/plot-docs.sh            # installs python3-matplotlib if missing, then runs this
    python3 bench/plot_docs.py    # same, where matplotlib is already there

Every number drawn comes from a line of a results file; nothing is typed in here but which file
each figure pictures (SOURCES: the files the docs' current tables cite) and how lines are grouped.
Efficiencies are stated against the bench_peak file SOURCES["peak"] names (FMA throughput per core
and STREAM, measured on the machine of the lines they are paired with). A figure whose data is missing is skipped, and
this script says so on stdout; it never draws a placeholder.

The SVGs are deterministic (fixed hash salt, no date in the metadata, text drawn as paths), so
regenerating from unchanged results gives identical files and a diff in docs/figures/ means the data
changed.
"""
from __future__ import annotations

import json
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullFormatter  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
FIGURES = ROOT / "docs" / "figures"

# Which results file each figure pictures: the ones the docs' "current figures" tables cite. When a
# table moves to a new results file, change the name here and rerun.
SOURCES = {
    "peers": "peers-final-2026-11-22.jsonl",  # docs/operations.md, Against PETSc, Tpetra and CombBLAS
    "bsgemm": "bsgemm-inplace-2026-11-22.jsonl",  # docs/block_sparse.md, Measured
    "spdnn": "spdnn-2026-11-29.jsonl",  # docs/spdnn.md, Measured
    "spmm_paired": "spmm-paired-2026-11-27.jsonl",  # docs/operations.md, Against the hardware and GraphBLAS
    "spgemm_graphblas": "spgemm-graphblas-paired-2026-11-27.jsonl",  # docs/operations.md, same section
    # The bench_peak run the peak, roofline and bsgemm-efficiency figures state their lines against:
    # named, not the newest, so that a later machine's peak file is never paired with an earlier
    # machine's lines. Move it together with the "peers" and "bsgemm" files.
    "peak": "peak-2026-11-23.jsonl",
}

COLOURS = {
    "tessera": "#1f77b4",
    "PETSc": "#ff7f0e",
    "Tpetra": "#2ca02c",
    "CombBLAS": "#9467bd",
    "DBCSR": "#d62728",
    "Kokkos-Kernels": "#7f7f7f",
    "GraphBLAS": "#8c564b",
}
PEER_NAMES = {"petsc": "PETSc", "tpetra": "Tpetra", "combblas": "CombBLAS", "dbcsr": "DBCSR", "graphblas": "GraphBLAS"}

plt.rcParams.update({
    "svg.hashsalt": "tessera-docs",  # fixed ids: identical data gives an identical file
    "svg.fonttype": "path",  # glyphs as paths: the figure looks the same without the fonts
    "font.size": 9,
    "axes.titlesize": 10,
    "figure.titlesize": 11,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.fontsize": 8,
})


def read_lines(name: str) -> list[dict]:
    lines = []
    with open(RESULTS / name, encoding="utf-8") as f:
        for number, text in enumerate(f, 1):
            text = text.strip()
            if not text:
                continue
            try:
                lines.append(json.loads(text))
            except json.JSONDecodeError as e:
                sys.exit(f"{name}:{number}: not JSON ({e})")
    return lines


def pretty_matrix(name: str) -> str:
    if m := re.fullmatch(r"rmat(\d+)-ef(\d+)", name):
        return f"R-MAT {m[1]}"
    if m := re.fullmatch(r"laplacian(\d+)", name):
        return f"Laplacian {m[1]}"
    return name


def save(fig, name: str, written: list[str]) -> None:
    FIGURES.mkdir(parents=True, exist_ok=True)
    path = FIGURES / name
    # No date, and a creator that does not name matplotlib's version: the file changes only when
    # the data does.
    fig.savefig(path, format="svg", metadata={"Date": None, "Creator": "bench/plot_docs.py"})
    plt.close(fig)
    written.append(str(path.relative_to(ROOT)))
    print(f"wrote {path.relative_to(ROOT)}")


# ---------------------------------------------------------------------------------------------
# The physical peak: the bench_peak file SOURCES["peak"] names
# ---------------------------------------------------------------------------------------------
class Peak:
    """bench_peak's lines of one file: FMA peak per core and STREAM, by rank count. A file may hold
    several runs (a loaded one, a quieter one); a peak is the best of them, since load only ever
    lowers what a run measures."""

    def __init__(self, name: str, lines: list[dict]):
        self.name = name
        date = re.search(r"\d{4}-\d{2}-\d{2}", name)
        self.date = date[0] if date else name
        self.lines = [d for d in lines if d.get("bench") == "peak"]
        self.cpu = next((d["cpu"] for d in self.lines if "cpu" in d), "unknown CPU")
        self.cores = next((d["cores"] for d in self.lines if "cores" in d), None)

    def machine(self) -> str:
        return f"{self.cpu}, {self.cores} cores" if self.cores else self.cpu

    def fma_per_core(self, np: int, dtype: str = "double") -> float | None:
        """The widest SIMD width's best rate per core at np ranks (the best width if none is marked)."""
        rows = [d for d in self.lines if d["op"] == "fma" and d["type"] == dtype and d["np"] == np]
        widest = [d for d in rows if d.get("widest")]
        rows = widest or rows
        return max((d["gflops_per_core"] for d in rows), default=None)

    def fma_line(self, np: int, dtype: str = "double") -> dict | None:
        rows = [d for d in self.lines if d["op"] == "fma" and d["type"] == dtype and d["np"] == np and d.get("widest")]
        return rows[0] if rows else None

    def stream(self, np: int, op: str = "stream_triad") -> float | None:
        """Aggregate GB/s over np ranks."""
        return max((d["gb_s"] for d in self.lines if d["op"] == op and d["np"] == np), default=None)

    def load(self) -> str:
        loads = [d["load_average"] for d in self.lines if d.get("load_average", -1) >= 0]
        if not loads:
            return "load not recorded"
        return f"1-min load average {min(loads):.1f} to {max(loads):.1f}"


def named_peak() -> Peak | None:
    name = SOURCES["peak"]
    if not (RESULTS / name).exists():
        return None
    return Peak(name, read_lines(name))


# ---------------------------------------------------------------------------------------------
# (a) tessera against PETSc, Tpetra and CombBLAS
# ---------------------------------------------------------------------------------------------
def implementation(d: dict) -> str | None:
    """Who produced a line, or None for lines the comparison leaves out."""
    if d.get("skipped"):
        return None
    if d["bench"].startswith("peer_"):
        return PEER_NAMES.get(d.get("peer"), d.get("peer"))
    if d["bench"] == "spmm":
        return "tessera" if d.get("kernel", "tessera") == "tessera" else None
    if d["bench"] == "transpose":
        return "tessera" if d.get("algorithm") == "route" else None  # slots: slower by design
    if d["bench"] == "spgemm":
        return "tessera"
    return None


def operation(d: dict) -> str | None:
    bench = d["bench"].removeprefix("peer_").split("_")[-1]
    if bench == "spgemm":
        return "spgemm" if d.get("op") == "A*A" else None  # A*A^T is within a few % of A*A
    return bench if bench in ("spmm", "transpose") else None


def plot_peers(peak: Peak | None, written: list[str]) -> None:
    source = SOURCES["peers"]
    if not (RESULTS / source).exists():
        print(f"skipped peers.svg: {source} not in bench/results")
        return
    lines = read_lines(source)
    seconds: dict[tuple, dict[str, float]] = defaultdict(dict)
    ks = set()
    for d in lines:
        who, op = implementation(d), operation(d)
        if who is None or op is None or "seconds" not in d:
            continue
        if op == "spmm":
            ks.add(d["k"])
        seconds[(op, d["matrix"], d["np"])][who] = d["seconds"]
    k_text = ", ".join(str(k) for k in sorted(ks))
    titles = {"spgemm": "SpGEMM C = A·A (plus-times)", "spmm": f"SpMM Y = A·X, k = {k_text}",
              "transpose": "Transpose"}
    # Top row: the peers that run at any rank count, at the run's main count; bottom row: CombBLAS,
    # which needs a square number of ranks, beside tessera at the same counts.
    main_np = max((key[2] for key in seconds), key=lambda n: sum(1 for key in seconds if key[2] == n))
    rows = [
        [(op, f"{titles[op]}, {main_np} ranks", [key for key in seconds if key[0] == op and key[2] == main_np])
         for op in titles],
        [(op, f"{titles[op]}, against CombBLAS", [key for key in seconds if key[0] == op and key[2] != main_np])
         for op in titles],
    ]
    order = ["tessera", "PETSc", "Tpetra", "CombBLAS"]
    fig, axes = plt.subplots(2, 3, figsize=(12, 8.4), constrained_layout=True)
    legend_ax = None
    for row, row_axes in zip(rows, axes):
        for (op, title, cats), ax in zip(row, row_axes):
            if not cats:
                ax.axis("off")
                legend_ax = legend_ax or ax
                continue
            cats = sorted(cats, key=lambda key: (key[1], key[2]))
            present = [who for who in order if any(who in seconds[c] for c in cats)]
            width = 0.8 / len(present)
            for i, cat in enumerate(cats):
                base = seconds[cat].get("tessera")
                for j, who in enumerate(present):
                    if who not in seconds[cat]:
                        continue
                    x = i - 0.4 + width * (j + 0.5)
                    s = seconds[cat][who]
                    ax.bar(x, s, width, color=COLOURS[who])
                    if who != "tessera" and base:
                        # the peer's time over tessera's: above 1, tessera is faster
                        ax.annotate(f"{s / base:.1f}×", (x, s), xytext=(0, 2), textcoords="offset points",
                                    ha="center", va="bottom", fontsize=7.5)
            ax.set_xticks(range(len(cats)))
            ax.set_xticklabels([f"{pretty_matrix(c[1])}\n{c[2]} rank{'s' if c[2] > 1 else ''}" for c in cats],
                               fontsize=9 if len(cats) <= 3 else 7.5)
            ax.set_yscale("log")
            ax.set_ylabel("seconds per operation (log scale)")
            ax.set_title(title)
            lo, hi = ax.get_ylim()
            ax.set_ylim(lo, hi * 2)  # room for the ratio labels
    handles = [plt.Rectangle((0, 0), 1, 1, color=COLOURS[w]) for w in order]
    legend_text = "labels above bars: the peer's time\nover tessera's (above 1: tessera faster)"
    if legend_ax is not None:
        legend_ax.legend(handles + [plt.Rectangle((0, 0), 1, 1, color="none")], order + [legend_text],
                         loc="center", fontsize=10, frameon=False)
    else:
        axes[0][0].legend(handles, order, loc="upper left", ncol=2)
    machine = peak.machine() if peak else "the 2-core development machine"
    fig.suptitle(f"tessera against PETSc 3.18, Tpetra 13.2 and CombBLAS 1.16 on {machine}\n"
                 f"median of reps, slowest rank; lower is better ({source})")
    save(fig, "peers.svg", written)


def plot_bsgemm_dbcsr(peak: Peak | None, written: list[str]) -> None:
    source = SOURCES["bsgemm"]
    if not (RESULTS / source).exists():
        print(f"skipped bsgemm-dbcsr.svg: {source} not in bench/results")
        return
    series = bsgemm_series(read_lines(source))
    tiles = sorted({key[0] for key in series}, key=lambda t: -int(t.split("-")[0]))
    fig, axes = plt.subplots(1, len(tiles), figsize=(11, 4.4), constrained_layout=True, sharey=True)
    axes = list(axes) if len(tiles) > 1 else [axes]
    for ax, tile in zip(axes, tiles):
        for (t, who, np), points in sorted(series.items()):
            if t != tile:
                continue
            xs = sorted(points)
            ax.plot(xs, [points[x]["gflops"] for x in xs], color=COLOURS[who], marker="o" if np == 1 else "s",
                    linestyle="-" if np == 1 else "--", label=f"{who}, {np} rank{'s' if np > 1 else ''}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_xlabel("density of A and B (fraction of tiles kept; log scale)")
        ax.set_title(f"tiles of {tile} rows and columns")
        ax.legend()
    axes[0].set_ylabel("GFLOP/s of nonzero tile products, all ranks (log scale)")
    machine = peak.machine() if peak else "the 2-core development machine"
    fig.suptitle(f"Block-sparse C = A·B: tessera bsgemm (packed tiles, A read in place) against DBCSR 2.5 on "
                 f"{machine}\n(M = 1024, N = K = 4096 / sqrt(density); median of reps; {source})")
    save(fig, "bsgemm-dbcsr.svg", written)


def bsgemm_series(lines: list[dict]) -> dict[tuple, dict[float, dict]]:
    """(tile range, implementation, np) -> density -> line: tessera's headline configuration (packed
    kernel, A in place) and DBCSR, synthetic problems only (the contraction has no density axis)."""
    series: dict[tuple, dict[float, dict]] = defaultdict(dict)
    for d in lines:
        m = re.fullmatch(r"synthetic-tiles(\d+-\d+)-density([\d.]+)", d.get("matrix", ""))
        if not m:
            continue
        if d["bench"] == "bsgemm" and d.get("tile_kernel") == "packed" and d.get("a_read", "in_place") == "in_place":
            who = "tessera"
        elif d["bench"] == "peer_dbcsr_bsgemm":
            who = "DBCSR"
        else:
            continue
        series[(m[1], who, d["np"])][float(m[2])] = d
    return series


def plot_spdnn(peak: Peak | None, written: list[str]) -> None:
    source = SOURCES["spdnn"]
    if not (RESULTS / source).exists():
        print(f"skipped spdnn.svg: {source} not in bench/results")
        return
    lines = [d for d in read_lines(source) if d.get("bench") == "spdnn" and "edges_per_second" in d]
    sizes = sorted({d["neurons"] for d in lines})
    backends = [b for b in ("rma", "aggregator", "progress") if any(d.get("backend") == b for d in lines)]
    shades = {"rma": COLOURS["tessera"], "aggregator": "#6baed6", "progress": "#08306b"}
    variants = [("fused", "data")] + [(m, p) for m in ("spmm", "spgemm") for p in ("data", "model")]
    variants = [v for v in variants if any(d.get("mode") == v[0] and d.get("parallel") == v[1] for d in lines)]
    fig, axes = plt.subplots(1, len(sizes), figsize=(5.5 * len(sizes), 4.4), constrained_layout=True, squeeze=False)
    for ax, n in zip(axes[0], sizes):
        here = [b for b in backends if any(d.get("backend") == b and d["neurons"] == n for d in lines)]
        width = 0.8 / len(here)
        for i, (mode, parallel) in enumerate(variants):
            for j, backend in enumerate(here):
                row = next((d for d in lines if d["neurons"] == n and d.get("mode") == mode and
                            d.get("parallel") == parallel and d.get("backend") == backend and "peer" not in d), None)
                if row:
                    ax.bar(i - 0.4 + width * (j + 0.5), row["edges_per_second"] / 1e9, width, color=shades[backend],
                           label=f"tessera, {row['np']} ranks, backend {backend}" if i == 0 else None)
        peers = [d for d in lines if d["neurons"] == n and "peer" in d]
        for d in peers:
            name = PEER_NAMES.get(d["peer"], d["peer"])
            ax.bar(len(variants), d["edges_per_second"] / 1e9, width, color=COLOURS.get(name, "black"),
                   label=f"{name}, {d.get('threads', '?')} threads")
        ax.set_xticks(range(len(variants) + (1 if peers else 0)))
        peer_labels = [f"{PEER_NAMES.get(d['peer'], d['peer'])}\n{d.get('threads', '?')} threads" for d in peers[:1]]
        ax.set_xticklabels([f"{m}\n{p}-parallel" for m, p in variants] + peer_labels, fontsize=7.5)
        ax.set_ylabel("10⁹ edges per second (challenge formula)")
        layers = next((d["layers"] for d in lines if d["neurons"] == n), "?")
        inputs = next((d["inputs"] for d in lines if d["neurons"] == n), "?")
        ax.set_title(f"N = {n} neurons, L = {layers} layers, {inputs} inputs")
        ax.legend(loc="upper right", fontsize=7.5)
    # The lines' own machine and date where they carry them (the peak file may be another day's machine).
    machine = next((d["machine"] for d in lines if "machine" in d), None) or (peak.machine() if peak else "the 2-core development machine")
    date = next((d["date"] for d in lines if "date" in d), None)
    fig.suptitle(f"Sparse DNN inference (Graph Challenge): inference only, higher is better\n"
                 f"{machine}{', ' + date if date else ''}\n({source})")
    save(fig, "spdnn.svg", written)


# ---------------------------------------------------------------------------------------------
# (b) SpMM against the memory roof
# ---------------------------------------------------------------------------------------------
def plot_spmm_roofline(peak: Peak | None, written: list[str]) -> None:
    source = SOURCES["peers"]
    if peak is None:
        print(f"skipped spmm-roofline.svg: {SOURCES['peak']} not in bench/results (run bench_peak)")
        return
    if not (RESULTS / source).exists():
        print(f"skipped spmm-roofline.svg: {source} not in bench/results")
        return
    lines = read_lines(source)
    # The bytes an SpMM must move (bytes_min: A's CSR, the rows of X its columns name, all of Y) are a
    # property of the problem, so the peers' lines on the same matrix, k and np share tessera's.
    bytes_min = {(d["matrix"], d["k"], d["np"]): d["bytes_min"] for d in lines
                 if d["bench"] == "spmm" and "bytes_min" in d}
    points = []  # (who, matrix, np, intensity, gflops)
    for d in lines:
        if not d["bench"].endswith("spmm") or d.get("skipped"):
            continue
        who = ("Kokkos-Kernels" if d.get("kernel") == "kokkos_kernels" else "tessera") if d["bench"] == "spmm" \
            else PEER_NAMES.get(d.get("peer"), d.get("peer"))
        key = (d["matrix"], d["k"], d["np"])
        if key not in bytes_min:
            continue
        flops = 2.0 * d["nnz"] * d["k"]
        points.append((who, d["matrix"], d["np"], flops / bytes_min[key], flops / d["seconds"] / 1e9))
    nps = sorted({p[2] for p in points})
    if len(nps) != 1:
        print(f"note: spmm-roofline.svg draws rank counts {nps} against the roofs of {nps[0]} ranks")
    np = nps[0]
    bandwidth = peak.stream(np)
    compute = peak.fma_per_core(np)
    if bandwidth is None or compute is None:
        print(f"skipped spmm-roofline.svg: {peak.name} has no STREAM or FMA line at {np} ranks")
        return
    compute *= np
    # A peak measured under load only underestimates the machine, so the roof is the highest STREAM
    # triad on record at these ranks: bench_peak's, or the one the SpMM run measured beside itself.
    roofs = [(bandwidth, f"STREAM triad, bench_peak {peak.date}")]
    same_run = next((d for d in lines if d["bench"] == "stream" and d["np"] == np), None)
    if same_run:
        roofs.append((same_run["gbs"], "STREAM triad measured in the SpMM run"))
    roofs.sort(reverse=True)
    bandwidth = roofs[0][0]

    fig, ax = plt.subplots(figsize=(8, 5.6), constrained_layout=True)
    # from below the lowest intensity to past the ridge point (where the two roofs meet)
    x_lo = min(0.05, min(p[3] for p in points) / 4)
    x_hi = max(4 * compute / roofs[-1][0], 10)
    xs = [x_lo * (x_hi / x_lo) ** (i / 200) for i in range(201)]
    for i, (gbs, what) in enumerate(roofs):
        ax.plot(xs, [min(x * gbs, compute) for x in xs], color="black" if i == 0 else "grey",
                linewidth=1.6 if i == 0 else 0.9, linestyle="-" if i == 0 else "--",
                label=f"{'roof: ' if i == 0 else ''}{what}: {gbs:.1f} GB/s")
    ax.axhline(compute, color="black", linewidth=0.6, linestyle=(0, (1, 3)),
               label=f"FMA peak (double, {np} cores, bench_peak {peak.date}): {compute:.0f} GFLOP/s")
    markers = {}
    for who, matrix, _, intensity, gflops in sorted(points):
        marker = markers.setdefault(matrix, "osD^v"[len(markers) % 5])
        ax.plot(intensity, gflops, marker=marker, color=COLOURS[who], markersize=8, linestyle="none",
                markeredgecolor="black", markeredgewidth=0.5)
        if who == "tessera":
            fraction = gflops / min(intensity * bandwidth, compute)
            ax.annotate(f"{pretty_matrix(matrix)}: {fraction:.2f} of the roof", (intensity, gflops),
                        xytext=(8, 0), textcoords="offset points", va="center", fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(xs[0], xs[-1])
    ax.set_ylim(0.1, compute * 3)
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlabel("arithmetic intensity: 2·nnz·k flops / minimum bytes moved (flop/byte, log scale)")
    ax.set_ylabel(f"GFLOP/s, {np} ranks together (log scale)")
    who_handles = [Line2D([], [], color=COLOURS[w], marker="o", linestyle="none", markeredgecolor="black",
                          markeredgewidth=0.5, label=w) for w in COLOURS if any(p[0] == w for p in points)]
    matrix_handles = [Line2D([], [], color="white", marker=m, linestyle="none", markeredgecolor="black",
                             label=pretty_matrix(name)) for name, m in markers.items()]
    first = ax.legend(loc="upper left", fontsize=7.5)
    ax.add_artist(first)
    ax.legend(handles=who_handles + matrix_handles, loc="lower right", ncol=2)
    k_values = sorted({d["k"] for d in lines if d["bench"] == "spmm"})
    ax.set_title(f"SpMM Y = A·X (k = {', '.join(map(str, k_values))}), {np} ranks, {peak.machine()}:\n"
                 f"roofline from STREAM and the FMA peak (bench_peak, {peak.date}, {peak.load()})\n"
                 f"SpMM lines: {source}; labels: tessera's GFLOP/s over the roof at its intensity", fontsize=9)
    save(fig, "spmm-roofline.svg", written)


# ---------------------------------------------------------------------------------------------
# (c) bsgemm efficiency against one-core DGEMM and against the FMA peak
# ---------------------------------------------------------------------------------------------
def plot_bsgemm_efficiency(peak: Peak | None, written: list[str]) -> None:
    source = SOURCES["bsgemm"]
    if peak is None:
        print(f"skipped bsgemm-efficiency.svg: {SOURCES['peak']} not in bench/results (run bench_peak)")
        return
    if not (RESULTS / source).exists():
        print(f"skipped bsgemm-efficiency.svg: {source} not in bench/results")
        return
    lines = read_lines(source)
    series = bsgemm_series(lines)
    dgemm = defaultdict(list)  # np -> one-core DGEMM GFLOP/s of every reference run in the file
    for d in lines:
        if d["bench"] == "dgemm_reference":
            dgemm[d["np"]].append(d["gflops_per_core"])
    fig = plt.figure(figsize=(12, 7), constrained_layout=True)
    grid = fig.add_gridspec(2, 2, height_ratios=[4, 1.1])
    left = fig.add_subplot(grid[0, 0])
    right = fig.add_subplot(grid[0, 1], sharex=left)
    legend_ax = fig.add_subplot(grid[1, :])
    legend_ax.axis("off")
    styles = {"128-512": "-", "32-128": "--"}
    top = 105.0
    handles = []
    for (tile, who, np), points in sorted(series.items(), key=lambda item: (item[0][1] != "tessera", item[0])):
        xs = sorted(points)
        fma = peak.fma_per_core(np)
        if not fma:
            print(f"note: {peak.name} has no FMA line at {np} ranks; the right panel leaves out {who} {tile} np {np}")

        # tessera's lines carry the median of paired ratios to a one-core DGEMM run just before each
        # product; DBCSR's do not, so theirs is taken against the median of the file's DGEMM runs at np.
        def against_dgemm(d: dict) -> float | None:
            if "efficiency" in d:
                return d["efficiency"]
            return d["gflops"] / (np * statistics.median(dgemm[np])) if dgemm[np] else None

        style = dict(color=COLOURS[who] if np == 1 else darker(COLOURS[who]), linestyle=styles.get(tile, "-"),
                     marker="o" if np == 1 else "s", label=f"{who}, tiles {tile}, {np} rank{'s' if np > 1 else ''}")
        ys = [against_dgemm(points[x]) for x in xs]
        if all(y is not None for y in ys):
            handles += left.plot(xs, [100 * y for y in ys], **style)
        if fma:
            ys = [100 * points[x]["gflops"] / (np * fma) for x in xs]
            line = right.plot(xs, ys, **style)
            if not handles or handles[-1].get_label() != style["label"]:
                handles += line
            top = max(top, max(ys) + 5)
    handles.append(left.axhline(80, color="black", linewidth=0.8, linestyle=":",
                                label="target: 80% of one-core DGEMM × ranks (tiles ≥ 128)"))
    for np in sorted(dgemm):
        fma = peak.fma_per_core(np)
        if fma:
            handles.append(right.axhline(100 * statistics.median(dgemm[np]) / fma, color="black", linewidth=0.8,
                                         linestyle="--" if np == 1 else "-.",
                                         label=f"one-core DGEMM (OpenBLAS), {np} rank{'s' if np > 1 else ''} at once: "
                                               f"median {statistics.median(dgemm[np]):.0f} GFLOP/s"))
    for ax in (left, right):
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("density of A and B (fraction of tiles kept; log scale)")
        ax.set_ylim(0, top)
    left.set_ylabel("% of one-core DGEMM × ranks")
    left.set_title("against one-core DGEMM × ranks (the tables' measure)")
    fma_text = ", ".join(f"{n} rank{'s' if n > 1 else ''}: {peak.fma_per_core(n):.1f}"
                         for n in sorted({k[2] for k in series}) if peak.fma_per_core(n))
    widest = peak.fma_line(1) or {}
    right.set_ylabel("% of FMA peak per core × ranks")
    right.set_title("against the FMA peak per core × ranks")
    legend_ax.legend(handles=handles, loc="center", ncol=3, fontsize=8, frameon=False)
    fig.suptitle(f"bsgemm efficiency, {peak.machine()}: GFLOP/s of nonzero tile products over a measured peak\n"
                 f"FMA peak per core (double, {widest.get('simd_bits', '?')}-bit SIMD): {fma_text} GFLOP/s, "
                 f"bench_peak {peak.date} ({peak.load()})\nbsgemm, DBCSR and DGEMM lines: {source}")
    save(fig, "bsgemm-efficiency.svg", written)


def darker(colour: str) -> str:
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return "#{:02x}{:02x}{:02x}".format(*(int(c * 0.6) for c in (r, g, b)))


# ---------------------------------------------------------------------------------------------
# The peak itself
# ---------------------------------------------------------------------------------------------
def plot_peak(peak: Peak | None, written: list[str]) -> None:
    if peak is None:
        print(f"skipped peak.svg: {SOURCES['peak']} not in bench/results (run bench_peak)")
        return
    fma = [d for d in peak.lines if d["op"] == "fma"]
    stream = [d for d in peak.lines if d["op"].startswith("stream_")]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.4), constrained_layout=True,
                                      gridspec_kw={"width_ratios": [2, 1]})
    # narrowest first; the order of the widths is the order of their lanes in double
    simd_names = [name for _, name in sorted({(d["lanes"], d["simd"]) for d in fma if d["type"] == "double"})]
    groups = [(t, np) for t in ("double", "float") for np in sorted({d["np"] for d in fma})]
    width = 0.8 / max(1, len(groups))
    shades = {"double": "#1f77b4", "float": "#17becf"}
    for j, (dtype, np) in enumerate(groups):
        for i, name in enumerate(simd_names):
            rows = [d for d in fma if d["type"] == dtype and d["np"] == np and d["simd"] == name]
            if not rows:
                continue
            row = max(rows, key=lambda d: d["gflops_per_core"])  # several runs in a file: the peak is the best
            x = i - 0.4 + width * (j + 0.5)
            left.bar(x, row["gflops_per_core"], width, color=shades[dtype], alpha=1.0 if np == 1 else 0.55,
                     edgecolor="black", linewidth=0.4)
            left.annotate(f"{row['gflops_per_core']:.0f}", (x, row["gflops_per_core"]), xytext=(0, 2),
                          textcoords="offset points", ha="center", fontsize=7)
    labels = []
    for name in simd_names:
        bits = next(d["simd_bits"] for d in fma if d["simd"] == name and d["type"] == "double")
        labels.append(f"{name}\n({bits} bits)" if name != "scalar" else "scalar\n(1 lane)")
    left.set_xticks(range(len(simd_names)))
    left.set_xticklabels(labels)
    left.set_ylabel("GFLOP/s per core (FMA = 2 flops)")
    acc = fma[0]["accumulators"] if fma else "?"
    reps = fma[0]["reps"] if fma else "?"
    left.set_title(f"register-resident FMA loop, {acc} independent accumulators, best of {reps}")
    left.legend(handles=[plt.Rectangle((0, 0), 1, 1, color=shades[t], alpha=1.0 if np == 1 else 0.55)
                         for t, np in groups],
                labels=[f"{t}, {np} rank{'s' if np > 1 else ''} at once" for t, np in groups], loc="upper left")
    ops = sorted({d["op"] for d in stream}, reverse=True)
    stream_nps = sorted({d["np"] for d in stream})
    width = 0.8 / max(1, len(stream_nps))
    for j, np in enumerate(stream_nps):
        for i, op in enumerate(ops):
            rows = [d for d in stream if d["op"] == op and d["np"] == np]
            if not rows:
                continue
            row = max(rows, key=lambda d: d["gb_s"])
            x = i - 0.4 + width * (j + 0.5)
            right.bar(x, row["gb_s"], width, color="#8c564b", alpha=1.0 if np == 1 else 0.55, edgecolor="black",
                      linewidth=0.4, label=f"{np} rank{'s' if np > 1 else ''}, all ranks together" if i == 0 else None)
            right.annotate(f"{row['gb_s']:.1f}", (x, row["gb_s"]), xytext=(0, 2), textcoords="offset points",
                           ha="center", fontsize=7)
    right.set_xticks(range(len(ops)))
    right.set_xticklabels([op.removeprefix("stream_") for op in ops])
    right.set_ylabel("GB/s (STREAM's byte count)")
    n = stream[0]["n"] if stream else 0
    right.set_title(f"STREAM, {n * 8 / 2**20:.0f} MiB per array, best of {stream[0]['reps'] if stream else '?'}")
    right.legend(loc="upper left")
    for ax in (left, right):
        lo, hi = ax.get_ylim()
        ax.set_ylim(0, hi * 1.12)
    fig.suptitle(f"Physical peaks of {peak.machine()}: bench_peak, {peak.date} ({peak.load()}; {peak.name})")
    save(fig, "peak.svg", written)


# ---------------------------------------------------------------------------------------------
# (d) threads against ranks
# ---------------------------------------------------------------------------------------------
def plot_thread_rank_scaling(peak: Peak | None, written: list[str]) -> None:
    """Same tessera benchmark and input at several (ranks, threads per rank), from the runs of
    bench/run_threads.sh (threads-*.jsonl: 1 rank x T threads and T ranks x 1 thread alternated in
    one run, on one machine), one panel per run and input. Lines of other files are left out: a
    GPU machine's host threads or another day's machine would mix into one curve. Peers' lines
    (GraphBLAS's threads) are not tessera's scaling either."""
    groups: dict[tuple, dict[tuple[int, int], list[float]]] = defaultdict(dict)
    sources = set()
    for path in sorted(RESULTS.glob("threads-*.jsonl")):
        for d in read_lines(path.name):
            if "threads" not in d or "peer" in d or d["bench"].startswith("peer_") or "seconds" not in d or "variant" in d:
                continue
            what = (path.stem, d["bench"], d.get("op") or d.get("mode") or "",
                    str(d.get("matrix") or d.get("neurons") or ""), d.get("backend", ""))
            groups[what].setdefault((d["np"], d["threads"]), []).append(d["seconds"])
            sources.add(path.name)
    # A run's rounds: the low median, a value one of its lines holds.
    groups = {k: {p: statistics.median_low(s) for p, s in v.items()} for k, v in groups.items()
              if len(v) >= 2 and any(t > 1 for _, t in v)}
    if not groups:
        print("skipped scaling-threads-ranks.svg: no results line of a tessera benchmark carries a "
              "\"threads\" field with more than one thread per rank (Kokkos runs Serial in every run so far); "
              "nothing to draw")
        return
    fig, axes = plt.subplots(1, len(groups), figsize=(5 * len(groups), 4.2), constrained_layout=True, squeeze=False)
    for ax, (what, runs) in zip(axes[0], sorted(groups.items())):
        ranks = sorted((np, t) for np, t in runs if t == 1)
        threads = sorted((np, t) for np, t in runs if np == 1)
        mixed = sorted((np, t) for np, t in runs if np > 1 and t > 1)
        for label, points, marker in (("ranks × 1 thread", ranks, "o"), ("1 rank × threads", threads, "s"),
                                      ("ranks × threads", mixed, "^")):
            if points:
                ax.plot([np * t for np, t in points], [runs[p] for p in points], marker=marker, label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("cores used: ranks × threads per rank (log scale)")
        ax.set_ylabel("seconds (log scale)")
        ax.set_title(" ".join(x for x in what if x))
        ax.legend()
    machine = peak.machine() if peak else "this machine"
    fig.suptitle(f"Threads against ranks on {machine} ({', '.join(sorted(sources))})")
    save(fig, "scaling-threads-ranks.svg", written)


# ---------------------------------------------------------------------------------------------
# Paired runs: a commit before a change and the one after, in the same run, with the physical
# bound (STREAM) or the peer measured beside them
# ---------------------------------------------------------------------------------------------
def paired_lines(figure: str, key: str) -> tuple[str, list[dict], dict[str, str]] | None:
    """The paired results file SOURCES[key] names: its name, lines and the commit of each pair."""
    source = SOURCES[key]
    if not (RESULTS / source).exists():
        print(f"skipped {figure}: {source} not in bench/results")
        return None
    lines = read_lines(source)
    return source, lines, {d["pair"]: d["commit"] for d in lines if "pair" in d and "commit" in d}


def paired_caption(lines: list[dict], source: str) -> str:
    """The machine, the rounds and the file: the last lines of a paired figure's title."""
    machine = next((d["machine"] for d in lines if "machine" in d), "")
    rounds = len({d["round"] for d in lines if "round" in d})
    return f"{machine}\nmedian of {rounds} paired rounds ({source})"


def matrix_order(name: str) -> tuple:
    """Laplacians first, then R-MAT, each by size."""
    size = re.search(r"(\d+)", name)
    return (not name.startswith("laplacian"), int(size[1]) if size else 0, name)


def plot_spmm_bandwidth(written: list[str]) -> None:
    if (paired := paired_lines("spmm-bandwidth.svg", "spmm_paired")) is None:
        return
    source, lines, commits = paired
    fractions = defaultdict(list)  # (pair, matrix, k) -> bandwidth_fraction of each round
    for d in lines:
        if d["bench"] == "spmm" and d.get("kernel") == "tessera" and "bandwidth_fraction" in d:
            fractions[(d["pair"], d["matrix"], d["k"])].append(d["bandwidth_fraction"])
    streams = [d["gbs"] for d in lines if d["bench"] == "stream"]
    if not fractions or not streams:
        print(f"skipped spmm-bandwidth.svg: {source} has no SpMM lines with bandwidth_fraction, or no STREAM line")
        return
    matrices = sorted({m for _, m, _ in fractions}, key=matrix_order)
    ks = sorted({k for _, _, k in fractions})
    fig, axes = plt.subplots(1, len(matrices), figsize=(2.6 * len(matrices) + 1, 4), sharey=True,
                             constrained_layout=True)
    for ax, matrix in zip(axes, matrices):
        for i, pair in enumerate(("old", "new")):
            values = [statistics.median(fractions[(pair, matrix, k)]) if fractions[(pair, matrix, k)] else 0 for k in ks]
            xs = [j + (i - 0.5) * 0.38 for j in range(len(ks))]
            bars = ax.bar(xs, values, width=0.38, color=COLOURS["tessera"], alpha=0.45 if pair == "old" else 1.0,
                          edgecolor="black", linewidth=0.4, label=f"{'before' if pair == 'old' else 'after'} ({commits.get(pair, '?')})")
            for bar, v in zip(bars, values):
                ax.annotate(f"{v:.2f}", (bar.get_x() + bar.get_width() / 2, v), xytext=(0, 2), textcoords="offset points",
                            ha="center", fontsize=7)
        ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
        ax.set_xticks(range(len(ks)), [f"k = {k}" for k in ks])
        ax.set_title(pretty_matrix(matrix))
        ax.grid(axis="x", visible=False)
    axes[0].set_ylabel("bytes_min / seconds / STREAM triad (1 = the bound)")
    axes[-1].legend(loc="upper right")
    fig.suptitle(f"tessera SpMM Y = A·X against the memory-bandwidth bound (STREAM triad {min(streams):.1f}-"
                 f"{max(streams):.1f} GB/s, measured in each round), before and after the register rows\n"
                 f"{paired_caption(lines, source)}", fontsize=9)
    save(fig, "spmm-bandwidth.svg", written)


def plot_spgemm_graphblas(written: list[str]) -> None:
    if (paired := paired_lines("spgemm-graphblas.svg", "spgemm_graphblas")) is None:
        return
    source, lines, commits = paired
    seconds = defaultdict(list)  # (pair, matrix, op) -> seconds of each round
    for d in lines:
        if "pair" in d and "seconds" in d and "op" in d:
            seconds[(d["pair"], d["matrix"], d["op"])].append(d["seconds"])
    products = sorted({(m, op) for _, m, op in seconds}, key=lambda p: (matrix_order(p[0]), p[1]))
    series = [("old", f"tessera before ({commits.get('old', '?')}), 2 ranks", COLOURS["tessera"], 0.45),
              ("new", f"tessera ({commits.get('new', '?')}), 2 ranks", COLOURS["tessera"], 1.0),
              ("graphblas2", "GraphBLAS, 1 rank x 2 threads", COLOURS["GraphBLAS"], 1.0),
              ("graphblas1", "GraphBLAS, 1 rank x 1 thread", COLOURS["GraphBLAS"], 0.45)]
    if not products:
        print(f"skipped spgemm-graphblas.svg: {source} has no paired lines")
        return
    fig, ax = plt.subplots(figsize=(8.5, 4.2), constrained_layout=True)
    width = 0.8 / len(series)
    for i, (pair, label, colour, alpha) in enumerate(series):
        values = [statistics.median(seconds[(pair, m, op)]) if seconds[(pair, m, op)] else float("nan") for m, op in products]
        xs = [j + (i - (len(series) - 1) / 2) * width for j in range(len(products))]
        ax.bar(xs, values, width=width, color=colour, alpha=alpha, edgecolor="black", linewidth=0.4, label=label)
    for j, (m, op) in enumerate(products):
        new, gb = seconds[("new", m, op)], seconds[("graphblas2", m, op)]
        if new and gb:
            ax.annotate(f"{statistics.median(gb) / statistics.median(new):.1f}x", (j, statistics.median(gb)),
                        xytext=(0, 4), textcoords="offset points", ha="center", fontsize=8)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xticks(range(len(products)), [f"{pretty_matrix(m)}\n{op.replace('At', 'Aᵀ').replace('*', '·')}" for m, op in products])
    ax.set_ylabel("seconds per product (log scale)")
    ax.grid(axis="x", visible=False)
    ax.set_ylim(top=max(max(v) for v in seconds.values()) * 8)  # room for the legend above the bars
    ax.legend(loc="upper left", fontsize=7.5, ncol=2)
    fig.suptitle(f"SpGEMM C = A·B (plus-times) against SuiteSparse:GraphBLAS, same checksum everywhere; labels: "
                 f"GraphBLAS (2 threads) over tessera\n{paired_caption(lines, source)}", fontsize=8)
    save(fig, "spgemm-graphblas.svg", written)


def main() -> int:
    peak = named_peak()
    if peak is None:
        print(f"note: {SOURCES['peak']} not in bench/results: the figures stated against the physical peak are skipped")
    else:
        print(f"physical peak from {peak.name}: {peak.machine()}, {peak.load()}")
    written: list[str] = []
    plot_peak(peak, written)
    plot_peers(peak, written)
    plot_bsgemm_dbcsr(peak, written)
    plot_spdnn(peak, written)
    plot_spmm_roofline(peak, written)
    plot_bsgemm_efficiency(peak, written)
    plot_thread_rank_scaling(peak, written)
    plot_spmm_bandwidth(written)
    plot_spgemm_graphblas(written)
    print(f"{len(written)} figures in {FIGURES.relative_to(ROOT)}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
