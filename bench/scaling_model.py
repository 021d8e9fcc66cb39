#!/usr/bin/env python3
"""The communication model of tessera's distributed operations, projected to 16,384 ranks.

    python3 bench/scaling_model.py --out bench/results/scaling-projection.jsonl \\
                                   --svg docs/figures/scaling-projection.svg
    python3 bench/scaling_model.py --check bench/results/grid-2026-11-25.jsonl

Bytes are counted as the library's counters count them: an entry moved by a personalised exchange
is 24 bytes (row 8, column 8, value 8), and every such exchange also costs each rank P - 1 size
messages of 8 bytes (comm/personalised_exchange.hpp); a rank's records to itself are not counted.
The 1-D products fetch one-sided and count what they get (8 bytes per row pointer, 16 per entry of
B; 8 k per row of X). Every figure is an average over ranks (total / P). docs/scaling.md has the
derivations; tests/mpi/test_grid_operations.cpp checks the exact, per-entry form of the grid
formulas against the counters.

The structural inputs (nnz(A), nnz(A*A), flops, how many columns a rank's share names) are computed,
not assumed: for the Laplacian by counting the stencil, for R-MAT by summing over vertex classes
under the Poisson approximation (the m edges fall independently with R-MAT's probabilities). At
scales 14 and 16 this reproduces the measured nnz(A) and nnz(A*A) within 1% and the 1-D SpGEMM's
bytes within 0.1% (run --check on bench/results/peers-final-2026-11-22.jsonl).

nnz(A*A) and the 3-D product's partial C are expectations over R-MAT instances (seeds). Their means
over seeds 1-10 at scales 14 and 15 are within 0.2% (nnz(A*A)) and 0.4% (partial C, 2 layers) of
the model, but one instance varies about them (standard deviations 0.35% and 0.5-0.7%: a few hubs
carry most paths, and which layer and grid position each falls in is the instance's), and so does
the share of partial C computed on its owner (1/P on average). One 3-D run is therefore within
about 1.7% of the model, not 0.3%: --check gave 0.983 to 1.014 over 33 runs at 4 ranks (scales
14-16, 2 and 4 layers), whose counters equal the exact per-entry count to the byte.

No dependencies: the SVG is written by hand and is deterministic (same model, same file).
"""
from __future__ import annotations

import argparse
import functools
import json
import math
import re
import sys
from math import comb, expm1, log
from pathlib import Path

ENTRY = 24  # row index, column index, value
PIECE_ENTRY = 16  # the grid SpGEMM's pieces of A and B: 32-bit row and column (n < 2^32), value
INDEX = 8
SIZE_MESSAGE = 8
RANKS = [4**e for e in range(1, 8)]  # 4 ... 16,384: all perfect squares, so grids are square
SPMM_K = 32  # bench_spmm's k in the measured runs


def touched(lam: float) -> float:
    """Probability that a Poisson count of mean lam is not zero."""
    return -expm1(-lam)


def no_path(a: float, b: float, layers: int) -> float:
    """-log(1 - x / c), x = touched(a) touched(b) the probability that two entries (edge counts of
    means a and b) are both there: one path's share of L, where exp(-L) is the probability that a
    given one of c layers (each inner index in it with probability 1/c) holds none of the paths."""
    x = touched(a) * touched(b)
    if layers > 1 or x < 0.5:
        return -math.log1p(-x / layers)
    miss = math.exp(-a) + math.exp(-b) - math.exp(-a - b)  # 1 - x without cancellation
    return -log(miss) if miss > 0 else 745.0  # exp(-745) is 0 in doubles: the entry is certain


def squarest(ranks: int) -> tuple[int, int]:
    """process_grid::squarest: p x q = ranks, p <= q, p as close to sqrt(ranks) as divides."""
    p = max(int(math.isqrt(ranks)), 1)
    while p > 1 and ranks % p:
        p -= 1
    return p, ranks // p


def spread(items: float, ranks: int) -> float:
    """Other ranks reached by `items` records sent to uniformly random ranks (a message each)."""
    return (ranks - 1) * touched(items / ranks) if ranks > 1 else 0.0


