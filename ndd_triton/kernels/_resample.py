"""Separable resampling filter tables, shared by the CPU and the GPU resize kernels.

One axis of one sample is described by `AxisPlan(n_in, n_out, origin, step, interp, antialias)`:
output pixel `j` has its centre at source coordinate `origin + (j + 0.5) * step` (continuous
coordinates, pixel `i` covering `[i, i + 1)`; a negative step mirrors the axis). `axis_table`
turns a plan into `K` taps per output pixel: clamped source indices `[n_out, K]` (int32) and
normalised weights `[n_out, K]` (float32). Both backends read exactly these tables, so CPU and
GPU compute the same sums; only the summation order differs.

Filters follow DALI 2.4 as observed in the golden data (see tests/golden/README.md): triangle
(LINEAR, TRIANGULAR), Keys cubic with a = -0.5, Lanczos-3, Gaussian with sigma = 1/(2*sqrt(2))
truncated at |x| < 1; when antialiasing a downscale the filter is widened by the scale factor.
Source samples outside the image are clamped to the edge pixel. NN picks
`floor(origin + (j + 0.5) * step)` in DALI's float32 arithmetic (see `_nn_source`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

NN, LINEAR, CUBIC, LANCZOS3, TRIANGULAR, GAUSSIAN = range(6)
INTERP_NAMES = ("INTERP_NN", "INTERP_LINEAR", "INTERP_CUBIC", "INTERP_LANCZOS3",
                "INTERP_TRIANGULAR", "INTERP_GAUSSIAN")  # fmt: skip
_GAUSS_TABLE = 32  # samples per unit of DALI's tabulated Gaussian (fitted to the golden data)
_RADIUS = {LINEAR: 1.0, TRIANGULAR: 1.0, CUBIC: 2.0, LANCZOS3: 3.0, GAUSSIAN: 1.0}


@dataclass(frozen=True, slots=True)
class AxisPlan:
    """Resampling of one axis of one sample (hashable: tables are cached by plan)."""

    n_in: int
    n_out: int
    origin: float
    step: float
    interp: int
    antialias: bool
    innermost: bool = True  # the last spatial axis (W): DALI's NN computes its centres apart


@dataclass(frozen=True, slots=True)
class AxisTable:
    """Taps of one axis: `index[j, k]` (clamped) and `weight[j, k]`, K taps per output."""

    index: np.ndarray  # [n_out, K] int32
    weight: np.ndarray  # [n_out, K] float32

    @property
    def taps(self) -> int:
        """K, the taps per output pixel."""
        return int(self.index.shape[1])


def _filter(interp: int, x: np.ndarray) -> np.ndarray:
    """The continuous filter of `interp` at offsets `x` (in filter units)."""
    a = np.abs(x)
    if interp in (LINEAR, TRIANGULAR):
        return np.maximum(0.0, 1.0 - a)
    if interp in (CUBIC, LANCZOS3):
        # DALI samples these every 1/32 too and interpolates linearly: fits 737 recorded
        # DALI 2.4 weight rows to 6e-6 (the analytic kernels miss by up to 6e-4).
        return _tabulated(_analytic, interp, a, _RADIUS[interp])
    if interp == GAUSSIAN:
        # DALI samples exp(-4x^2) (sigma = 1/(2*sqrt(2))) every 1/32 up to |x| = 1 and
        # interpolates linearly, towards 0 after the last sample: a tap just past |x| = 1 (a
        # widened filter's) still weighs a little. The analytic form misses the golden float
        # case by 5e-3, this one by < 3e-3.
        pos = a * _GAUSS_TABLE
        k = np.floor(pos)
        frac = pos - k

        def sample(k: np.ndarray) -> np.ndarray:
            return np.where(k <= _GAUSS_TABLE, np.exp(-4.0 * (k / _GAUSS_TABLE) ** 2), 0.0)

        return np.where(a < 1.0 + 1.0 / _GAUSS_TABLE,
                        sample(k) * (1.0 - frac) + sample(k + 1) * frac, 0.0)  # fmt: skip
    raise ValueError(f"unknown interpolation type {interp}")


def _analytic(interp: int, a: np.ndarray) -> np.ndarray:
    """Keys cubic (a = -0.5) or Lanczos-3 at distances `a >= 0`."""
    if interp == CUBIC:
        inner = (1.5 * a - 2.5) * a * a + 1.0
        outer = ((-0.5 * a + 2.5) * a - 4.0) * a + 2.0
        return np.where(a < 1.0, inner, np.where(a < 2.0, outer, 0.0))
    return np.where(a < 3.0, np.sinc(a) * np.sinc(a / 3.0), 0.0)


def _tabulated(fn: Any, interp: int, a: np.ndarray, radius: float) -> np.ndarray:
    """`fn(interp, a)` sampled every 1/_GAUSS_TABLE and interpolated linearly (DALI's tables)."""
    pos = a * _GAUSS_TABLE
    k = np.floor(pos)
    frac = pos - k
    lo = np.where(k <= radius * _GAUSS_TABLE, fn(interp, k / _GAUSS_TABLE), 0.0)
    hi = np.where(k + 1 <= radius * _GAUSS_TABLE, fn(interp, (k + 1) / _GAUSS_TABLE), 0.0)
    return np.where(a < radius, lo * (1.0 - frac) + hi * frac, 0.0)


@functools.lru_cache(maxsize=512)
def axis_table(plan: AxisPlan) -> AxisTable:
    """Taps and weights of one axis (cached: uniform batches reuse one table)."""
    n_out, n_in = plan.n_out, plan.n_in
    j = np.arange(n_out, dtype=np.float64)
    centre = plan.origin + (j + 0.5) * plan.step  # continuous source coordinate
    if plan.interp == NN or n_out == 0:
        index = np.clip(_nn_source(plan), 0, n_in - 1)[:, None]
        return _frozen(AxisTable(index.astype(np.int32), np.ones((n_out, 1), np.float32)))
    scale = abs(plan.step)
    widen = scale if plan.antialias and scale > 1.0 else 1.0
    radius = _RADIUS[plan.interp] * widen
    c = centre - 0.5  # in index coordinates (pixel i centred at i)
    if plan.interp == GAUSSIAN:
        # exp(-4) is not 0 and DALI's table reaches 1 + 1/32: which taps near the support
        # edge count decides the result, so the taps are DALI's own (`_gaussian_taps`).
        first, count = _gaussian_taps(plan, widen)
        idx = first[:, None] + np.arange(count)
        w = _filter(GAUSSIAN, (idx - c[:, None]) / widen)
    else:
        lo = np.ceil(c - radius).astype(np.int64)
        taps = int((np.floor(c + radius).astype(np.int64) - lo).max()) + 1
        idx = lo[:, None] + np.arange(taps)
        x = (idx - c[:, None]) / widen  # the other filters are 0 at their support edge
        w = _filter(plan.interp, x)
    total = w.sum(axis=1, keepdims=True)
    total[total == 0.0] = 1.0
    w /= total
    # (ufuncs rather than np.clip/np.where: random crops build tables per sample)
    index = np.minimum(np.maximum(idx, 0, out=idx), n_in - 1, out=idx).astype(np.int32)
    return _frozen(AxisTable(index, w.astype(np.float32)))


def axis_tables(n_in: np.ndarray, n_out: np.ndarray, origin: np.ndarray, step: np.ndarray,
                interp: np.ndarray, antialias: bool, innermost: bool
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:  # fmt: skip
    """`axis_table` of every sample of a batch at once: `[N]` plans in, the tables of all
    samples concatenated out: `index` `[R, K]` int32, `weight` `[R, K]` float32 (K the most taps
    of any sample, rows of samples with fewer taps zero-padded), and each sample's first row.

    The same arithmetic as `axis_table` element for element, over `[R]` rows instead of one
    sample's: bit-identical tables (tests/ops/test_host_tables.py). Row sums are taken over
    groups of samples with the same tap count, so each row is summed exactly as its own
    sample's table would be (NumPy's summation order depends on the row length)."""
    n_in = np.asarray(n_in, np.int64).reshape(-1)
    n_out = np.asarray(n_out, np.int64).reshape(-1)
    origin = np.asarray(origin, np.float64).reshape(-1)
    step = np.asarray(step, np.float64).reshape(-1)
    interp = np.asarray(interp, np.int64).reshape(-1)
    # batches of the same plans recur (fixed-size inputs): their tables are cached by content
    key = (n_in.tobytes(), n_out.tobytes(), origin.tobytes(), step.tobytes(), interp.tobytes(),
           bool(antialias), bool(innermost))  # fmt: skip
    known = _tables_memo.get(key)
    if known is None:
        if len(n_out) <= _FEW:  # a few samples: their own (cached) tables cost less
            known = _stacked_tables([
                axis_table(AxisPlan(int(n_in[i]), int(n_out[i]), float(origin[i]),
                                    float(step[i]), int(interp[i]), bool(antialias),
                                    bool(innermost)))
                for i in range(len(n_out))])  # fmt: skip
        else:
            known = _axis_tables(n_in, n_out, origin, step, interp, antialias, innermost)
        if known[0].nbytes + known[1].nbytes <= _MEMO_BYTES:
            if len(_tables_memo) >= _MEMO_COUNT:
                _tables_memo.clear()
            known[0].setflags(write=False)
            known[1].setflags(write=False)
            known[2].setflags(write=False)
            _tables_memo[key] = known
    return known


_MEMO_BYTES, _MEMO_COUNT, _FEW = 1 << 18, 64, 8
_CHUNK_ELEMENTS = 1 << 13  # taps x rows per step of the batched builder (64 KiB of float64)


def _stacked_tables(tables: list[AxisTable]) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Per-sample tables concatenated, zero-padded to the most taps (`axis_tables`' layout)."""
    taps = max((t.taps for t in tables), default=1)
    first = np.zeros(len(tables), np.int64)
    rows = 0
    for k, t in enumerate(tables):
        first[k] = rows
        rows += len(t.index)
    index = np.zeros((rows, taps), np.int32)
    weight = np.zeros((rows, taps), np.float32)
    for k, t in enumerate(tables):
        index[first[k]:first[k] + len(t.index), :t.taps] = t.index
        weight[first[k]:first[k] + len(t.index), :t.taps] = t.weight
    return index, weight, first, taps
_tables_memo: dict[tuple[Any, ...], tuple[np.ndarray, np.ndarray, np.ndarray, int]] = {}


def _axis_tables(n_in: np.ndarray, n_out: np.ndarray, origin: np.ndarray, step: np.ndarray,
                 interp: np.ndarray, antialias: bool, innermost: bool
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:  # fmt: skip
    n = len(n_out)
    first = np.zeros(n, np.int64)
    if n > 1:
        np.cumsum(n_out[:-1], out=first[1:])
    rows = int(n_out.sum())
    sample = np.repeat(np.arange(n, dtype=np.int64), n_out)
    local = np.arange(rows, dtype=np.int64) - first[sample]  # j of each row
    taps = np.ones(n, np.int64)
    pieces: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (rows, index, weight)
    f32 = np.float32
    nn = (interp == NN) | (n_out == 0)
    if nn.any():
        picked = np.flatnonzero(nn[sample])
        s = sample[picked]
        lo, step32 = _regions_f32(origin, step, n_out)
        if innermost:
            centres = lo[s] + (local[picked].astype(f32) + f32(0.5)) * step32[s]
        else:  # per-sample running sums in float32, as `np.cumsum` of each sample's steps
            which = np.flatnonzero(nn & (n_out > 0))
            width = int(n_out[which].max(initial=0))
            steps = np.repeat(step32[which, None], width, axis=1) if width else \
                np.zeros((len(which), 0), f32)  # fmt: skip
            if width:
                steps[:, 0] = lo[which] + f32(0.5) * step32[which]
            running = np.cumsum(steps, axis=1, dtype=f32)
            slot = np.full(n, -1, np.int64)
            slot[which] = np.arange(len(which))
            centres = running[slot[s], local[picked]]
        index = np.floor(centres).astype(np.int64)
        index = np.clip(index, 0, n_in[s] - 1)[:, None].astype(np.int32)
        pieces.append((picked, index, np.ones((len(picked), 1), np.float32)))
    for kind in np.unique(interp[~nn]).tolist():
        group = ~nn & (interp == kind)
        picked = np.flatnonzero(group[sample])
        s = sample[picked]
        scale = np.abs(step)
        widen = np.where(antialias & (scale > 1.0), scale, 1.0)
        centre = origin[s] + (local[picked].astype(np.float64) + 0.5) * step[s]
        c = centre - 0.5
        if kind == GAUSSIAN:
            lo, step32 = _regions_f32(origin, step, n_out)
            wide = widen > 1.0
            radius = np.where(wide, np.nextafter(np.abs(step32), f32(0.0)), f32(1.0 - 2.0**-23))
            count = np.where(wide, np.ceil(2.0 * radius.astype(np.float64)), 2.0).astype(np.int64)
            bias = lo + (f32(0.5) * step32 - f32(0.5) - radius)
            start = np.ceil(bias[s] + local[picked].astype(f32) * step32[s]).astype(np.int64)
            taps[group] = count[group]
        else:
            radius = _RADIUS[kind] * widen
            start = np.ceil(c - radius[s]).astype(np.int64)
            span = np.floor(c + radius[s]).astype(np.int64) - start
            heads = np.flatnonzero(np.r_[True, s[1:] != s[:-1]]) if len(s) else s
            taps[s[heads]] = np.maximum.reduceat(span, heads) + 1 if len(s) else 0
        for t in np.unique(taps[group]).tolist():
            sub = taps[s] == t
            rows_t, s_t, c_t, start_t = picked[sub], s[sub], c[sub], start[sub]
            # taps-major `[t, rows]`: NumPy's loops then run along the rows, not over t taps;
            # in chunks of rows whose temporaries stay small (cache-resident, no page faults)
            chunk = max(_CHUNK_ELEMENTS // t, 1)
            for a in range(0, len(rows_t), chunk):
                b = a + chunk
                idx = start_t[a:b] + np.arange(t)[:, None]
                w = _filter(kind, (idx.astype(np.float64) - c_t[a:b]) / widen[s_t[a:b]])
                total = _pairwise_rows(w, 0, t)  # = w.T.sum(axis=1), bit for bit
                total[total == 0.0] = 1.0
                w /= total
                index = np.minimum(np.maximum(idx, 0, out=idx), n_in[s_t[a:b]] - 1, out=idx)
                pieces.append((rows_t[a:b], index.T.astype(np.int32), w.T.astype(np.float32)))
    k = int(taps.max(initial=1))
    index = np.zeros((rows, k), np.int32)
    weight = np.zeros((rows, k), np.float32)
    for where, idx, w in pieces:
        if len(where) and where[-1] - where[0] + 1 == len(where):  # a run of rows: a slice
            where = slice(int(where[0]), int(where[-1]) + 1)  # type: ignore[assignment]
        index[where, :idx.shape[1]] = idx
        weight[where, :w.shape[1]] = w
    return index, weight, first, k


def _pairwise_rows(w: np.ndarray, lo: int, n: int) -> np.ndarray:
    """Sums of rows `lo:lo + n` of `w` in the order of NumPy's pairwise summation (the order
    `a.sum(axis=-1)` adds the `n` values of each row of a C-contiguous `a = w.T`): one by one
    below 8 values, 8 running sums up to 128, halves (multiples of 8) above."""
    if n < 8:
        total = np.zeros(w.shape[1:], w.dtype)
        for i in range(lo, lo + n):
            total += w[i]
        return total
    if n <= 128:
        acc = w[lo:lo + 8].copy()
        i = 8
        while i < n - n % 8:
            acc += w[lo + i:lo + i + 8]
            i += 8
        total = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
        for k in range(lo + i, lo + n):
            total += w[k]
        return total
    half = n // 2
    half -= half % 8
    return _pairwise_rows(w, lo, half) + _pairwise_rows(w, lo + half, n - half)


def _regions_f32(origin: np.ndarray, step: np.ndarray, n_out: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """`_region_f32` of `[N]` plans."""
    f32 = np.float32
    lo = origin.astype(f32)
    hi = (origin + n_out * step).astype(f32)
    return lo, (hi - lo) / np.maximum(n_out, 1).astype(f32)


def _gaussian_taps(plan: AxisPlan, widen: float) -> tuple[np.ndarray, int]:
    """First tap per output and the tap count of the Gaussian, as DALI picks them.

    The first tap is `ceil(lo + (0.5 * step - 0.5 - r) + j * step)` in float32 (`lo`, `step`
    of `_region_f32`), `ceil(2 r)` taps. The radius `r` is 1 - 2^-23 unscaled; widened by an
    antialiased downscale it is `|step|` one float32 ulp down. Fitted to recorded DALI 2.4
    weight matrices (1,000 resizes, both axes, integer and fractional sizes): the unscaled taps
    agree at all 509 exact ties (a tap exactly one unit away); the widened ones at 1,500 of
    1,502 interior outputs (two exact ties at the widened edge with `step` 2 and 30/26 go the
    other way); `[-1, 1)` in float32 offsets missed 20% of the unscaled ties."""
    f32 = np.float32
    lo, step = _region_f32(plan)
    if widen > 1.0:
        radius = np.nextafter(abs(step), f32(0.0))
        count = int(np.ceil(2.0 * float(radius)))
    else:
        radius, count = f32(1.0 - 2.0**-23), 2
    bias = lo + (f32(0.5) * step - f32(0.5) - radius)
    first = np.ceil(bias + np.arange(plan.n_out, dtype=f32) * step).astype(np.int64)
    return first, count


def _region_f32(plan: AxisPlan) -> tuple[np.float32, np.float32]:
    """DALI's float32 source region of an axis: its start `lo` and `step = (hi - lo) / n_out`,
    with both ends rounded to float32."""
    f32 = np.float32
    lo = f32(plan.origin)
    hi = f32(plan.origin + plan.n_out * plan.step)
    return lo, f32(hi - lo) / f32(max(plan.n_out, 1))


def _centres_f32(plan: AxisPlan, accumulate: bool = False) -> np.ndarray:
    """Output centres as DALI computes them: the source region's ends `lo`, `hi` rounded to
    float32, `step = (hi - lo) / n_out` and `lo + (j + 0.5) * step`, all in float32; with
    `accumulate`, each centre is the previous one plus `step` (rounded at every step)."""
    f32 = np.float32
    n_out = plan.n_out
    lo, step = _region_f32(plan)
    if not accumulate:
        return lo + (np.arange(n_out, dtype=f32) + f32(0.5)) * step  # type: ignore[no-any-return]
    steps = np.full(n_out, step, f32)
    if n_out:
        steps[0] = lo + f32(0.5) * step
    return np.cumsum(steps, dtype=f32)  # type: ignore[no-any-return]


def _nn_source(plan: AxisPlan) -> np.ndarray:
    """NN source indices: `floor` of the float32 centres of `_centres_f32`, so an exact tie
    picks the lower or the higher pixel as DALI's float32 rounding does. DALI multiplies on
    the innermost spatial axis (W) and accumulates on the outer ones (H, D): fitted to 4,800
    recorded DALI 2.4 NN resizes of each axis of 2-D and 3-D inputs (integer and fractional
    sizes, ~700 exact ties), all of which agree; float64 centres, or a float32 step
    `n_in / size`, miss 30-110 of every 1,800."""
    return np.floor(_centres_f32(plan, accumulate=not plan.innermost)).astype(np.int64)


def _frozen(table: AxisTable) -> AxisTable:
    table.index.setflags(write=False)
    table.weight.setflags(write=False)
    return table
