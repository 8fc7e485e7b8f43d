"""Data-movement kernels shared by the tensor operators (cast, transpose, reshape, cat, full...).

* `gather`: every output element reads `src[in_off + sum(coord[d] * stride[d])]`, where `coord`
  are the element's output coordinates. Permuted strides give `transpose`, zero strides give
  NumPy broadcasting (`full`, `zeros`), no strides a flat copy (`copy`, `reshape`, `squeeze`,
  `cast`). The output is tiled in rows: the host merges output axes that the strides let it
  merge, the last axis (with a small last axis as a constexpr group G travelling with it) is the
  row, and each program unravels its row indices once per row (int32), not per element; a row
  that is contiguous in the source is read as one contiguous, vectorisable run. The stored
  value goes through `_helper_dali_convert` (round half away from zero, saturate; DALI's cast
  rules) when dtypes differ.
* `pieces`: copies blocks of rows into a wider destination row, the shape of `cat` and `stack`
  (see `kernels/gpu/concat.py`); a program copies ROWS rows x BLOCK elements of one piece.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import triton
import triton.language as tl

from ndd_triton.core.dtype import DType
from ndd_triton.kernels.gpu._common import MAX_RANK
from ndd_triton.kernels.gpu._tables import (
    ROW_TILE_ELEMENTS,
    GpuBatch,
    GpuRun,
    row_block,
)
from ndd_triton.kernels.gpu._tiles import (
    _helper_find_tile,
    _helper_row_block,
    grid_of,
    row_tile_counts,
    tile_starts,
)

G_IN_OFF: tl.constexpr = tl.constexpr(0)
G_OUT_OFF: tl.constexpr = tl.constexpr(1)
G_ROWS: tl.constexpr = tl.constexpr(2)
G_ROWLEN: tl.constexpr = tl.constexpr(3)  # row elements: column extent * G
G_CSTRIDE: tl.constexpr = tl.constexpr(4)  # source stride of the column axis
G_GSTRIDE: tl.constexpr = tl.constexpr(5)  # source stride of the group axis
G_SHAPE: tl.constexpr = tl.constexpr(6)  # 5 outer output extents, outermost first
G_STRIDE: tl.constexpr = tl.constexpr(11)  # their 5 source strides (elements)
G_NCOL: tl.constexpr = tl.constexpr(16)
G_OUTER: tl.constexpr = tl.constexpr(5)
NOUTER = 5


@triton.jit
def _helper_to_float(x, DST: tl.constexpr):
    """`x.to(DST)`, a float16 NaN widened to DST's quiet NaN (0x7fc00000, 0x7ff8...). On the
    device the widened NaN's bits depend on where Triton places the conversion (PTX's f16 -> f32
    makes 0x7fffffff, a direct f16 -> f64 keeps the payload): the cast kernel and compile mode's
    chains must agree, and agree with NumPy on a quiet NaN."""
    r = x.to(DST)
    if x.dtype.is_fp16() and DST.primitive_bitwidth > 16:
        r = tl.where(x != x, float("nan"), r)
    return r


@triton.jit
def _helper_dali_convert(x, DST: tl.constexpr, LO: tl.constexpr, HI: tl.constexpr,
                         NANV: tl.constexpr, LO_F: tl.constexpr, HI_F: tl.constexpr):  # fmt: skip
    """Convert `x` to DST as DALI does: float->int rounds half away and saturates, int clamps."""
    if DST.is_floating():
        return _helper_to_float(x, DST)
    elif DST.is_int1():
        if x.dtype.is_fp64():  # DALI rounds first: |x| < 0.5 is False, NaN is True
            return (tl.abs(x) >= 0.5) | (x != x)
        elif x.dtype.is_floating():
            xf = x.to(tl.float32)
            return (tl.abs(xf) >= 0.5) | (xf != xf)
        else:
            return x != 0
    elif x.dtype.is_floating():
        if x.dtype.is_fp64():  # noqa: SIM108 (static branch on a dtype inside a Triton kernel)
            xf = x
        else:
            xf = x.to(tl.float32)
        whole = tl.where(xf < 0, tl.ceil(xf), tl.floor(xf))  # trunc, exact in fp
        frac = xf - whole
        r = whole + tl.where(frac >= 0.5, 1.0, 0.0) - tl.where(frac <= -0.5, 1.0, 0.0)
        nan = xf != xf
        big = r >= HI_F
        small = r <= LO_F
        safe = tl.where(nan | big | small, 0.0, r).to(DST)  # in range: exact conversion
        res = tl.where(small, tl.full(x.shape, LO, DST), safe)
        res = tl.where(big, tl.full(x.shape, HI, DST), res)
        return tl.where(nan, tl.full(x.shape, NANV, DST), res)
    elif x.dtype.is_int1():
        return x.to(DST)
    else:
        if x.dtype.is_uint64():  # noqa: SIM108 (static branch on a dtype inside a Triton kernel)
            x = tl.where(x > HI, HI, x).to(tl.int64)  # HI <= INT64_MAX here (host clips)
        else:
            x = x.to(tl.int64)
        return tl.minimum(tl.maximum(x, LO), HI).to(DST)


@triton.jit
def _gather_kernel(src, dst, samples, tiles, G: tl.constexpr, NOUT: tl.constexpr,
                   CONTIG: tl.constexpr, CONVERT: tl.constexpr, LO: tl.constexpr,
                   HI: tl.constexpr, NANV: tl.constexpr, LO_F: tl.constexpr,
                   HI_F: tl.constexpr, ALIGN_IN: tl.constexpr, ALIGN_OUT: tl.constexpr,
                   IDX64: tl.constexpr, ROWS: tl.constexpr, BLOCK: tl.constexpr):  # fmt: skip
    """ROWS x BLOCK elements of one sample: dst[r, j] = convert(src[in_off + row(r) + col(j)]).

    row(r) = sum_d o_d(r) * stride_d over the NOUT innermost outer axes (o_d unravels r);
    col(j) = j when the row is contiguous in the source (CONTIG), else
    (j // G) * column_stride + (j % G) * group_stride.
    """
    ity = tl.int64 if IDX64 else tl.int32
    sample, t = _helper_find_tile(tiles)
    row = samples + sample.to(tl.int64) * G_NCOL
    rowlen = tl.multiple_of(tl.load(row + G_ROWLEN).to(ity), ALIGN_OUT)
    r0, j0 = _helper_row_block(t.to(ity), rowlen, ROWS, BLOCK)
    r = r0 + tl.arange(0, ROWS)
    j = tl.multiple_of(j0, BLOCK) + tl.arange(0, BLOCK)
    mask = (r < tl.load(row + G_ROWS).to(ity))[:, None] & (j < rowlen)[None, :]
    rem = r
    src_row = tl.zeros([ROWS], dtype=ity)
    for d in tl.static_range(NOUT):
        axis = G_OUTER - 1 - d
        extent = tl.load(row + G_SHAPE + axis).to(ity)
        stride = tl.multiple_of(tl.load(row + G_STRIDE + axis).to(ity), ALIGN_IN)
        src_row += (rem % extent) * stride
        rem = rem // extent
    if CONTIG:
        col = j
    else:
        q = j // G
        col = q * tl.load(row + G_CSTRIDE).to(ity) + (j - q * G) * tl.load(row + G_GSTRIDE).to(ity)
    base = src + tl.multiple_of(tl.load(row + G_IN_OFF), ALIGN_IN)
    val = tl.load(base + src_row[:, None] + col[None, :], mask=mask)
    if CONVERT:
        val = _helper_dali_convert(val, dst.dtype.element_ty, LO, HI, NANV, LO_F, HI_F)
    out = dst + tl.multiple_of(tl.load(row + G_OUT_OFF), ALIGN_OUT)
    tl.store(out + tl.multiple_of(r * rowlen, ALIGN_OUT)[:, None] + j[None, :], val, mask=mask)


T_IN_OFF: tl.constexpr = tl.constexpr(0)
T_OUT_OFF: tl.constexpr = tl.constexpr(1)
T_P: tl.constexpr = tl.constexpr(2)  # extent of the source-contiguous output axis p
T_L: tl.constexpr = tl.constexpr(3)  # extent of the last output axis l
T_P_OUT: tl.constexpr = tl.constexpr(4)  # output stride of p
T_L_IN: tl.constexpr = tl.constexpr(5)  # source stride of l
T_PBLOCKS: tl.constexpr = tl.constexpr(6)  # blocks of BP along p
T_EXT: tl.constexpr = tl.constexpr(7)  # 4 other output extents, outermost first
T_SRC: tl.constexpr = tl.constexpr(11)  # their source strides
T_DST: tl.constexpr = tl.constexpr(15)  # their output strides
T_NCOL: tl.constexpr = tl.constexpr(19)
T_OUTER: tl.constexpr = tl.constexpr(4)


@triton.jit
def _transpose_tiles_kernel(src, dst, samples, tiles, NOUT: tl.constexpr, CONVERT: tl.constexpr,
                            LO: tl.constexpr, HI: tl.constexpr, NANV: tl.constexpr,
                            LO_F: tl.constexpr, HI_F: tl.constexpr, ALIGN_IN: tl.constexpr,
                            ALIGN_OUT: tl.constexpr, IDX64: tl.constexpr, BP: tl.constexpr,
                            BL: tl.constexpr):  # fmt: skip
    """One BP x BL tile of a transpose: dst[p, col] = convert(src[p + col * col_stride]).

    p is the output axis that is contiguous in the source, col the output's last axis; the other
    axes give the tile's base addresses (unravelled once per program). Loads run along p and
    stores along col, both contiguous: the compiler stages the tile through shared memory.
    """
    ity = tl.int64 if IDX64 else tl.int32
    sample, tile = _helper_find_tile(tiles)
    row = samples + sample.to(tl.int64) * T_NCOL
    blocks = tl.load(row + T_PBLOCKS).to(ity)
    # tile -> (row t of the (outer, p block) rows, column block): scalars, once per program
    t, col0 = _helper_row_block(tile.to(ity), tl.load(row + T_L).to(ity), 1, BL)
    outer = t // blocks
    p = (t - outer * blocks) * BP + tl.arange(0, BP)
    col = tl.multiple_of(col0, BL) + tl.arange(0, BL)
    src_at = tl.multiple_of(tl.load(row + T_IN_OFF), ALIGN_IN)
    dst_at = tl.multiple_of(tl.load(row + T_OUT_OFF), ALIGN_OUT)
    for d in tl.static_range(NOUT):  # per program, not per element
        axis = T_OUTER - 1 - d
        extent = tl.load(row + T_EXT + axis).to(ity)
        o = outer % extent
        outer = outer // extent
        src_at += o * tl.multiple_of(tl.load(row + T_SRC + axis), ALIGN_IN)
        dst_at += o * tl.multiple_of(tl.load(row + T_DST + axis), ALIGN_OUT)
    mask = (p < tl.load(row + T_P).to(ity))[:, None] & (
        col < tl.multiple_of(tl.load(row + T_L).to(ity), ALIGN_OUT)
    )[None, :]
    l_in = tl.multiple_of(tl.load(row + T_L_IN).to(ity), ALIGN_IN)
    val = tl.load(src + src_at + p[:, None] + (col * l_in)[None, :], mask=mask)
    if CONVERT:
        val = _helper_dali_convert(val, dst.dtype.element_ty, LO, HI, NANV, LO_F, HI_F)
    p_out = tl.multiple_of(tl.load(row + T_P_OUT).to(ity), ALIGN_OUT)
    tl.store(dst + dst_at + (p * p_out)[:, None] + col[None, :], val, mask=mask)


def _transpose_tiles(run: GpuRun, out: GpuBatch, src: Any, src_offsets: np.ndarray,
                     src_dtype: DType, shapes: np.ndarray, strides: np.ndarray, p: int
                     ) -> None:  # fmt: skip
    """Launch `_transpose_tiles_kernel`: output axis `p` has source stride 1 in every sample."""
    n, ndim = shapes.shape
    out_strides = np.ones((n, ndim), np.int64)
    for d in range(ndim - 2, -1, -1):
        out_strides[:, d] = out_strides[:, d + 1] * shapes[:, d + 1]
    others = [d for d in range(ndim - 1) if d != p]
    ext, p_ext, l_ext = shapes[:, others], shapes[:, p], shapes[:, -1]
    bp = min(1 << (max(int(p_ext.max(initial=1)), 1) - 1).bit_length(), 64)
    bl = min(
        max(ROW_TILE_ELEMENTS // bp, 1), 1 << (max(int(l_ext.max(initial=1)), 1) - 1).bit_length()
    )
    blocks = (p_ext + bp - 1) // bp
    table = np.concatenate([np.asarray(src_offsets, np.int64)[:, None], out.offsets[:, None],
                            p_ext[:, None], l_ext[:, None], out_strides[:, p:p + 1],
                            strides[:, -1:], blocks[:, None], _pad_left(ext, 4, 1),
                            _pad_left(strides[:, others], 4, 0),
                            _pad_left(out_strides[:, others], 4, 0)], axis=1)  # fmt: skip
    rows = np.prod(ext, axis=1) * blocks
    tiles = tile_starts(row_tile_counts(rows, l_ext, 1, bl))
    idx64 = bool((np.abs(strides) * shapes).sum(axis=1).max(initial=0) >= 2**31) or \
        bool((out.sizes >= 2**31).any())  # fmt: skip
    live = rows * l_ext > 0
    vec_out = max(16 // out.data.element_size(), 1)
    vec_in = max(16 // max(src.element_size(), out.data.element_size()), 1)
    align_out = _aligned(vec_out, table[live][:, [1, 3, 4, 15, 16, 17, 18]])
    align_in = _aligned(vec_in, table[live][:, [0, 5, 11, 12, 13, 14]])
    with np.errstate(over="ignore", invalid="ignore"):
        run.launch(_transpose_tiles_kernel, (grid_of(tiles),), src, out.data, table, tiles,
                   NOUT=len(others), **convert_meta(src_dtype, out.dtype), ALIGN_IN=align_in,
                   ALIGN_OUT=align_out, IDX64=idx64, BP=bp, BL=bl)  # fmt: skip


def convert_meta(src: DType, dst: DType) -> dict[str, Any]:
    """Constexpr arguments of `_helper_dali_convert` for a src -> dst conversion."""
    if src == dst:
        return {"CONVERT": False, "LO": 0, "HI": 0, "NANV": 0, "LO_F": 0.0, "HI_F": 0.0}
    if not dst.is_integer:
        return {"CONVERT": True, "LO": 0, "HI": 0, "NANV": 0, "LO_F": 0.0, "HI_F": 0.0}
    info = np.iinfo(dst.numpy_dtype)
    lo, hi = int(info.min), int(info.max)
    wide = np.float64 if src == DType.parse("f64") else np.float32
    hi_int = min(hi, int(np.iinfo(np.int64).max)) if not src.is_float else hi
    return {"CONVERT": True, "LO": lo, "HI": hi_int, "NANV": lo if dst.bits >= 32 else 0,
            "LO_F": float(wide(lo)), "HI_F": float(wide(hi))}  # fmt: skip


def contiguous_strides(shapes: np.ndarray) -> np.ndarray:
    """`[N, ndim]` row-major element strides of each sample."""
    n, ndim = shapes.shape
    strides = np.ones((n, ndim), dtype=np.int64)
    for d in range(ndim - 2, -1, -1):
        strides[:, d] = strides[:, d + 1] * shapes[:, d + 1]
    return strides


def _merge_axes(shapes: np.ndarray, strides: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Drop axes of extent 1 in every sample and merge neighbours that the strides of every
    sample let act as one axis (`stride[d] == stride[d + 1] * extent[d + 1]`)."""
    keep = (shapes != 1).any(axis=0)
    shapes, strides = shapes[:, keep], strides[:, keep]
    d = shapes.shape[1] - 2
    while d >= 0:
        if (strides[:, d] == strides[:, d + 1] * shapes[:, d + 1]).all():
            shapes = np.concatenate([shapes[:, :d], shapes[:, d:d + 1] * shapes[:, d + 1:d + 2],
                                     shapes[:, d + 2:]], axis=1)  # fmt: skip
            strides = np.concatenate([strides[:, :d], strides[:, d + 1 :]], axis=1)
        d -= 1
    return shapes, strides


def _pad_left(values: np.ndarray, rank: int, fill: int) -> np.ndarray:
    out = np.full((len(values), rank), fill, np.int64)
    if values.shape[1]:
        out[:, rank - values.shape[1] :] = values
    return out


def _aligned(vec: int, *columns: np.ndarray) -> int:
    """`vec` when every value is a multiple of it, else 1."""
    return vec if vec > 1 and not any((np.asarray(c) % vec).any() for c in columns) else 1


def _source_contiguous_axis(shapes: np.ndarray, strides: np.ndarray) -> int | None:
    """An output axis other than the last with source stride 1 in every sample, when the last
    axis is not contiguous in the source (a transpose that moves the contiguous axis)."""
    if shapes.shape[1] < 2 or not len(shapes) or (strides[:, -1] == 1).all():
        return None
    unit = [d for d in range(shapes.shape[1] - 1) if (strides[:, d] == 1).all()]
    return unit[-1] if unit else None


def gather(run: GpuRun, out: GpuBatch, src: Any, src_offsets: np.ndarray, src_dtype: DType,
           strides: np.ndarray | None = None) -> None:  # fmt: skip
    """Launch once: each output sample reads `src` at `src_offsets` with per-axis `strides`.

    `strides` (`[N, out_ndim]`, elements) defaults to a flat copy; `src` is a device buffer
    or a host NumPy array (uploaded with the tables, e.g. a fill value).
    """
    n = out.batch_size
    if strides is None:
        shapes, strides = out.sizes[:, None], np.ones((n, 1), np.int64)
    else:
        shapes, strides = _merge_axes(out.shapes.astype(np.int64), np.asarray(strides, np.int64))
    ndim = shapes.shape[1]
    p = _source_contiguous_axis(shapes, strides)
    if p is not None and not isinstance(src, np.ndarray):
        _transpose_tiles(run, out, src, src_offsets, src_dtype, shapes, strides, p)
        return
    last = shapes[:, -1] if ndim else np.ones(n, np.int64)
    g = int(last[0]) if ndim >= 2 and n and (last == last[0]).all() and 2 <= last[0] <= 4 else 1
    cols = ndim - 1 if g > 1 else ndim
    if cols > NOUTER + 1:
        raise ValueError(f"samples with {ndim} dimensions exceed the GPU kernels' limit of "
                         f"{MAX_RANK}")  # fmt: skip
    ext = _pad_left(shapes[:, :cols], NOUTER + 1, 1)
    strd = _pad_left(strides[:, :cols], NOUTER + 1, 0)
    g_stride = strides[:, -1] if g > 1 else np.zeros(n, np.int64)
    rows, row_len = np.prod(ext[:, :NOUTER], axis=1), ext[:, NOUTER] * g
    c_stride = strd[:, NOUTER]
    contig = bool(((c_stride == g) & ((g_stride == 1) | (g == 1)) | (row_len <= 1)).all())
    samples = np.concatenate([np.asarray(src_offsets, np.int64)[:, None], out.offsets[:, None],
                              rows[:, None], row_len[:, None], c_stride[:, None],
                              g_stride[:, None], ext[:, :NOUTER], strd[:, :NOUTER]],
                             axis=1)  # fmt: skip
    live = rows * row_len > 0
    nout = NOUTER - int(np.argmax((ext[live, :NOUTER] > 1).any(axis=0))) \
        if (ext[live, :NOUTER] > 1).any() else 0  # fmt: skip
    rows_per_tile, block = row_block(rows, row_len)
    tiles = tile_starts(row_tile_counts(rows, row_len, rows_per_tile, block))
    in_size = np.asarray(src.dtype.itemsize if isinstance(src, np.ndarray) else src.element_size())
    vec_in = max(16 // max(int(in_size), out.data.element_size()), 1)
    align_in = _aligned(vec_in, samples[live, 0], strd[live, :NOUTER]) if contig else 1
    align_out = _aligned(max(16 // out.data.element_size(), 1), out.offsets[live], row_len[live])
    idx64 = bool((rows * row_len >= 2**31).any()) or \
        int(np.abs(strides).max(initial=0)) * int(shapes.max(initial=1)) >= 2**31  # fmt: skip
    # IEEE overflow to inf (f32 -> f16) and NaN from inf - inf in the rounding step are intended
    # (handled by the saturation); NumPy-backed evaluation (the Triton interpreter) would warn
    # about them. A no-op for compiled kernels.
    with np.errstate(over="ignore", invalid="ignore"):
        run.launch(_gather_kernel, (grid_of(tiles),), src, out.data, samples, tiles, G=g, NOUT=nout,
                   CONTIG=contig, **convert_meta(src_dtype, out.dtype), ALIGN_IN=align_in,
                   ALIGN_OUT=align_out, IDX64=idx64, ROWS=rows_per_tile,
                   BLOCK=block)  # fmt: skip


def copy_batch(run: GpuRun, out: GpuBatch, inp: GpuBatch) -> None:
    """Flat copy of every sample (metadata-only ops: reshape, expand_dims, squeeze, copy)."""
    gather(run, out, inp.data, inp.offsets, inp.dtype)


P_SRC: tl.constexpr = tl.constexpr(0)  # source offset (elements, relative to the base buffer)
P_DST: tl.constexpr = tl.constexpr(1)  # destination offset of the first row
P_ROW: tl.constexpr = tl.constexpr(2)  # elements per source row
P_OUT_ROW: tl.constexpr = tl.constexpr(3)  # elements per destination row
P_ROWS: tl.constexpr = tl.constexpr(4)  # rows in the piece
P_NCOL: tl.constexpr = tl.constexpr(5)


@triton.jit
def _pieces_kernel(src, dst, pieces, tiles, ALIGN: tl.constexpr, IDX64: tl.constexpr,
                   ROWS: tl.constexpr, BLOCK: tl.constexpr):  # fmt: skip
    """ROWS x BLOCK elements of one piece: src[r * row + j] -> dst[r * out_row + j]."""
    ity = tl.int64 if IDX64 else tl.int32
    piece, t = _helper_find_tile(tiles)
    row = pieces + piece.to(tl.int64) * P_NCOL
    length = tl.multiple_of(tl.load(row + P_ROW).to(ity), ALIGN)
    r0, j0 = _helper_row_block(t.to(ity), length, ROWS, BLOCK)
    r = r0 + tl.arange(0, ROWS)
    j = tl.multiple_of(j0, BLOCK) + tl.arange(0, BLOCK)
    out_length = tl.multiple_of(tl.load(row + P_OUT_ROW).to(ity), ALIGN)
    mask = (r < tl.load(row + P_ROWS).to(ity))[:, None] & (j < length)[None, :]
    src_at = tl.multiple_of(r * length, ALIGN)[:, None] + j[None, :]
    val = tl.load(src + tl.multiple_of(tl.load(row + P_SRC), ALIGN) + src_at, mask=mask)
    dst_at = tl.multiple_of(r * out_length, ALIGN)[:, None] + j[None, :]
    tl.store(dst + tl.multiple_of(tl.load(row + P_DST), ALIGN) + dst_at, val, mask=mask)


def copy_pieces(run: GpuRun, out: GpuBatch, base: Any, pieces: np.ndarray) -> None:
    """Launch `_pieces_kernel` once over a `[P, P_NCOL]` int64 piece table."""
    rows, row_len = pieces[:, int(P_ROWS)], pieces[:, int(P_ROW)]
    rows_per_tile, block = row_block(rows, row_len)
    tiles = tile_starts(row_tile_counts(rows, row_len, rows_per_tile, block))
    live = rows * row_len > 0
    align = _aligned(max(16 // out.data.element_size(), 1), pieces[live, :4])
    idx64 = bool((rows * np.maximum(row_len, pieces[:, int(P_OUT_ROW)]) >= 2**31).any())
    run.launch(_pieces_kernel, (grid_of(tiles),), base, out.data, pieces, tiles, ALIGN=align,
               IDX64=idx64, ROWS=rows_per_tile, BLOCK=block)  # fmt: skip
