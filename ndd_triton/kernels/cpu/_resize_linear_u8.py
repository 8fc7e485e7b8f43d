"""Fast path of the CPU resize for uint8 LINEAR/TRIANGULAR 2-D images: torch's fixed-point
antialiased bilinear resampler for the interior, exact DALI taps for the border.

Where it applies (`linear_u8_fast`): uint8 in and out, layout HWC or CHW (or their frames,
FHWC and FCHW), both spatial axes LINEAR or TRIANGULAR (the same triangle filter), and each
axis maps an integer source window `[o, o + n)` onto its outputs with step `n / n_out` (plain
resize, integer crops of random_resized_crop and resize_crop_mirror; a negative step is the
mirrored window).

Why it is right: torch's `F.interpolate(mode="bilinear", antialias=a)` on the window evaluates
the same triangle filter (widened by the scale when `a` and shrinking) at the same centres,
with the weights normalised to sum 1. It differs from DALI in two ways only:
* At the window border it drops taps outside the window and renormalises, where DALI reads
  the source pixel (or the clamped edge pixel). Outputs whose taps all lie inside the window
  (`_outside` counts the others) are unaffected; the others (a pixel or two per side) are
  recomputed here in float32 with DALI's clamped taps (the tables of `axis_table`).
* It rounds the intermediate of its two passes to uint8 and uses 16-bit fixed-point weights,
  so an interior output is within 1.01 of the exact value (measured over random shapes, scales
  and channel counts in tests/ops/test_resize.py), where the float path is within 0.5. The
  filter weights are non-negative, so the intermediate rounding error (<= 0.5) is not
  amplified. DALI's output is its float result rounded, within 0.5 + (its own float error) of
  the exact value, so two integers less than 2 apart: the outputs differ by at most 1, the
  uint8 tolerance. The price: on the golden LINEAR cases 10-18% of the pixels are 1 off DALI
  (0-1% with the float path).
Measured (perf/geometry.md, same run): 480x640x3 -> 224x224 takes 2.1x less CPU than the
float band GEMMs (1.4x torch's own uint8 resampler), random_resized_crop of 375x500 images 2.7x.

The border taps of a sample (its "recipe") come from `recipes`, which builds those of many
samples in one vectorised pass (random crops have a new plan pair per sample; `resize_cpu`
asks for chunks of 32 samples), bit-identical to per-sample `axis_table` tables
(tests/ops/test_resize.py compares old and new bytes).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F

from ndd_triton.kernels._resample import LINEAR, TRIANGULAR, AxisPlan

try:  # the `out=` overloads behind F.interpolate (aten ops, not public Python API)
    _AA = torch.ops.aten._upsample_bilinear2d_aa.out  # antialias=True
    _PLAIN = torch.ops.aten.upsample_bilinear2d.out  # antialias=False
    _HAS_OUT = True
except (AttributeError, RuntimeError):  # pragma: no cover - other torch builds
    _HAS_OUT = False
_MAX_BORDER_FRACTION = 0.25  # more recomputed outputs than this: the float path is cheaper


def _windows(n_in: np.ndarray, n_out: np.ndarray, origin: np.ndarray, step: np.ndarray,
             interp: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """Per axis plan (arrays of any shape): (start, length) of the integer source window it
    maps, as float64, and whether it has one."""
    length = np.abs(step) * n_out
    start = np.where(step > 0, origin, origin + step * n_out)
    n, s = np.round(length), np.round(start)
    # Torch maps with n / n_out: accept only steps that are that ratio up to float64 rounding
    # (a float32-rounded step would shift far outputs of a long axis by a visible fraction).
    ok = ((interp == LINEAR) | (interp == TRIANGULAR)) & (n_out != 0) & (step != 0)
    ok &= np.abs(length - n) <= 1e-9 * np.maximum(n, 1)
    ok &= np.abs(start - s) <= 1e-9 * np.maximum(np.abs(s), 1)
    ok &= (s >= 0) & (n >= 1) & (s + n <= n_in)
    return s, n, ok


def _outside(n_out: int, step: np.ndarray, length: np.ndarray, antialias: bool
             ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Per plan (1-D arrays `step`, `length`): how many outputs at the start and from which
    output on at the end have a tap with nonzero weight outside the window `[0, length)`
    (with a margin: an output that is unsure is recomputed, which is always right). Taps move
    monotonically with the output, so the outputs outside are a prefix and a suffix."""
    step = np.abs(step)[:, None]
    radius = np.where(step > 1.0, step, 1.0) if antialias else np.ones_like(step)
    centre = (np.arange(n_out) + 0.5) * step - 0.5  # window coordinates
    lo = np.ceil(centre - radius - 1e-6)
    hi = np.floor(centre + radius + 1e-6)
    head = np.count_nonzero(lo < 0, axis=1)
    tail = n_out - np.count_nonzero(hi > length[:, None] - 1, axis=1)
    return head, np.maximum(tail, head)


