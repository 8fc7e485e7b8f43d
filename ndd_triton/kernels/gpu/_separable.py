"""Separable 1-D correlation passes on the GPU (gaussian_blur, laplacian), reflect-101 border.

A sample is seen as `[outer, D, H, W, inner]` (kernels/_conv_tables.py). One launch filters the
whole ragged batch along one axis; a program computes a `[BY, BX]` block of one sample:
* `_sep_rows_kernel`, along W: BY rows of the `[outer·D·H, W·C]` view by BX contiguous row
  elements `x·C + c` (channels interleaved; C a constexpr when uniform and <= 4);
* `_sep_cols_kernel`, along H or D: BY consecutive rows of one slice of the `[slices, N, L]`
  view (N the filtered extent, L the contiguous elements below it) by BX of their L elements.
  The `BY + K - 1` rows the K taps read stay in L1: each is fetched from L2 about once.
Blocks whose window lies inside the sample read it directly; edge blocks fold the coordinates
(int32; a `%` only when the window is longer than the sample). A pass carries up to three terms
(laplacian: one per derivative axis), each with its own window per sample: intermediate passes
write each term to float32 scratch, the last one combines them (sum, or `Σ scale·term`) and
rounds into the output.

Summation order mirrors the CPU kernels, so that both backends round alike (checked bit for bit
against OpenCV 5.0 on x86 with AVX2/FMA, except OpenCV's scalar tails at row ends):
* SEQ:   acc = fma(x[k], w[k], acc), k = 0..K-1, from 0 (OpenCV's row filters, torch's `add_`);
* SYM:   acc = fma(x[c], w[c], bias), then acc = fma(x[c+j] + x[c-j], w[c+j], acc) (OpenCV's
  symmetric column filter; `bias` is its `delta`, the +0.5 of unsigned outputs);
* SMALL: SEQ from 7 taps; 3 or 5 taps as OpenCV's float32 symmetric row filter:
  fma(x[c+2] + x[c-2], w[c+2], fma(x[c], w[c], (x[c-1] + x[c+1])·w[c+1])).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
import triton
import triton.language as tl

from ndd_triton.kernels.gpu import _conv
from ndd_triton.kernels.gpu._conv import (
    _helper_border,
    _helper_store_rounded,
    block_shape,
    channel_constexpr,
    view_table,
)
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tiles import (
    _helper_find_tile,
    _helper_plane_block,
    _helper_row_block,
    block_tile_counts,
    grid_of,
    tile_starts,
)

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
EXTENT: tl.constexpr = tl.constexpr(2)  # filtered extent N
ROWS: tl.constexpr = tl.constexpr(3)  # rows (W pass) or slices (H, D passes)
LENGTH: tl.constexpr = tl.constexpr(4)  # contiguous row elements
CHANNELS: tl.constexpr = tl.constexpr(5)
KSIZE: tl.constexpr = tl.constexpr(6)  # window size of terms 0, 1, 2
TAP: tl.constexpr = tl.constexpr(9)  # offset of the window of terms 0, 1, 2 in `taps`
SCALE: tl.constexpr = tl.constexpr(12)  # offset of the term scales in `taps`
NCOL: tl.constexpr = tl.constexpr(13)
SEQ, SYM, SMALL = 0, 1, 2  # summation orders (module docstring)
SPLIT, SUM, SCALED = 0, 1, 2  # what a pass does with its terms: store each, add, scale and add
ALIGN = 16  # elements: sample offsets of scratch buffers are rounded up to this


@triton.jit
def _helper_row_values(rows, es, x, c, d, n, ch, mask, wide, EDGE: tl.constexpr):
    """float32 values of the block's pixels shifted by `d` along W (reflect-101 at edges)."""
    if EDGE:
        xs, _ = _helper_border(x + d, n, wide, 0)
        off = xs * ch + c
    else:
        off = es + d * ch
    return tl.load(rows + off[None, :], mask=mask, other=0).to(tl.float32)


