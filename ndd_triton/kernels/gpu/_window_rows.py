"""Row-tiled window copy shared by flip, pad, slice, crop and paste: one launch per batch.

Every output axis reads the source at `s = anchor + step * o` (`step = -1` mirrors), and a
coordinate outside the input reads the fill (pad policy) or is clamped / wrapped / reflected
(the other policies). The output sample is seen as rows: up to five *outer* axes (one coordinate
per row), a *column* axis, and, when the last axis is copied whole with the same extent 2..4 in
every sample, a *group* axis of G (constexpr) elements that travels with its column (the
channels of an HWC pixel), so a row is the channel-interleaved `W * C` run.

A program copies ROWS rows x BLOCK columns of one sample. Per row (not per element) it unravels
the row index, maps and folds the outer coordinates and forms the row's source address; the
columns of a forward row are then the contiguous run `anchor * G + j` of the source row, with
inside/outside decided by two per-sample bounds, so loads and stores are contiguous and (when
the host proves 16-byte alignment, `ALIGN`) vectorised. Only mirrored rows (flip) and border
columns of folding policies divide, by the constexpr G. Offsets inside a sample are int32
(`IDX64` for samples of 2**31 elements or more); only the sample base is int64.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun, row_block
from ndd_triton.kernels.gpu._tensor_copy import _helper_dali_convert
from ndd_triton.kernels.gpu._tiles import (
    _helper_find_tile,
    _helper_row_block,
    grid_of,
    row_tile_counts,
    tile_starts,
)

# sample table columns
IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
NROWS: tl.constexpr = tl.constexpr(2)  # rows (product of the outer extents)
ROWLEN: tl.constexpr = tl.constexpr(3)  # elements per output row (column extent * G)
C_ANCH: tl.constexpr = tl.constexpr(4)  # column axis: source coordinate of column 0
C_STEP: tl.constexpr = tl.constexpr(5)  # +1, or -1 (mirrored; never outside)
C_IN: tl.constexpr = tl.constexpr(6)  # column axis input extent
C_LO: tl.constexpr = tl.constexpr(7)  # row elements [C_LO, C_HI) read inside the input
C_HI: tl.constexpr = tl.constexpr(8)
C_FWD: tl.constexpr = tl.constexpr(9)  # forward rows: source offset of element 0 (anchor * G)
O_EXT: tl.constexpr = tl.constexpr(10)  # 5 values per block: outer axes, outermost first
O_ANCH: tl.constexpr = tl.constexpr(15)
O_STEP: tl.constexpr = tl.constexpr(20)
O_IN: tl.constexpr = tl.constexpr(25)
O_STRIDE: tl.constexpr = tl.constexpr(30)  # source element strides
NCOL: tl.constexpr = tl.constexpr(35)
NOUTER = 5
N_OUTER: tl.constexpr = tl.constexpr(NOUTER)

# border policies (the codes of ops/slice.py)
PAD = 0
EDGE = 1
REFLECT_1001 = 2
REFLECT_101 = 3
WRAP = 4
P_PAD: tl.constexpr = tl.constexpr(PAD)
P_WRAP: tl.constexpr = tl.constexpr(WRAP)
P_REFLECT_1001: tl.constexpr = tl.constexpr(REFLECT_1001)
P_REFLECT_101: tl.constexpr = tl.constexpr(REFLECT_101)
# conversions: none, DALI's cast (slice), crop's fp32 clamp-and-round
CONV_NONE = 0
CONV_DALI = 1
CONV_CROP = 2
# channel position (CH): -1 none, 0..4 an outer axis, the column axis, or the group axis
CH_COLUMN = 5
CH_GROUP = 6
C_COLUMN: tl.constexpr = tl.constexpr(CH_COLUMN)
C_GROUP: tl.constexpr = tl.constexpr(CH_GROUP)


@triton.jit
def _helper_fold(c, extent, POLICY: tl.constexpr):
    """Map source coordinates `c` into [0, extent) by the out-of-bounds policy."""
    if POLICY == P_WRAP:
        m = c % extent
        c = tl.where(m < 0, m + extent, m)
    elif POLICY == P_REFLECT_1001:
        period = 2 * extent
        m = c % period
        m = tl.where(m < 0, m + period, m)
        c = tl.where(m >= extent, period - 1 - m, m)
    elif POLICY == P_REFLECT_101:
        period = tl.maximum(2 * extent - 2, 1)
        m = c % period
        m = tl.where(m < 0, m + period, m)
        c = tl.where(m >= extent, period - m, m)
    else:  # edge; pad clamps only to keep the (masked) address valid
        c = tl.minimum(tl.maximum(c, 0), tl.maximum(extent - 1, 0))
    return c


@triton.jit
def _helper_group_fill(frow, g, G: tl.constexpr):
    """`frow[g]` for group indices `g < G` (constexpr, <= 4): scalar loads and selects, not a
    per-element gather (the fill row holds at least G values)."""
    fill = tl.zeros(g.shape, dtype=frow.dtype.element_ty) + tl.load(frow)
    for k in tl.static_range(1, G):
        fill = tl.where(g == k, tl.load(frow + k), fill)
    return fill


@triton.jit
def _helper_crop_convert(v, DST: tl.constexpr, LO_F: tl.constexpr, HI_F: tl.constexpr):
    """crop's conversion: through fp32; integer outputs saturate, then round half away."""
    v = v.to(tl.float32)
    if not DST.is_floating():
        v = tl.minimum(tl.maximum(v, LO_F), HI_F)
        v = tl.where(v < 0, tl.ceil(v - 0.5), tl.floor(v + 0.5))
    return v.to(DST)


