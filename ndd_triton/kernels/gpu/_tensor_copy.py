"""Data-movement kernels shared by the tensor operators (cast, transpose, reshape, cat, full...).

* `gather`: every output element reads `src[in_off + sum(coord[d] * stride[d])]`, where `coord`
  unravels the flat output index over the sample's shape (padded to rank 6). Permuted strides
  give `transpose`, zero strides give NumPy broadcasting (`full`, `zeros`), `FLAT=True` skips the
  unravelling (plain copies: `copy`, `reshape`, `squeeze`, `cast`). The stored value goes through
  `_helper_dali_convert` (round half away from zero, saturate; DALI's cast rules) when dtypes
  differ.
* `pieces`: copies blocks of rows into a wider destination row, the shape of `cat` and `stack`
  (see `kernels/gpu/concat.py`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import triton
import triton.language as tl

from ndd_triton.core.dtype import DType
from ndd_triton.kernels.gpu._common import MAX_RANK, padded_shapes
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun, tile_table

G_IN_OFF: tl.constexpr = tl.constexpr(0)
G_OUT_OFF: tl.constexpr = tl.constexpr(1)
G_SIZE: tl.constexpr = tl.constexpr(2)
G_SHAPE: tl.constexpr = tl.constexpr(3)  # 6 output extents
G_STRIDE: tl.constexpr = tl.constexpr(9)  # 6 source strides (elements), one per output axis
G_NCOL: tl.constexpr = tl.constexpr(15)
TILE = 1024


@triton.jit
def _helper_dali_convert(x, DST: tl.constexpr, LO: tl.constexpr, HI: tl.constexpr,
                         NANV: tl.constexpr, LO_F: tl.constexpr, HI_F: tl.constexpr):  # fmt: skip
    """Convert `x` to DST as DALI does: float->int rounds half away and saturates, int clamps."""
    if DST.is_floating():
        return x.to(DST)
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
def _gather_kernel(src, dst, samples, tiles, BLOCK: tl.constexpr, FLAT: tl.constexpr,
                   CONVERT: tl.constexpr, LO: tl.constexpr, HI: tl.constexpr,
                   NANV: tl.constexpr, LO_F: tl.constexpr, HI_F: tl.constexpr):  # fmt: skip
    """One tile of one sample: dst[i] = convert(src[in_off + unravel(i) . strides])."""
    sample = tl.load(tiles + 2 * tl.program_id(0))
    first = tl.load(tiles + 2 * tl.program_id(0) + 1)
    row = samples + sample * G_NCOL
    idx = first + tl.arange(0, BLOCK).to(tl.int64)
    mask = idx < tl.load(row + G_SIZE)
    if FLAT:
        src_idx = idx
    else:
        rem = idx
        src_idx = tl.zeros([BLOCK], dtype=tl.int64)
        for d in tl.static_range(6):
            extent = tl.load(row + G_SHAPE + 5 - d)
            src_idx += (rem % extent) * tl.load(row + G_STRIDE + 5 - d)
            rem = rem // extent
    val = tl.load(src + tl.load(row + G_IN_OFF) + src_idx, mask=mask)
    if CONVERT:
        val = _helper_dali_convert(val, dst.dtype.element_ty, LO, HI, NANV, LO_F, HI_F)
    tl.store(dst + tl.load(row + G_OUT_OFF) + idx, val, mask=mask)


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


def padded_strides(strides: np.ndarray) -> np.ndarray:
    """`[N, 6]` strides, left-padded with 0 (the padded axes have extent 1)."""
    n, ndim = strides.shape
    out = np.zeros((n, MAX_RANK), dtype=np.int64)
    if ndim:
        out[:, MAX_RANK - ndim :] = strides
    return out


def gather(run: GpuRun, out: GpuBatch, src: Any, src_offsets: np.ndarray, src_dtype: DType,
           strides: np.ndarray | None = None) -> None:  # fmt: skip
    """Launch once: each output sample reads `src` at `src_offsets` with per-axis `strides`.

    `strides` (`[N, out_ndim]`, elements) defaults to a flat copy; `src` is a device buffer
    or a host NumPy array (uploaded with the tables, e.g. a fill value).
    """
    n = out.batch_size
    flat = strides is None
    if flat:
        shape_cols = np.ones((n, MAX_RANK), dtype=np.int64)
        stride_cols = np.zeros((n, MAX_RANK), dtype=np.int64)
    else:
        shape_cols = padded_shapes(out.shapes)
        stride_cols = padded_strides(np.asarray(strides, dtype=np.int64))
    samples = np.concatenate([np.asarray(src_offsets, np.int64)[:, None], out.offsets[:, None],
                              out.sizes[:, None], shape_cols, stride_cols], axis=1)  # fmt: skip
    tiles = tile_table(out.sizes, TILE)
    # IEEE overflow to inf (f32 -> f16) and NaN from inf - inf in the rounding step are intended
    # (handled by the saturation); NumPy-backed evaluation (the Triton interpreter) would warn
    # about them. A no-op for compiled kernels.
    with np.errstate(over="ignore", invalid="ignore"):
        run.launch(_gather_kernel, (len(tiles),), src, out.data, samples, tiles, BLOCK=TILE,
                   FLAT=flat, **convert_meta(src_dtype, out.dtype))  # fmt: skip


def copy_batch(run: GpuRun, out: GpuBatch, inp: GpuBatch) -> None:
    """Flat copy of every sample (metadata-only ops: reshape, expand_dims, squeeze, copy)."""
    gather(run, out, inp.data, inp.offsets, inp.dtype)


P_SRC: tl.constexpr = tl.constexpr(0)  # source offset (elements, relative to the base buffer)
P_DST: tl.constexpr = tl.constexpr(1)  # destination offset of the first row
P_ROW: tl.constexpr = tl.constexpr(2)  # elements per source row
P_OUT_ROW: tl.constexpr = tl.constexpr(3)  # elements per destination row
P_SIZE: tl.constexpr = tl.constexpr(4)  # elements in the piece (rows * P_ROW)
P_NCOL: tl.constexpr = tl.constexpr(5)


@triton.jit
def _pieces_kernel(src, dst, pieces, tiles, BLOCK: tl.constexpr):
    """One tile of one piece: element i goes to row i // row, column i % row of the output."""
    piece = tl.load(tiles + 2 * tl.program_id(0))
    first = tl.load(tiles + 2 * tl.program_id(0) + 1)
    row = pieces + piece * P_NCOL
    idx = first + tl.arange(0, BLOCK).to(tl.int64)
    mask = idx < tl.load(row + P_SIZE)
    length = tl.load(row + P_ROW)
    val = tl.load(src + tl.load(row + P_SRC) + idx, mask=mask)
    out_idx = (idx // length) * tl.load(row + P_OUT_ROW) + idx % length
    tl.store(dst + tl.load(row + P_DST) + out_idx, val, mask=mask)


def copy_pieces(run: GpuRun, out: GpuBatch, base: Any, pieces: np.ndarray) -> None:
    """Launch `_pieces_kernel` once over a `[P, P_NCOL]` int64 piece table."""
    sizes = pieces[:, 4] if len(pieces) else np.zeros(0, np.int64)
    tiles = tile_table(sizes, TILE)
    run.launch(_pieces_kernel, (len(tiles),), base, out.data, pieces, tiles, BLOCK=TILE)