@triton.jit
def _helper_row_taps(rows, es, x, c, n, ch, k, w, mask, wide, ORDER: tl.constexpr,
                     EDGE: tl.constexpr):  # fmt: skip
    """Σ_j w[j] · x[. + j - k//2] along W in the summation order ORDER (SEQ or SMALL)."""
    r = k // 2
    acc = tl.zeros(mask.shape, dtype=tl.float32)
    small = k <= 5
    if ORDER != 2:
        small = False
    if small:
        if k > 1:
            pair = _helper_row_values(rows, es, x, c, -1, n, ch, mask, wide, EDGE) + \
                _helper_row_values(rows, es, x, c, 1, n, ch, mask, wide, EDGE)  # fmt: skip
            acc = pair * tl.load(w + r + 1)
        centre = _helper_row_values(rows, es, x, c, 0, n, ch, mask, wide, EDGE)
        acc = tl.fma(centre, tl.load(w + r), acc)
        if k > 3:
            pair = _helper_row_values(rows, es, x, c, 2, n, ch, mask, wide, EDGE) + \
                _helper_row_values(rows, es, x, c, -2, n, ch, mask, wide, EDGE)  # fmt: skip
            acc = tl.fma(pair, tl.load(w + r + 2), acc)
    else:
        for j in range(0, k):
            value = _helper_row_values(rows, es, x, c, j - r, n, ch, mask, wide, EDGE)
            acc = tl.fma(value, tl.load(w + j), acc)
    return acc


@triton.jit
def _helper_col_values(base, ys, es, d, n, length, mask, wide, EDGE: tl.constexpr):
    """float32 values of the block's rows shifted by `d` (reflect-101 at the slice's ends)."""
    if EDGE:
        src_rows, _ = _helper_border(ys + d, n, wide, 0)
    else:
        src_rows = ys + d
    return tl.load(base + (src_rows * length)[:, None] + es[None, :], mask=mask,
                   other=0).to(tl.float32)  # fmt: skip


@triton.jit
def _helper_col_taps(base, ys, es, n, length, k, w, bias, mask, wide, ORDER: tl.constexpr,
                     EDGE: tl.constexpr):  # fmt: skip
    """Σ_j w[j] · x[. + j - k//2] across rows in the summation order ORDER (SEQ or SYM)."""
    r = k // 2
    if ORDER == 1:
        acc = tl.full(mask.shape, bias, dtype=tl.float32)
        centre = _helper_col_values(base, ys, es, 0, n, length, mask, wide, EDGE)
        acc = tl.fma(centre, tl.load(w + r), acc)
        for j in range(1, r + 1):
            pair = _helper_col_values(base, ys, es, j, n, length, mask, wide, EDGE) + \
                _helper_col_values(base, ys, es, -j, n, length, mask, wide, EDGE)  # fmt: skip
            acc = tl.fma(pair, tl.load(w + r + j), acc)
    else:
        acc = tl.zeros(mask.shape, dtype=tl.float32)
        for j in range(0, k):
            value = _helper_col_values(base, ys, es, j - r, n, length, mask, wide, EDGE)
            acc = tl.fma(value, tl.load(w + j), acc)
    return acc


@triton.jit
def _helper_combine(total, acc, taps, table, t: tl.constexpr, COMBINE: tl.constexpr):
    """Running result of the last pass: Σ terms (SUM) or Σ scale · term (SCALED, torch's order)."""
    if COMBINE == 2:
        scale = tl.load(taps + tl.load(table + SCALE) + t)
        if t == 0:  # noqa: SIM108 (a constexpr branch: only one side is compiled)
            total = acc * scale
        else:
            total = tl.fma(acc, scale, total)
    elif t == 0:
        total = acc
    else:
        total = total + acc
    return total