_SEQUENTIAL_SUM = 7  # NumPy sums up to this many values along the last axis left to right


def _linear_tables(n_in: np.ndarray, n_out: int, origin: np.ndarray, step: np.ndarray,
                   antialias: bool) -> list[tuple[np.ndarray, np.ndarray]]:  # fmt: skip
    """`axis_table` of LINEAR plans `(n_in[i], n_out, origin[i], step[i])`, all in a few NumPy
    passes: (index, weight) per plan, bit-identical to `axis_table` (the same float64
    operations per element, and the weight sums in NumPy's order: left to right for up to
    `_SEQUENTIAL_SUM` taps, else `sum` itself over each plan's own taps)."""
    j = np.arange(n_out, dtype=np.float64)
    centre = origin[:, None] + (j + 0.5) * step[:, None]
    scale = np.abs(step)
    widen = np.where(scale > 1.0, scale, 1.0) if antialias else np.ones_like(scale)
    radius = widen[:, None]  # _RADIUS of LINEAR/TRIANGULAR: 1.0 * widen
    c = centre - 0.5
    lo = np.ceil(c - radius).astype(np.int64)
    taps = (np.floor(c + radius).astype(np.int64) - lo).max(axis=1) + 1
    kmax = int(taps.max())
    # Work arrays are `[tap, plan, output]` (long contiguous rows for NumPy's inner loops).
    # Taps as float64 (integers: exact, and idx - c is the same subtraction as from int64).
    # A division by a widening of 1.0 and the edge factor 1.0 are exact no-ops.
    idx = np.arange(kmax, dtype=np.float64)[:, None, None] + lo.astype(np.float64)
    x = idx - c
    x /= widen[:, None]
    # A tap exactly on the widened support edge is inside (see axis_table).
    x *= np.where(widen > 1.0, 1.0 - 1e-7, 1.0)[:, None]
    w = np.abs(x, out=x)
    np.subtract(1.0, w, out=w)
    np.maximum(0.0, w, out=w)
    np.maximum(idx, 0.0, out=idx)
    index = np.minimum(idx, (n_in - 1)[:, None], out=idx).astype(np.int32)
    counts = sorted(set(taps.tolist()))
    if kmax <= _SEQUENTIAL_SUM:
        for k in range(counts[0], kmax):  # taps past a plan's own count weigh 0
            w[k, taps <= k] = 0.0
        total = w[0].copy()
        for k in range(1, kmax):  # ((w0 + w1) + w2) + ... (+ exact zeros), as `sum`
            total += w[k]
        total[total == 0.0] = 1.0
        w /= total
        weight = w.astype(np.float32)
    tables: list[tuple[np.ndarray, np.ndarray]] = [None] * len(step)  # type: ignore[list-item]
    for k in counts:
        group = np.flatnonzero(taps == k)
        sub = np.ascontiguousarray(index[:k, group].transpose(1, 2, 0))  # [plan, out, tap]
        if kmax <= _SEQUENTIAL_SUM:
            wk = np.ascontiguousarray(weight[:k, group].transpose(1, 2, 0))
        else:  # long filters: NumPy's pairwise sum over exactly each plan's taps
            wk = np.ascontiguousarray(w[:k, group].transpose(1, 2, 0))
            total = wk.sum(axis=2, keepdims=True)
            total[total == 0.0] = 1.0
            wk /= total
            wk = wk.astype(np.float32)
        for g, i in enumerate(group.tolist()):
            tables[i] = (sub[g], wk[g])
    return tables


class _Recipe(NamedTuple):
    """What the fast path needs for one pair of axis plans (cached: a batch resized to one
    size reuses it): the output size, the source windows, and the taps of the border
    outputs. (A NamedTuple: built per sample for random crops, 6x cheaper than a frozen
    dataclass.)"""

    size: tuple[int, int]  # (H, W) of the output
    antialias: bool
    windows: tuple[tuple[int, int, bool], tuple[int, int, bool]]  # (start, length, mirrored)
    rows: np.ndarray  # border output rows (forward order)
    row_taps: tuple[np.ndarray, np.ndarray]  # their H taps (index, weight)
    w_span: tuple[int, int]  # source columns `[lo, hi)` read by any W tap
    w_taps: tuple[np.ndarray, np.ndarray]  # all W taps, index from `lo` (the rows' 2nd pass)
    cols: np.ndarray  # border output columns
    col_source: np.ndarray  # source columns of their W taps, `[cols * K]` (tap by tap)
    col_weight: np.ndarray  # their W weights `[cols, K]`
    h_span: tuple[int, int]  # source rows `[lo, hi)` read by any H tap
    h_taps: tuple[np.ndarray, np.ndarray]  # all H taps, index from `lo` (the cols' 2nd pass)