# ---------------------------------------------------------------------------------------------
# The two inputs
# ---------------------------------------------------------------------------------------------
class Rmat:
    """generators/rmat.hpp: 2^scale vertices, edge_factor * 2^scale edges, a = 0.57, b = c = 0.19,
    duplicates summed into one entry, vertices relabelled by a bijection.

    A vertex's expected degrees depend only on the number t of one bits of its R-MAT label, and an
    entry's probability on how many bit positions are (0,0), (0,1), (1,0), (1,1) in (row, column):
    sums over these classes stand for sums over 2^scale vertices and 4^scale entries. The
    relabelling spreads every class uniformly over any contiguous split, so a rank's share of rows
    (or of the inner dimension) is a random sample."""

    def __init__(self, scale: int, edge_factor: int = 16, a: float = 0.57, b: float = 0.19, c: float = 0.19):
        self.name, self.s = f"rmat{scale}-ef{edge_factor}", scale
        self.n, self.m = 2**scale, edge_factor * 2**scale
        self.p = (a, b, c, 1 - a - b - c)  # (0,0) (0,1) (1,0) (1,1)
        s, (a, b, c, d) = scale, self.p

        def line(t, z0, z1, o0, o1):
            """Expected entries of the row (or column) of a vertex with t one bits: over the other
            index, x ones where the vertex has a 0 (probability z1 each, else z0), y where it has
            a 1 (o1, else o0); an entry exists when at least one of the m edges lands on it."""
            return sum(comb(s - t, x) * comb(t, y) * touched(self.m * z0 ** (s - t - x) * z1**x * o0 ** (t - y) * o1**y)
                       for x in range(s - t + 1) for y in range(t + 1))

        self._paths: dict[int, list[tuple[int, float]]] = {}
        self.count = [comb(s, t) for t in range(s + 1)]  # vertices with t one bits
        self.row = [line(t, a, b, c, d) for t in range(s + 1)]
        self.col = [line(t, a, c, b, d) for t in range(s + 1)]
        self.nnz = sum(k * self._prob(cls) for k, cls in self._pairs())
        self.flops = sum(k * r * c for k, r, c in zip(self.count, self.row, self.col))

    def _pairs(self):
        """(number of entries, class) for every class of (row, column) bit patterns."""
        s = self.s
        for n00 in range(s + 1):
            for n01 in range(s + 1 - n00):
                for n10 in range(s + 1 - n00 - n01):
                    cls = (n00, n01, n10, s - n00 - n01 - n10)
                    yield math.factorial(s) // math.prod(math.factorial(x) for x in cls), cls

    def _prob(self, cls) -> float:
        return touched(self.m * math.prod(p**x for p, x in zip(self.p, cls)))

    def paths(self, layers: int = 1) -> list[tuple[int, float]]:
        """Per entry class of A*A: (entries in the class, L) with L = sum over inner indices k of
        -log(1 - a_ik a_kj / c), a_ik = P(A(i,k) != 0): an entry has no path i -> k -> j among the
        inner indices of one of c layers (each k in it with probability 1/c, entries independent)
        with probability exp(-L). k's bits are chosen independently inside each of the four kinds
        of position of (i, j). The Poisson form L = sum a_ik a_kj / c (expected paths) misses the
        terms of order 2 and up of -log(1 - x): small for most entries, but an R-MAT hub gives
        a_ik a_kj near 1, where it undercounted: nnz(C) by 0.6-0.9% and the 2-layer partial C by
        0.4-0.9% against the means over seeds at scales 14-16 (now 0.1-0.2% and 0.1-0.4%)."""
        if layers in self._paths:
            return self._paths[layers]
        lp = [log(x) for x in self.p]
        out = []
        for count, (n00, n01, n10, n11) in self._pairs():
            total = 0.0
            for x00 in range(n00 + 1):  # x_ij: positions of kind (i bit, j bit) where k's bit is 1
                for x01 in range(n01 + 1):
                    for x10 in range(n10 + 1):
                        w = comb(n00, x00) * comb(n01, x01) * comb(n10, x10)
                        for x11 in range(n11 + 1):
                            ik = (n00 - x00 + n01 - x01, x00 + x01, n10 - x10 + n11 - x11, x10 + x11)  # (i bit, k bit)
                            kj = (n00 - x00 + n10 - x10, n01 - x01 + n11 - x11, x00 + x10, x01 + x11)  # (k bit, j bit)
                            a = self.m * math.exp(sum(x * l for x, l in zip(ik, lp)))
                            b = self.m * math.exp(sum(x * l for x, l in zip(kj, lp)))
                            total += w * comb(n11, x11) * no_path(a, b, layers)
            out.append((count, total))
        self._paths[layers] = out
        return out

    @functools.cached_property
    def nnz_c(self) -> float:
        return self.partial_c(1)

    def partial_c(self, layers: int) -> float:
        """sum over layers of nnz(A(:, K_l) * B(K_l, :)), K_l a random 1/c of the inner indices."""
        return sum(count * layers * touched(total) for count, total in self.paths(layers))

    def named(self, degrees: list[float], share: float) -> float:
        """Expected rows (or columns, by `degrees`) with at least one entry in a random `share` of
        the other dimension: a line of d entries misses it with probability exp(-d share)."""
        return sum(k * touched(d * share) for k, d in zip(self.count, degrees))

    def fetch_1d(self, ranks: int) -> tuple[float, float, float]:
        """Per rank under row_block: rows of B named by its columns and owned elsewhere, their
        entries, and the runs of consecutive such rows (a run ends where the next row is not needed)."""
        remote = 1 - 1 / ranks
        rows = remote * self.named(self.col, 1 / ranks)
        entries = remote * sum(k * touched(c / ranks) * r for k, c, r in zip(self.count, self.col, self.row))
        fraction = rows / (self.n * remote) if remote else 0.0
        return rows, entries, rows * (1 - fraction)

    def owners_1d(self, ranks: int) -> float:
        return spread(self.fetch_1d(ranks)[0], ranks)

    def touch_2d(self, p: int, q: int) -> tuple[float, float]:
        """Per rank of a p x q grid: columns its entries name (of its n/q), rows they touch (of its n/p)."""
        return self.named(self.col, 1 / p) / q, self.named(self.row, 1 / q) / p

    def moved_transpose_1d(self, ranks: int) -> float:
        return self.nnz / ranks * (1 - 1 / ranks)

    def moved_transpose_2d(self, p: int, q: int) -> float:
        # Rank (r, s) sends to (s, r) of the q x p grid; it keeps its entries where that is itself.
        stay = sum(r * q + s == s * p + r for r in range(p) for s in range(q))
        return self.nnz / (p * q) * (1 - stay / (p * q))

    def inputs(self) -> dict:
        return {"n": self.n, "nnz_a": round(self.nnz), "nnz_c": round(self.nnz_c), "flops": round(self.flops),
                "source": "R-MAT class sums, entries independent (checked against measured nnz_out at scales 14 to 16)"}