@triton.jit
def _sep_rows_kernel(src, dst, taps, samples, tiles, src_term, dst_term, TERMS: tl.constexpr,
                     ORDER: tl.constexpr, COMBINE: tl.constexpr, ROUND: tl.constexpr,
                     LO: tl.constexpr, HI: tl.constexpr, C: tl.constexpr,
                     ALIGNED: tl.constexpr, IDX64: tl.constexpr, BY: tl.constexpr,
                     BX: tl.constexpr):  # fmt: skip
    """out[t][row, x, c] = Σ_j w_t[j] · in[t][row, reflect(x + j - K_t//2), c] for one block."""
    ity = tl.int64 if IDX64 else tl.int32  # row offsets only: coordinates stay int32
    sample, t = _helper_find_tile(tiles)
    table = samples + sample * NCOL
    n = tl.load(table + EXTENT).to(tl.int32)
    length = tl.load(table + LENGTH).to(tl.int32)
    y0, e0 = _helper_row_block(t, length, BY, BX)
    ys = y0 + tl.arange(0, BY)
    if C > 0:  # noqa: SIM108 (a constexpr branch: only one side is compiled)
        ch = C
    else:
        ch = tl.load(table + CHANNELS).to(tl.int32)
    in_off = tl.load(table + IN_OFF)
    out_off = tl.load(table + OUT_OFF)
    if ALIGNED:  # the host checked: offsets and row lengths are multiples of 16 elements
        e0 = tl.multiple_of(e0, 16)
        length = tl.multiple_of(length, 16)
        in_off = tl.multiple_of(in_off, 16)
        out_off = tl.multiple_of(out_off, 16)
    es = e0 + tl.arange(0, BX)
    mask = (ys < tl.load(table + ROWS).to(tl.int32))[:, None] & (es < length)[None, :]
    x = es // ch
    c = es - x * ch
    x_last = (tl.minimum(e0 + BX, length) - 1) // ch
    row_offs = ys.to(ity) * length.to(ity)
    in_rows = src + in_off + row_offs[:, None]
    out_rows = dst + out_off + row_offs[:, None]
    total = tl.zeros([BY, BX], dtype=tl.float32)
    for t in tl.static_range(TERMS):
        k = tl.load(table + KSIZE + t).to(tl.int32)
        w = taps + tl.load(table + TAP + t)
        r = k // 2
        rows = in_rows + t * src_term
        if (e0 // ch >= r) & (x_last + r < n):
            acc = _helper_row_taps(rows, es, x, c, n, ch, k, w, mask, r >= n, ORDER, False)
        else:
            acc = _helper_row_taps(rows, es, x, c, n, ch, k, w, mask, r >= n, ORDER, True)
        if COMBINE == 0:
            tl.store(out_rows + t * dst_term + es[None, :], acc, mask=mask)
        else:
            total = _helper_combine(total, acc, taps, table, t, COMBINE)
    if COMBINE != 0:
        _helper_store_rounded(out_rows + es[None, :], total, mask, ROUND, LO, HI)


@triton.jit
def _helper_col_out_rows(dst, table, slice_off, ys, wide_length, ALIGNED: tl.constexpr):
    """Output row pointers of a column block, made where they are stored: built before the tap
    loop, the 64-bit output base lived through it (spilled by ptxas at 32 x 64 float32)."""
    out_off = tl.load(table + OUT_OFF)
    if ALIGNED:
        out_off = tl.multiple_of(out_off, 16)
    return dst + out_off + slice_off + (ys.to(wide_length.dtype) * wide_length)[:, None]


@triton.jit
def _sep_cols_kernel(src, dst, taps, samples, tiles, src_term, dst_term, TERMS: tl.constexpr,
                     ORDER: tl.constexpr, BIAS: tl.constexpr, COMBINE: tl.constexpr,
                     ROUND: tl.constexpr, LO: tl.constexpr, HI: tl.constexpr,
                     ALIGNED: tl.constexpr, IDX64: tl.constexpr, BY: tl.constexpr,
                     BX: tl.constexpr):  # fmt: skip
    """out[t][s, y, e] = Σ_j w_t[j] · in[t][s, reflect(y + j - K_t//2), e] for one block."""
    ity = tl.int64 if IDX64 else tl.int32  # row offsets only: coordinates stay int32
    sample, t = _helper_find_tile(tiles)
    table = samples + sample * NCOL
    n = tl.load(table + EXTENT).to(tl.int32)
    length = tl.load(table + LENGTH).to(tl.int32)
    slice_index, y0, e0 = _helper_plane_block(t, n, length, BY, BX)
    # y0 again as `first % n`: an int32 remainder per program that hides from the compiler that
    # y0 is a multiple of BY, which made ptxas spill the 16 x 128 uint8 pass (16 bytes)
    first = slice_index * n + y0
    y0 = first % n
    in_off = tl.load(table + IN_OFF)
    if ALIGNED:  # the host checked: offsets and row lengths are multiples of 16 elements
        e0 = tl.multiple_of(e0, 16)
        length = tl.multiple_of(length, 16)
        in_off = tl.multiple_of(in_off, 16)
    ys = y0 + tl.arange(0, BY)
    es = e0 + tl.arange(0, BX)
    mask = (ys < n)[:, None] & (es < length)[None, :]
    wide_length = length.to(ity)
    slice_off = (first - y0).to(ity) * wide_length
    in_base = src + in_off + slice_off
    total = tl.zeros([BY, BX], dtype=tl.float32)
    for t in tl.static_range(TERMS):
        k = tl.load(table + KSIZE + t).to(tl.int32)
        w = taps + tl.load(table + TAP + t)
        r = k // 2
        base = in_base + t * src_term
        bias = BIAS if t == 0 else 0.0
        if (y0 >= r) & (tl.minimum(y0 + BY, n) - 1 + r < n):
            acc = _helper_col_taps(base, ys, es, n, wide_length, k, w, bias, mask, r >= n,
                                   ORDER, False)  # fmt: skip
        else:
            acc = _helper_col_taps(base, ys, es, n, wide_length, k, w, bias, mask, r >= n,
                                   ORDER, True)  # fmt: skip
        if COMBINE == 0:
            out_rows = _helper_col_out_rows(dst, table, slice_off, ys, wide_length, ALIGNED)
            tl.store(out_rows + t * dst_term + es[None, :], acc, mask=mask)
        else:
            total = _helper_combine(total, acc, taps, table, t, COMBINE)
    if COMBINE != 0:
        out_rows = _helper_col_out_rows(dst, table, slice_off, ys, wide_length, ALIGNED)
        _helper_store_rounded(out_rows + es[None, :], total, mask, ROUND, LO, HI)


@dataclass(frozen=True)
class Pass:
    """One launch along `axis` of the 5-D view (1 D, 2 H, 3 W).

    `windows` holds, per term, the samples' `(offsets, sizes)` of their window in the call's
    `TapBook`; `order` is the summation order, `bias` SYM's starting value for term 0.
    """

    axis: int
    windows: list[tuple[np.ndarray, np.ndarray]]
    order: int = SEQ
    bias: float = 0.0


@dataclass
class TapBook:
    """The float32 windows (and term scales) of one call, each distinct one stored once."""

    chunks: list[np.ndarray] = field(default_factory=list)
    where: dict[bytes, int] = field(default_factory=dict)
    size: int = 0

    def add(self, values: np.ndarray) -> int:
        """Offset of `values` (as float32) in the buffer, appending them if new."""
        flat = np.ascontiguousarray(values, dtype=np.float32).reshape(-1)
        key = flat.tobytes()
        if key not in self.where:
            self.where[key] = self.size
            self.chunks.append(flat)
            self.size += flat.size
        return self.where[key]

    def per_sample(self, keys: np.ndarray, make: Callable[[np.ndarray], np.ndarray]
                   ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        """`(offsets, sizes)` per sample of `make(key)`, called once per distinct row of `keys`."""
        rows = np.asarray(keys, dtype=np.float64).reshape(len(keys), -1)
        unique, inverse = np.unique(rows, axis=0, return_inverse=True)
        made = [np.asarray(make(key), dtype=np.float32).reshape(-1) for key in unique]
        offsets = np.array([self.add(m) for m in made], dtype=np.int64)
        sizes = np.array([m.size for m in made], dtype=np.int64)
        inverse = np.asarray(inverse).reshape(-1)
        return offsets[inverse], sizes[inverse]

    def buffer(self) -> np.ndarray:
        """All windows, concatenated."""
        return np.concatenate(self.chunks) if self.chunks else np.zeros(1, np.float32)


def _aligned(*values: np.ndarray) -> bool:
    return all(not np.any(np.asarray(v, dtype=np.int64) % ALIGN) for v in values)


def _pass_table(
    views: np.ndarray,
    axis: int,
    src_off: np.ndarray,
    dst_off: np.ndarray,
    step: Pass,
    scales: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sample table of one pass plus `(slices, extent, length)` of its `[slices, N, L]` view."""
    n = len(views)
    slices = np.prod(views[:, :axis], axis=1, dtype=np.int64)
    extent = views[:, axis]
    length = np.prod(views[:, axis + 1 :], axis=1, dtype=np.int64)
    if axis == 3:  # rows of W·C elements: the kernel splits x and c
        length = extent * views[:, 4]
    sizes = np.ones((n, 3), np.int64)
    taps = np.zeros((n, 3), np.int64)
    for t, (offsets, ksizes) in enumerate(step.windows):
        taps[:, t], sizes[:, t] = offsets, ksizes
    table = np.concatenate([np.stack([src_off, dst_off, extent, slices, length, views[:, 4]],
                                     axis=1), sizes, taps, scales[:, None]],
                           axis=1).astype(np.int64)  # fmt: skip
    return table, slices, np.stack([extent, length], axis=1)


def run_separable(
    run: GpuRun,
    out: GpuBatch,
    inp: GpuBatch,
    span: tuple[int, int],
    passes: list[Pass],
    book: TapBook,
    rounding: tuple[int, float, float],
    scales: np.ndarray | None = None,
) -> None:
    """Launch `passes` in order: input -> float32 scratch -> ... -> `out` (rounded).

    The last pass adds its terms, or with `scales` (per-sample offsets of the term scales in
    `book`) sums `scale · term` in torch's order. Scratch samples start at multiples of ALIGN.
    All tables of all passes travel in one host-to-device copy.
    """
    n = inp.batch_size
    if n == 0 or not int(inp.sizes.sum()):
        return
    views = view_table(inp.shapes, *span)
    terms = len(passes[0].windows)
    padded = (inp.sizes + ALIGN - 1) // ALIGN * ALIGN
    scratch_off = (np.cumsum(padded) - padded).astype(np.int64)
    term_size = int(padded.sum())
    buffers = [run.empty(terms * term_size, torch.float32) for _ in range(min(2, len(passes) - 1))]
    scale_off = scales if scales is not None else np.zeros(n, np.int64)
    idx64 = int(inp.sizes.max()) >= _conv.INT32_LIMIT
    src, src_off, src_term = inp.data, inp.offsets, 0
    launches, host = [], [book.buffer()]
    for p, step in enumerate(passes):
        last = p == len(passes) - 1
        dst, dst_off, dst_term = (out.data, out.offsets, 0) if last else \
            (buffers[p % 2], scratch_off, term_size)  # fmt: skip
        table, slices, shape = _pass_table(views, step.axis, src_off, dst_off, step, scale_off)
        rows_pass = step.axis == 3
        by, bx = block_shape(shape[:, 1], slices if rows_pass else shape[:, 0], not rows_pass)
        host += [table, tile_starts(block_tile_counts(np.ones(n, np.int64) if rows_pass else
                                                      slices, slices if rows_pass else shape[:, 0],
                                                      shape[:, 1], by, bx))]  # fmt: skip
        meta = {"TERMS": terms, "ORDER": step.order, "COMBINE": SPLIT, "ROUND": 0, "LO": 0.0,
                "HI": 0.0, "ALIGNED": _aligned(src_off, dst_off, shape[:, 1], term_size, bx),
                "IDX64": idx64, "BY": by, "BX": bx}  # fmt: skip
        if last:
            meta.update(zip(("ROUND", "LO", "HI"), rounding, strict=True))
            meta["COMBINE"] = SUM if scales is None else SCALED
        if rows_pass:
            meta["C"] = channel_constexpr(views[:, 4])
        else:
            meta["BIAS"] = step.bias
        kernel = _sep_rows_kernel if rows_pass else _sep_cols_kernel
        launches.append((kernel, src, dst, src_term, dst_term, meta))
        src, src_off, src_term = dst, dst_off, dst_term
    taps, *tables = run.upload(*host)
    for p, (kernel, src, dst, src_term, dst_term, meta) in enumerate(launches):
        table, tiles = tables[2 * p], tables[2 * p + 1]
        grid = (grid_of(host[2 + 2 * p]),)
        run.launch(kernel, grid, src, dst, taps, table, tiles, src_term, dst_term, **meta)