def recipes(n_in: np.ndarray, n_out: np.ndarray, origin: np.ndarray, step: np.ndarray,
            interp: np.ndarray, antialias: bool) -> list[_Recipe | None]:  # fmt: skip
    """Recipes of a batch of (H, W) plan pairs given as `[N, 2]` arrays (the `resample_*`
    values of a call), None where the fast path does not apply. Every output size must be
    the same (`n_out` rows equal). The tables of all samples are built in a few vectorised
    passes: random crops make a new plan pair per sample."""
    n_in = np.asarray(n_in, np.int64)
    n_out = np.asarray(n_out, np.int64)
    origin = np.asarray(origin, np.float64)
    step = np.asarray(step, np.float64)
    start, length, ok = _windows(n_in, n_out, origin, step, np.asarray(interp))
    ok = ok.all(axis=1)
    nh, nw = int(n_out[0, 0]), int(n_out[0, 1])
    found: list[_Recipe | None] = [None] * len(ok)
    if not ok.any():
        return found
    head_h, tail_h = _outside(nh, step[:, 0], length[:, 0], antialias)
    head_w, tail_w = _outside(nw, step[:, 1], length[:, 1], antialias)
    out_h, out_w = head_h + nh - tail_h, head_w + nw - tail_w
    if nh > 1 and nw > 1:
        ok &= out_h * nw + out_w * nh <= _MAX_BORDER_FRACTION * nh * nw
    else:
        ok &= (out_h == 0) & (out_w == 0)
    todo = np.flatnonzero(ok)
    if not todo.size:
        return found
    # Border outputs use DALI's clamped taps, in the forward order of a mirrored axis.
    fwd_origin = np.where(step[todo] > 0, origin[todo], start[todo])
    fwd_step = np.where(step[todo] > 0, step[todo], length[todo] / n_out[todo])
    th = _linear_tables(n_in[todo, 0], nh, fwd_origin[:, 0], fwd_step[:, 0], antialias)
    tw = _linear_tables(n_in[todo, 1], nw, fwd_origin[:, 1], fwd_step[:, 1], antialias)
    windows = np.stack([start[todo], length[todo]], axis=2).astype(np.int64).tolist()
    mirrored = (step[todo] < 0).tolist()
    bounds = np.stack([head_h[todo], tail_h[todo], head_w[todo], tail_w[todo]], 1).tolist()
    all_h, all_w = np.arange(nh), np.arange(nw)
    for t, i in enumerate(todo.tolist()):
        hi, hw = th[t]
        wi, ww = tw[t]
        a, b, c, d = bounds[t]
        rows = np.concatenate((all_h[:a], all_h[b:])) if b < nh else all_h[:a]
        cols = np.concatenate((all_w[:c], all_w[d:])) if d < nw else all_w[:c]
        (s_h, n_h), (s_w, n_w) = windows[t]
        # Taps only move forward: the first and last taps bound the source span of an axis.
        h_lo, h_hi, w_lo, w_hi = int(hi[0, 0]), int(hi[-1, -1]) + 1, int(wi[0, 0]), \
            int(wi[-1, -1]) + 1  # fmt: skip
        found[i] = _Recipe((nh, nw), antialias,
                           ((s_h, n_h, mirrored[t][0]), (s_w, n_w, mirrored[t][1])),
                           rows, (hi[rows], hw[rows]), (w_lo, w_hi), (wi - w_lo, ww), cols,
                           wi[cols].reshape(-1), ww[cols], (h_lo, h_hi),
                           (hi - h_lo, hw))  # fmt: skip
    return found


@functools.lru_cache(maxsize=64)
def _recipe(ph: AxisPlan, pw: AxisPlan) -> _Recipe | None:
    """The recipe of a plan pair, or None when the fast path does not apply."""
    if ph.antialias != pw.antialias:
        return None
    return recipes(np.array([[ph.n_in, pw.n_in]]), np.array([[ph.n_out, pw.n_out]]),
                   np.array([[ph.origin, pw.origin]]), np.array([[ph.step, pw.step]]),
                   np.array([[ph.interp, pw.interp]]), ph.antialias)[0]  # fmt: skip