class Laplacian:
    """generators/laplacian.hpp: the 5-point stencil on an N x N grid, rows in grid order, n = N^2,
    on block_cyclic_2d with b x b blocks (the default 64). Counted from the stencil; terms of
    relative size 1/N (the grid's edges) are dropped where noted."""

    def __init__(self, side: int, block: int = 64):
        N = side
        self.name, self.N, self.n, self.block = f"laplacian{N}", N, N * N, block
        self.nnz = N * N + 4 * N * (N - 1)
        # A*A is the 13-point stencil: offsets with |dx| + |dy| <= 2, no cancellation.
        self.nnz_c = N * N + 4 * N * (N - 1) + 4 * N * (N - 2) + 4 * (N - 1) ** 2
        self.flops = 25 * (N - 2) ** 2 + 16 * 4 * (N - 2) + 9 * 4  # sum over k of nnz(A(:,k)) nnz(A(k,:))
        self.row_entries = (5 * N - 2) / N  # an interior grid row of the matrix's rows

    def partial_c(self, layers: int) -> float:
        # Contiguous inner shares keep a stencil's products in one layer, except for the entries
        # whose middle points lie on both sides of a layer boundary: 8 N - 4 per boundary.
        return self.nnz_c + (layers - 1) * (8 * self.N - 4)

    def fetch_1d(self, ranks: int) -> tuple[float, float, float]:
        N, share = self.N, self.n / ranks
        if share >= N:  # one grid row above and below each rank boundary: P - 1 boundaries, both ways
            rows, runs = 2 * N * (1 - 1 / ranks), 2 * (1 - 1 / ranks)
            return rows, rows * self.row_entries, runs
        rows = 2 * share + 2  # the rows N above and below, and the two horizontal neighbours (edges dropped)
        return rows, 5 * rows, 4.0

    def owners_1d(self, ranks: int) -> float:
        return self.fetch_1d(ranks)[2]  # one run per owner

    def _grid_lines(self, groups: int) -> float:
        """Distinct grid rows (columns) among the row (column) blocks of one line's entries, averaged:
        the diagonal block, the blocks N/b away (vertical neighbours), and at the 2 block edges of
        every b lines the next block (horizontal neighbours)."""
        v = self.N // self.block
        seen = {0, v % groups, -v % groups}
        return len(seen) + (2 / self.block if 1 % groups not in seen else 0)

    def touch_2d(self, p: int, q: int) -> tuple[float, float]:
        ranks = p * q
        return self.n * self._grid_lines(p) / ranks, self.n * self._grid_lines(q) / ranks

    def moved_transpose_1d(self, ranks: int) -> float:
        return self.fetch_1d(ranks)[0]  # the same boundary-crossing pairs, one entry each

    def moved_transpose_2d(self, p: int, q: int) -> float:
        assert p == q, "the Laplacian's transpose is modelled on square grids"
        N, v = self.N, self.N // self.block
        vertical = 2 * N * (N - 1) if v % q else 0  # (i, i +- N) is off the diagonal grid positions
        horizontal = 2 * N * (v - 1) if q > 1 else 0  # (i, i +- 1) across a block edge
        return (vertical + horizontal) / (p * q)

    def inputs(self) -> dict:
        return {"n": self.n, "nnz_a": self.nnz, "nnz_c": self.nnz_c, "flops": self.flops,
                "source": "counted from the 5-point stencil (A*A: 13-point)"}