@triton.jit
def _window_rows_kernel(src, dst, samples, fills, tiles, G: tl.constexpr, NOUT: tl.constexpr,
                        POLICY: tl.constexpr, FILL: tl.constexpr, REV: tl.constexpr,
                        CH: tl.constexpr, NF: tl.constexpr, CONV: tl.constexpr,
                        LO: tl.constexpr, HI: tl.constexpr, NANV: tl.constexpr,
                        LO_F: tl.constexpr, HI_F: tl.constexpr, ALIGN: tl.constexpr,
                        IDX64: tl.constexpr, ROWS: tl.constexpr, BLOCK: tl.constexpr):  # fmt: skip
    """Copy ROWS x BLOCK elements of one output sample from its source window.

    out[row r, element j] = src[in_off + sum_d fold(anchor_d + step_d * o_d(r)) * stride_d
                                + col(j)], col(j) = anchor * G + j forward, and
    (anchor - j // G) * G + j % G mirrored; o_d(r) unravels r over the NOUT innermost outer axes.
    """
    ity = tl.int64 if IDX64 else tl.int32
    sample, t = _helper_find_tile(tiles)
    sample = sample.to(tl.int64)
    row = samples + sample * NCOL
    rowlen = tl.multiple_of(tl.load(row + ROWLEN).to(ity), ALIGN)
    # tile t of the sample: row block t // col_blocks, column block t % col_blocks (one ity
    # divmod per program)
    r0, j0 = _helper_row_block(t.to(ity), rowlen, ROWS, BLOCK)
    r = r0 + tl.arange(0, ROWS)
    j0 = tl.multiple_of(j0, BLOCK)
    j = j0 + tl.arange(0, BLOCK)
    nrows = tl.load(row + NROWS).to(ity)
    # per row: outer coordinates -> source row offset (and inside flag, channel coordinate)
    rem = r
    src_row = tl.zeros([ROWS], dtype=ity)
    row_in = r < nrows
    row_ok = row_in
    ch_row = tl.zeros([ROWS], dtype=ity)
    for d in tl.static_range(NOUT):
        axis = N_OUTER - 1 - d
        ext = tl.load(row + O_EXT + axis).to(ity)
        o = rem % ext
        rem = rem // ext
        c = tl.load(row + O_ANCH + axis).to(ity) + tl.load(row + O_STEP + axis).to(ity) * o
        n = tl.load(row + O_IN + axis).to(ity)
        if POLICY == P_PAD:
            row_in = row_in & (c >= 0) & (c < n)
        stride = tl.multiple_of(tl.load(row + O_STRIDE + axis).to(ity), ALIGN)
        src_row += _helper_fold(c, n, POLICY) * stride
        if axis == CH:
            ch_row = o
    base = src + tl.multiple_of(tl.load(row + IN_OFF), ALIGN)
    anchor = tl.load(row + C_ANCH).to(ity)
    lo = tl.multiple_of(tl.load(row + C_LO).to(ity), ALIGN)
    hi = tl.multiple_of(tl.load(row + C_HI).to(ity), ALIGN)
    col_in = (j >= lo) & (j < hi)
    mask = row_ok[:, None] & (j < rowlen)[None, :]
    fwd = tl.multiple_of(tl.load(row + C_FWD).to(ity), ALIGN)
    forward = src_row[:, None] + (fwd + j)[None, :]
    if FILL:
        inside = row_in[:, None] & col_in[None, :]
        v = tl.load(base + forward, mask=mask & inside, other=0)
    elif REV:
        if tl.load(row + C_STEP) < 0:
            q = j // G
            mirrored = (anchor - q) * G + (j - q * G)
            v = tl.load(base + src_row[:, None] + mirrored[None, :], mask=mask, other=0)
        else:
            v = tl.load(base + forward, mask=mask, other=0)
    elif POLICY == P_PAD:
        v = tl.load(base + forward, mask=mask, other=0)
    else:  # fold the border columns, only in tiles that have some (one gather either way)
        cols = fwd + j
        if (j0 < lo) | (tl.minimum(j0 + BLOCK, rowlen) > hi):
            q = j // G
            folded = _helper_fold(anchor + q, tl.load(row + C_IN).to(ity), POLICY) * G + (j - q * G)
            cols = tl.where(col_in, cols, folded)
        v = tl.load(base + src_row[:, None] + cols[None, :], mask=mask, other=0)
    if CONV == 1:
        v = _helper_dali_convert(v, dst.dtype.element_ty, LO, HI, NANV, LO_F, HI_F)
    elif CONV == 2:
        v = _helper_crop_convert(v, dst.dtype.element_ty, LO_F, HI_F)
    if FILL:
        frow = fills + sample * NF
        if CH == C_GROUP:
            fill = _helper_group_fill(frow, j % G, G)[None, :]
        elif CH == C_COLUMN:
            fill = tl.load(frow + j // G, mask=j < rowlen, other=0)[None, :]
        elif CH >= 0:
            fill = tl.load(frow + ch_row, mask=row_ok, other=0)[:, None]
        else:
            fill = tl.load(frow)
        v = tl.where(inside, v, fill)
    out_row = tl.multiple_of(r * rowlen, ALIGN)
    out = dst + tl.multiple_of(tl.load(row + OUT_OFF), ALIGN) + out_row[:, None] + j[None, :]
    tl.store(out, v.to(dst.dtype.element_ty), mask=mask)


def _contiguous_strides(shapes: np.ndarray) -> np.ndarray:
    """`[N, ndim]` row-major element strides."""
    n, ndim = shapes.shape
    strides = np.ones((n, ndim), dtype=np.int64)
    for d in range(ndim - 2, -1, -1):
        strides[:, d] = strides[:, d + 1] * shapes[:, d + 1]
    return strides


def _group(out_shape: np.ndarray, in_shape: np.ndarray, anchor: np.ndarray, step: np.ndarray
           ) -> int:  # fmt: skip
    """G: the last axis' extent when it is copied whole and is 2..4 in every sample, else 1."""
    if out_shape.shape[1] < 2 or not len(out_shape):
        return 1
    last = out_shape[:, -1]
    whole = (anchor[:, -1] == 0).all() and (step[:, -1] == 1).all() and \
        (in_shape[:, -1] == last).all()  # fmt: skip
    extent = int(last[0])
    return extent if whole and (last == extent).all() and 2 <= extent <= 4 else 1


def _pad_left(table: np.ndarray, rank: int, value: int) -> np.ndarray:
    n, ndim = table.shape
    out = np.full((n, rank), value, np.int64)
    if ndim:
        out[:, rank - ndim :] = table
    return out


def _alignment(table: np.ndarray, sizes: np.ndarray, itemsize: int) -> int:
    """Elements every row start and bound is a multiple of (16 bytes' worth), or 1."""
    vec = max(16 // itemsize, 1)
    live = table[sizes > 0]
    col = _column(live)
    strides = live[:, int(O_STRIDE) : int(O_STRIDE) + NOUTER]
    used = [col(IN_OFF), col(OUT_OFF), col(ROWLEN), col(C_LO), col(C_HI), col(C_FWD), strides]
    return vec if vec > 1 and not any((u % vec).any() for u in used) else 1


def _column(table: np.ndarray) -> Any:
    """`col(NAME)`: the table column of a constexpr column index."""
    return lambda name: table[:, int(name)]


def _sample_table(in_offsets: np.ndarray, out_offsets: np.ndarray, out_shape: np.ndarray,
                  in_shape: np.ndarray, anchor: np.ndarray, step: np.ndarray, g: int
                  ) -> np.ndarray:  # fmt: skip
    """`[N, NCOL]` int64 sample table (the group axis, if any, already dropped)."""
    n, cols = out_shape.shape
    rank = NOUTER + 1
    o_ext, o_in = _pad_left(out_shape, rank, 1), _pad_left(in_shape, rank, 1)
    o_anch, o_step = _pad_left(anchor, rank, 0), _pad_left(step, rank, 1)
    strides = _contiguous_strides(in_shape) * g if cols else np.zeros((n, 0), np.int64)
    table = np.zeros((n, int(NCOL)), np.int64)
    for name, values in ((O_EXT, o_ext), (O_ANCH, o_anch), (O_STEP, o_step), (O_IN, o_in),
                         (O_STRIDE, _pad_left(strides, rank, 0))):  # fmt: skip
        table[:, int(name) : int(name) + NOUTER] = values[:, :NOUTER]
    width, c_anch, c_in = o_ext[:, NOUTER], o_anch[:, NOUTER], o_in[:, NOUTER]
    forward = o_step[:, NOUTER] > 0
    for name, values in (
        (IN_OFF, in_offsets), (OUT_OFF, out_offsets), (NROWS, np.prod(o_ext[:, :NOUTER], axis=1)),
        (ROWLEN, width * g), (C_ANCH, c_anch), (C_STEP, o_step[:, NOUTER]), (C_IN, c_in),
        (C_LO, np.where(forward, np.clip(-c_anch, 0, width), 0) * g),
        (C_HI, np.where(forward, np.clip(c_in - c_anch, 0, width), width) * g),
        (C_FWD, np.where(forward, c_anch * g, 0)),
    ):  # fmt: skip
        table[:, int(name)] = values
    return table


def _needs_fill(table: np.ndarray, live: np.ndarray) -> bool:
    """Whether some live sample's window leaves its input (pad policy: fill read)."""
    t = table[live]
    col = _column(t)
    ext, anch = t[:, int(O_EXT) : int(O_EXT) + NOUTER], t[:, int(O_ANCH) : int(O_ANCH) + NOUTER]
    step, n_in = t[:, int(O_STEP) : int(O_STEP) + NOUTER], t[:, int(O_IN) : int(O_IN) + NOUTER]
    last = anch + step * (ext - 1)  # source coordinate of the last output coordinate
    outer = (np.minimum(anch, last) < 0) | (np.maximum(anch, last) >= n_in)
    columns = (col(C_LO) > 0) | (col(C_HI) < col(ROWLEN))
    return bool(outer.any() or columns.any())


def _nout(table: np.ndarray, live: np.ndarray, ch: int) -> int:
    """Outer axes to unravel: up to the outermost one whose coordinate is not always 0 inside
    the input (and the channel's)."""
    t = table[live]
    ext, anch = t[:, int(O_EXT) : int(O_EXT) + NOUTER], t[:, int(O_ANCH) : int(O_ANCH) + NOUTER]
    varying = ((ext > 1) | (anch != 0) | (t[:, int(O_IN) : int(O_IN) + NOUTER] < 1)).any(axis=0)
    nout = NOUTER - int(np.argmax(varying)) if varying.any() else 0
    return max(nout, NOUTER - ch) if 0 <= ch < NOUTER else nout


@dataclass(slots=True)
class WindowPlan:
    """A `_window_rows_kernel` launch as data: the sample table, the fills, the tile starts and
    the constexprs (REV: mirrored rows exist; read from the table at launch)."""

    table: np.ndarray
    fills: np.ndarray
    tiles: np.ndarray
    meta: dict[str, Any]


def window_plan(out: GpuBatch, src_itemsize: int, in_offsets: np.ndarray, in_shape: np.ndarray,
                anchor: np.ndarray, step: np.ndarray | None = None, *, policy: int = PAD,
                fills: np.ndarray | None = None, channel_axis: int = -1,
                conv: dict[str, Any] | None = None) -> WindowPlan:  # fmt: skip
    """The launch `window_rows` makes (see there), without making it."""
    n, ndim = out.shapes.shape
    out_shape = out.shapes.astype(np.int64)
    in_shape = np.asarray(in_shape, np.int64).reshape(n, ndim)
    anchor = np.asarray(anchor, np.int64).reshape(n, ndim)
    step = np.ones((n, ndim), np.int64) if step is None else np.asarray(step, np.int64)
    g = _group(out_shape, in_shape, anchor, step)
    cols = ndim - 1 if g > 1 else ndim  # axes left once the group is dropped
    if cols > NOUTER + 1:
        raise ValueError(f"samples with {ndim} dimensions exceed the GPU kernels' limit of 6")
    ch = -1 if channel_axis < 0 else CH_GROUP if channel_axis >= cols else \
        CH_COLUMN if channel_axis == cols - 1 else channel_axis + NOUTER - (cols - 1)  # fmt: skip
    table = _sample_table(np.asarray(in_offsets, np.int64), out.offsets, out_shape[:, :cols],
                          in_shape[:, :cols], anchor[:, :cols], step[:, :cols], g)  # fmt: skip
    col = _column(table)
    sizes = col(NROWS) * col(ROWLEN)
    live = sizes > 0
    need_fill = policy == PAD and _needs_fill(table, live)
    if need_fill and fills is None:
        raise ValueError("window_rows: the window leaves the input but no fill was given")
    fills = np.zeros((n, 1), out.dtype.numpy_dtype) if fills is None else fills
    fills = np.ascontiguousarray(fills).reshape(n, -1)
    if 1 < fills.shape[1] < g:  # the group fill reads G values: repeat the last
        fills = np.concatenate([fills, np.repeat(fills[:, -1:], g - fills.shape[1], axis=1)], 1)
    rows_per_tile, block = row_block(col(NROWS), col(ROWLEN))
    tiles = tile_starts(row_tile_counts(col(NROWS), col(ROWLEN), rows_per_tile, block))
    in_sizes = np.prod(in_shape, axis=1)
    idx64 = max(int(sizes.max(initial=0)), int(in_sizes.max(initial=0))) >= 2**31
    itemsize = max(out.data.element_size(), src_itemsize)
    conv = conv or {"CONV": CONV_NONE, "LO": 0, "HI": 0, "NANV": 0, "LO_F": 0.0, "HI_F": 0.0}
    meta = dict(G=g, NOUT=_nout(table, live, ch), POLICY=policy, FILL=need_fill,
                CH=ch if need_fill and fills.shape[1] > 1 else -1, NF=fills.shape[1], **conv,
                ALIGN=_alignment(table, sizes, itemsize), IDX64=idx64,
                ROWS=rows_per_tile, BLOCK=block)  # fmt: skip
    return WindowPlan(table, fills, tiles, meta)


def launch_window(run: GpuRun, plan: WindowPlan, src: Any, out: GpuBatch,
                  table: np.ndarray | None = None) -> None:  # fmt: skip
    """Launch a plan (`table`: another sample table of the same structure, e.g. other
    mirrored axes)."""
    table = plan.table if table is None else table
    col = _column(table)
    live = col(NROWS) * col(ROWLEN) > 0
    rev = bool((col(C_STEP)[live] < 0).any()) and not plan.meta["FILL"]
    with np.errstate(over="ignore", invalid="ignore"):
        run.launch(_window_rows_kernel, (grid_of(plan.tiles),), src, out.data, table, plan.fills,
                   plan.tiles, REV=rev, **plan.meta)  # fmt: skip


def window_rows(run: GpuRun, out: GpuBatch, src: Any, in_offsets: np.ndarray,
                in_shape: np.ndarray, anchor: np.ndarray, step: np.ndarray | None = None, *,
                policy: int = PAD, fills: np.ndarray | None = None, channel_axis: int = -1,
                conv: dict[str, Any] | None = None) -> None:  # fmt: skip
    """Launch `_window_rows_kernel` once for the batch.

    `in_shape`, `anchor`, `step` (+1/-1, default +1) are `[N, ndim]` like `out.shapes`; the
    sources are contiguous samples of `src` at `in_offsets`. `fills` (`[N, NF]`, output dtype)
    is indexed by the output coordinate along `channel_axis` (NF > 1) and read by outside
    elements of the pad policy. Mirrored axes must stay inside the input. `conv`: the
    conversion constexprs (`CONV`, `LO`, `HI`, `NANV`, `LO_F`, `HI_F`), default none.
    """
    plan = window_plan(out, src.element_size(), in_offsets, in_shape, anchor, step,
                       policy=policy, fills=fills, channel_axis=channel_axis, conv=conv)
    launch_window(run, plan, src, out)