_einsum = np.einsum


def _fix_border(view: np.ndarray, src: np.ndarray, recipe: _Recipe) -> None:
    """Recompute the border rows and columns of the HWC output `view` from HWC `src`.

    First passes cover only the source span that the second pass reads (each value is the
    same tap-by-tap float32 sum whatever the extent)."""
    rows = recipe.rows
    if rows.size:  # H pass of the border rows, then W over all columns
        index, weight = recipe.row_taps
        lo, hi = recipe.w_span
        part = _einsum("ok,ok...->o...", weight, src[:, lo:hi][index],
                       dtype=np.float32)  # [r, w, C]  # fmt: skip
        part = np.ascontiguousarray(part.transpose(1, 0, 2))
        index, weight = recipe.w_taps
        part = _einsum("ok,ok...->o...", weight, part[index], dtype=np.float32)
        view[rows] = _half_up(part.transpose(1, 0, 2))  # the assignment truncates to uint8
    cols = recipe.cols
    if cols.size:  # W pass of the source columns they read, then H over all rows
        weight = recipe.col_weight
        lo, hi = recipe.h_span
        strip = np.ascontiguousarray(src[lo:hi, recipe.col_source].transpose(1, 0, 2))
        strip = strip.reshape(*weight.shape, *strip.shape[1:])  # [c, K, h, C]
        part = _einsum("ok,ok...->o...", weight, strip, dtype=np.float32)  # [c, h, C]
        part = np.ascontiguousarray(part.transpose(1, 0, 2))
        index, weight = recipe.h_taps
        part = _einsum("ok,ok...->o...", weight, part[index], dtype=np.float32)
        view[:, cols] = _half_up(part)


def _half_up(value: np.ndarray) -> np.ndarray:
    """float32 `value` clipped to [0, 255] plus 0.5, in place: assigned to uint8 (a
    truncating cast, the same conversion as `astype`) it is rounded half away from zero and
    saturated, without a uint8 temporary."""
    np.clip(value, 0.0, 255.0, out=value)
    value += 0.5
    return value


def linear_u8_fast(out: np.ndarray, inp: np.ndarray, layout: str, letters: str,
                   plans: list[AxisPlan] | None, recipe: _Recipe | None = None) -> bool:
    """Resize one uint8 sample with the fast path; False (nothing written) when it does not
    apply and the caller must use the float path. `recipe`, when given, is that of `plans`
    (from `recipes`; then `plans` may be None)."""
    if inp.dtype != np.uint8 or out.dtype != np.uint8 or letters != "HW":
        return False
    if layout in ("FHWC", "FCHW") and inp.ndim == 4:  # video: frame by frame, one recipe
        if recipe is None:
            recipe = _recipe(*plans)  # type: ignore[misc]
        if recipe is None:
            return False
        for frame in range(inp.shape[0]):
            linear_u8_fast(out[frame], inp[frame], layout[1:], letters, plans, recipe)
        return True
    if layout not in ("HWC", "CHW") or inp.ndim != 3:
        return False
    if recipe is None:
        recipe = _recipe(*plans)  # type: ignore[misc]
        if recipe is None:
            return False
    size = recipe.size
    # HWC views of the input and of the output (mirrored axes read back to front).
    src = inp if layout == "HWC" else inp.transpose(1, 2, 0)
    dst = out if layout == "HWC" else out.transpose(1, 2, 0)
    (h0, nh, flip_h), (w0, nw, flip_w) = recipe.windows
    x = torch.from_numpy(src[h0:h0 + nh, w0:w0 + nw]).permute(2, 0, 1).unsqueeze(0)
    view = dst[::-1 if flip_h else 1, ::-1 if flip_w else 1]
    if (flip_h or flip_w or min(nh, nw, *size) == 1 or not out.flags.c_contiguous
            or not _HAS_OUT):
        # Negative strides cannot be a torch `out=`; with a unit extent torch's `out=` form
        # misreads the strides of some channel counts (measured: 5 channels, W = 1); it was
        # checked on contiguous HWC and CHW outputs only.
        y = F.interpolate(x, size=size, mode="bilinear", antialias=recipe.antialias)
        np.copyto(view, y[0].permute(1, 2, 0).numpy())
    else:
        # The `out=` overloads write straight into the (HWC or CHW) output: 1.5x faster than
        # F.interpolate plus a transposing copy.
        resampler = _AA if recipe.antialias else _PLAIN
        resampler(x, list(size), False, None, None,
                  out=torch.from_numpy(view).permute(2, 0, 1).unsqueeze(0))
    _fix_border(view, src, recipe)
    return True