# ---------------------------------------------------------------------------------------------
# The operations: (bytes sent per rank, messages per rank), averages over ranks
# ---------------------------------------------------------------------------------------------
def size_exchanges(ranks: int, count: int) -> tuple[float, float]:
    return count * SIZE_MESSAGE * (ranks - 1), count * (ranks - 1)


def spgemm_row_block(m, ranks: int) -> tuple[float, float]:
    """1-D: the rows of B the local A names, three one-sided gets per run (row pointers, one more
    than the rows; columns; values). No size exchange."""
    rows, entries, runs = m.fetch_1d(ranks)
    return INDEX * (rows + runs) + 16 * entries, 3 * runs


def spgemm_grid(m, ranks: int, layers: int = 1, replicated: bool = False, grid=None) -> tuple[float, float]:
    """SUMMA (layers = 1, on A's p x q grid) or split-3D (layers = c, on c layers of the squarest
    p' x q' grid of P / c): A(i,k) to the q ranks of its grid row in layer(k), B(k,j) to the p ranks
    of its grid column (16-byte records), then the partial C to C's owners (24-byte records). With
    one layer on block_cyclic_2d C is computed in place: two exchanges; otherwise three."""
    in_place = layers == 1 and not replicated
    size_bytes, size_messages = size_exchanges(ranks, 2 if in_place else 3)
    nnz_a = nnz_b = m.nnz  # C = A * A
    if layers == 1:
        p, q = grid or squarest(ranks)
        a_copies, b_copies = q - 1, (0 if replicated else p - 1)  # a replica of B sits on every rank of its grid column
        c_sent = m.nnz_c * (p - 1) if replicated else 0.0  # computed where stored; a replicated C to p - 1 replicas
        messages = (q - 1) + b_copies + (p - 1 if replicated else 0)
    else:
        p, q = squarest(ranks // layers)
        # Destinations are on the layered grid, owners on A's: the owner is one of them 1 time in P.
        a_copies, b_copies = q * (1 - 1 / ranks), p * (1 - 1 / ranks)
        c_sent = m.partial_c(layers) * (1 - 1 / ranks)
        messages = q + p + spread(c_sent / ranks, ranks)
    data = (PIECE_ENTRY * (nnz_a * a_copies + nnz_b * b_copies) + ENTRY * c_sent) / ranks
    return data + size_bytes, messages + size_messages


def spmm_row_block(m, ranks: int, k: int) -> tuple[float, float]:
    """1-D: the halo rows of X, 8 k bytes each, one get per owner (the owner packs them)."""
    return 8 * k * m.fetch_1d(ranks)[0], m.owners_1d(ranks)


def spmm_grid(m, ranks: int, k: int, aligned: bool = False) -> tuple[float, float]:
    """2-D, one product through the plan (grid_spmm_plan): 8 k per remote row of X fetched and per
    remote partial row of Y sent, two personalised exchanges whose sizes the plan knows (no size
    messages: exchange_planned). X and Y on row_block: an owner is another rank but 1 time in P.
    Laid out along the grid (grid_aligned_rows): X's rows come from the p ranks of the grid column
    (1 in p is this rank's), Y's go to the q of the grid row."""
    p, q = squarest(ranks)
    named, rows = m.touch_2d(p, q)
    x_remote, y_remote = ((1 - 1 / p), (1 - 1 / q)) if aligned else ((1 - 1 / ranks), (1 - 1 / ranks))
    data = 8 * k * (named * x_remote + rows * y_remote)
    x_peers = min(p - 1, spread(named * x_remote, ranks)) if aligned else spread(named * x_remote, ranks)
    y_peers = min(q - 1, spread(rows * y_remote, ranks)) if aligned else spread(rows * y_remote, ranks)
    return data, x_peers + y_peers


def transpose_row_block(m, ranks: int) -> tuple[float, float]:
    moved = m.moved_transpose_1d(ranks)
    return ENTRY * moved + SIZE_MESSAGE * (ranks - 1), (ranks - 1) + min(m.owners_1d(ranks), spread(moved, ranks))


def transpose_grid(m, ranks: int) -> tuple[float, float]:
    p, q = squarest(ranks)
    moved = m.moved_transpose_2d(p, q)
    return ENTRY * moved + SIZE_MESSAGE * (ranks - 1), (ranks - 1) + (1 - 1 / q if moved else 0)  # one partner


def redistribute_to_grid(m, ranks: int) -> tuple[float, float]:
    """row_block to block_cyclic_2d: every entry whose owner changes, once (1 - 1/P of them)."""
    moved = m.nnz / ranks * (1 - 1 / ranks)
    return ENTRY * moved + SIZE_MESSAGE * (ranks - 1), (ranks - 1) + spread(moved, ranks)


# ---------------------------------------------------------------------------------------------
# Projection
# ---------------------------------------------------------------------------------------------
def projection(matrices) -> list[dict]:
    lines = []

    def add(m, model, op, distribution, ranks, layers, result, grid=None, **extra):
        p, q = grid or squarest(ranks // layers)
        inputs = m.inputs()
        if op == "spgemm" and layers > 1:
            inputs = {**inputs, "partial_c": round(m.partial_c(layers))}
        lines.append({"model": model, "matrix": m.name, "op": op, "distribution": distribution, "P": ranks,
                      "layers": layers, "grid": f"{p}x{q}", **extra, "bytes_per_rank": round(result[0]),
                      "messages_per_rank": round(result[1], 1), "model_inputs": inputs})

    for m in matrices:
        for P in RANKS:
            add(m, "1-D fetch of B's rows", "spgemm", "row_block", P, 1, spgemm_row_block(m, P), grid=(P, 1))
            add(m, "SUMMA", "spgemm", "block_cyclic_2d", P, 1, spgemm_grid(m, P))
            for c in (4, 16):
                if P % c == 0:
                    add(m, "split-3D", "spgemm", "block_cyclic_2d", P, c, spgemm_grid(m, P, c))
            add(m, "SUMMA, B and C replicated", "spgemm", "replicated_columns", P, 1, spgemm_grid(m, P, replicated=True))
            add(m, "1-D halo of X", "spmm", "row_block", P, 1, spmm_row_block(m, P, SPMM_K), grid=(P, 1), k=SPMM_K)
            add(m, "2-D fetch of X, reduce of Y", "spmm", "block_cyclic_2d", P, 1, spmm_grid(m, P, SPMM_K), k=SPMM_K)
            add(m, "2-D, X and Y along the grid", "spmm", "block_cyclic_2d", P, 1, spmm_grid(m, P, SPMM_K, aligned=True),
                k=SPMM_K, vectors="grid_aligned")
            add(m, "route to the row owners", "transpose", "row_block", P, 1, transpose_row_block(m, P), grid=(P, 1))
            add(m, "to the transposed grid position", "transpose", "block_cyclic_2d", P, 1, transpose_grid(m, P))
            add(m, "each moved entry once", "redistribute", "row_block->block_cyclic_2d", P, 1, redistribute_to_grid(m, P))
    return lines


# ---------------------------------------------------------------------------------------------
# SVG, by hand (colours and sizes as bench/plot_docs.py draws them)
# ---------------------------------------------------------------------------------------------
SERIES = [  # (label, distribution, layers, colour, marker)
    ("1-D row_block", "row_block", 1, "#d62728", "circle"),
    ("2-D SUMMA (c = 1)", "block_cyclic_2d", 1, "#1f77b4", "square"),
    ("3-D, c = 4", "block_cyclic_2d", 4, "#2ca02c", "triangle"),
    ("3-D, c = 16", "block_cyclic_2d", 16, "#9467bd", "diamond"),
]


def si_bytes(v: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if v >= scale:
            return f"{v / scale:g} {unit}"
    return f"{v:g} B"


def marker(kind: str, x: float, y: float, colour: str) -> str:
    r = 3.2
    if kind == "circle":
        return f'<circle cx="{x:.2f}" cy="{y:.2f}" r="{r}" fill="{colour}"/>'
    if kind == "square":
        return f'<rect x="{x - r:.2f}" y="{y - r:.2f}" width="{2 * r}" height="{2 * r}" fill="{colour}"/>'
    points = [(0, -1.2), (1.1, 0.8), (-1.1, 0.8)] if kind == "triangle" else [(0, -1.3), (1, 0), (0, 1.3), (-1, 0)]
    return f'<polygon points="{" ".join(f"{x + r * dx:.2f},{y + r * dy:.2f}" for dx, dy in points)}" fill="{colour}"/>'


def write_svg(path: Path, lines: list[dict], matrices) -> None:
    width, height, panel_w = 792, 340, 396
    left, right, top, bottom = 62, 12, 58, 46
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}pt" height="{height}pt" '
           f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Arial, sans-serif" font-size="9">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="16" text-anchor="middle" font-size="11">SpGEMM C = A·A: modelled bytes sent per '
           f'rank (average over ranks), log-log; lower is better</text>',
           f'<text x="{width / 2}" y="31" text-anchor="middle" font-size="8.5">bench/scaling_model.py → '
           f'bench/results/scaling-projection.jsonl; entries 24 bytes, P − 1 size messages of 8 bytes per exchange</text>']
    titles = {"rmat24-ef16": "R-MAT scale 24, edge factor 16 (n = 2²⁴)", "laplacian4096": "2-D Laplacian, 4096 × 4096 grid (n = 2²⁴)"}
    for index, m in enumerate(matrices):
        x0 = index * panel_w
        plot_w, plot_h = panel_w - left - right, height - top - bottom
        series = [(label, colour, shape, [(d["P"], d["bytes_per_rank"]) for d in lines
                                          if d["matrix"] == m.name and d["op"] == "spgemm"
                                          and d["distribution"] == dist and d["layers"] == c])
                  for label, dist, c, colour, shape in SERIES]
        values = [b for *_, pts in series for _, b in pts]
        lo, hi = math.floor(math.log10(min(values))), math.ceil(math.log10(max(values)))
        x_lo, x_hi = math.log2(RANKS[0]) - 0.5, math.log2(RANKS[-1]) + 0.5
        xs = lambda P: x0 + left + plot_w * (math.log2(P) - x_lo) / (x_hi - x_lo)
        ys = lambda b: top + plot_h * (hi - math.log10(b)) / (hi - lo)
        out.append(f'<text x="{x0 + left + plot_w / 2}" y="{top - 8}" text-anchor="middle" font-size="10">'
                   f'{titles.get(m.name, m.name)}</text>')
        for e in range(lo, hi + 1):  # decades: grid line and label
            y = ys(10**e)
            out.append(f'<line x1="{x0 + left}" x2="{x0 + left + plot_w}" y1="{y:.2f}" y2="{y:.2f}" stroke="#b0b0b0" stroke-opacity="0.3"/>')
            out.append(f'<text x="{x0 + left - 4}" y="{y + 3:.2f}" text-anchor="end">{si_bytes(10**e)}</text>')
        for P in RANKS:
            x = xs(P)
            out.append(f'<line x1="{x:.2f}" x2="{x:.2f}" y1="{top}" y2="{top + plot_h}" stroke="#b0b0b0" stroke-opacity="0.3"/>')
            out.append(f'<text x="{x:.2f}" y="{top + plot_h + 12}" text-anchor="middle">{P:,}</text>')
        out.append(f'<rect x="{x0 + left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="black" stroke-width="0.8"/>')
        out.append(f'<text x="{x0 + left + plot_w / 2}" y="{height - 12}" text-anchor="middle">ranks P (log scale)</text>')
        out.append(f'<text transform="translate({x0 + 14},{top + plot_h / 2}) rotate(-90)" text-anchor="middle">'
                   f'bytes sent per rank (log scale)</text>')
        for label, colour, shape, pts in series:
            path_points = " ".join(f"{xs(P):.2f},{ys(b):.2f}" for P, b in pts)
            out.append(f'<polyline points="{path_points}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
            out.extend(marker(shape, xs(P), ys(b), colour) for P, b in pts)
        # A legend in each panel: the curves order differently in the two.
        lx, ly = x0 + left + plot_w - 112, top + 8
        out.append(f'<rect x="{lx - 6}" y="{ly - 4}" width="114" height="{14 * len(SERIES) + 4}" fill="white" '
                   f'fill-opacity="0.85" stroke="#cccccc"/>')
        for i, (label, _, _, colour, shape) in enumerate(SERIES):
            y = ly + 6 + 14 * i
            out.append(f'<line x1="{lx}" x2="{lx + 16}" y1="{y}" y2="{y}" stroke="{colour}" stroke-width="1.5"/>')
            out.append(marker(shape, lx + 8, y, colour))
            out.append(f'<text x="{lx + 22}" y="{y + 3}">{label}</text>')
    out.append("</svg>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# Measured against the model
# ---------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def matrix_named(name: str):
    if mm := re.fullmatch(r"rmat(\d+)-ef(\d+)", name):
        return Rmat(int(mm[1]), int(mm[2]))
    if mm := re.fullmatch(r"laplacian(\d+)", name):
        return Laplacian(int(mm[1]))
    return None


def model_total(d: dict) -> float | None:
    """The model's bytes, summed over ranks, for a bench_spgemm A*A line on a matrix it knows."""
    m = matrix_named(d.get("matrix", ""))
    if d.get("bench") != "spgemm" or d.get("op") != "A*A" or m is None:
        return None
    P, distribution, layers = d["np"], d.get("distribution", "row_block"), d.get("layers", 1)
    if distribution == "row_block":
        return P * spgemm_row_block(m, P)[0]
    grid = tuple(int(x) for x in d["grid"].split("x")) if "grid" in d else None
    return P * spgemm_grid(m, P, layers, replicated=distribution == "replicated_columns", grid=grid)[0]


def check(paths: list[str]) -> None:
    print(f"{'bench':10} {'matrix':14} {'op':5} {'distribution':19} {'grid':6} {'c':>2} {'np':>3} "
          f"{'measured':>13} {'model':>13} {'ratio':>6}  nnz_out/model")
    for name in paths:
        for text in Path(name).read_text(encoding="utf-8").splitlines():
            if not text.strip():
                continue
            d = json.loads(text)
            d = d.get("line", d)  # paired runs wrap the bench line
            if "bytes_sent" not in d:
                continue
            model = d.get("model_bytes", model_total(d))  # model_bytes: the same unit as bytes_sent (all ranks)
            if model is None or model == 0:
                continue
            m = matrix_named(d.get("matrix", ""))
            nnz = f"{d['nnz_out'] / m.nnz_c:.3f}" if m and "nnz_out" in d and d.get("op") == "A*A" else ""
            print(f"{d['bench']:10} {d.get('matrix', ''):14} {d.get('op', ''):5} {d.get('distribution', 'row_block'):19} "
                  f"{d.get('grid', ''):6} {d.get('layers', 1):>2} {d['np']:>3} {d['bytes_sent']:>13,} {round(model):>13,} "
                  f"{d['bytes_sent'] / model:6.3f}  {nnz}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="JSON lines of the projection")
    ap.add_argument("--svg", help="the figure: SpGEMM bytes per rank against P")
    ap.add_argument("--check", nargs="+", metavar="FILE.jsonl", help="measured lines against the model")
    args = ap.parse_args()
    if not (args.out or args.svg or args.check):
        ap.error("nothing to do: give --out, --svg or --check")
    if args.check:
        check(args.check)
    if args.out or args.svg:
        matrices = [Rmat(24, 16), Laplacian(4096)]
        lines = projection(matrices)
        if args.out:
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).write_text("".join(json.dumps(d) + "\n" for d in lines), encoding="utf-8")
            print(f"wrote {args.out} ({len(lines)} lines)")
        if args.svg:
            write_svg(Path(args.svg), lines, matrices)
            print(f"wrote {args.svg}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
