"""Per-sample affine colour transform on the GPU: one launch for the whole ragged batch.

Each program handles BLOCK pixels of one sample (tile table rows `(sample, first_pixel)`). A
pixel has CIN channels (1 or 3) and produces COUT channels (1 or 3); the sample's matrix and
offset come from a float32 table (3x3 matrix padded with zeros + 3 offsets per row). 1x1
matrices treat every element as a one-channel pixel, so any channel count works. Math is fp32;
integer outputs round half away from zero and saturate (NaN -> 0).
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun, tile_table
from ndd_triton.ops import color
from ndd_triton.ops.schema import Call

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
PIXELS: tl.constexpr = tl.constexpr(2)
NCOL: tl.constexpr = tl.constexpr(3)
NPARAM: tl.constexpr = tl.constexpr(12)  # 9 matrix entries (row-major 3x3) + 3 offsets
TILE = 1024


@triton.jit
def _helper_store_converted(ptr, value, mask, OUT_INT: tl.constexpr, LO: tl.constexpr,
                    HI: tl.constexpr, EVEN: tl.constexpr):
    """Store fp32 `value`: integers round (half away, or ties to even) and saturate."""
    if OUT_INT:
        value = tl.where(value != value, 0.0, value)
        if EVEN:
            r = tl.floor(value + 0.5)
            odd = (r - 2.0 * tl.floor(r * 0.5)) != 0.0
            value = tl.where(((r - value) == 0.5) & odd, r - 1.0, r)
        else:
            value = tl.where(value >= 0, tl.floor(value + 0.5), -tl.floor(0.5 - value))
        value = tl.minimum(tl.maximum(value, LO), HI)
    tl.store(ptr, value.to(ptr.dtype.element_ty), mask=mask)


@triton.jit
def _color_affine_kernel(src, dst, samples, ptable, tiles, BLOCK: tl.constexpr,
                         CIN: tl.constexpr, COUT: tl.constexpr, OUT_INT: tl.constexpr,
                         LO: tl.constexpr, HI: tl.constexpr):
    """out[p, k] = Σ_c M[k, c] · in[p, c] + o[k] for one tile of pixels of one sample."""
    sample = tl.load(tiles + 2 * tl.program_id(0))
    first = tl.load(tiles + 2 * tl.program_id(0) + 1)
    row = samples + sample * NCOL
    prm = ptable + sample * NPARAM
    pix = first + tl.arange(0, BLOCK).to(tl.int64)
    mask = pix < tl.load(row + PIXELS)
    base = src + tl.load(row + IN_OFF) + pix * CIN
    v0 = tl.load(base, mask=mask, other=0).to(tl.float32)
    if CIN == 3:
        v1 = tl.load(base + 1, mask=mask, other=0).to(tl.float32)
        v2 = tl.load(base + 2, mask=mask, other=0).to(tl.float32)
    else:
        v1 = tl.zeros([BLOCK], dtype=tl.float32)
        v2 = tl.zeros([BLOCK], dtype=tl.float32)
    out = dst + tl.load(row + OUT_OFF) + pix * COUT
    for k in tl.static_range(COUT):
        acc = tl.load(prm + 3 * k) * v0 + tl.load(prm + 3 * k + 1) * v1 \
            + tl.load(prm + 3 * k + 2) * v2 + tl.load(prm + 9 + k)
        _helper_store_converted(out + k, acc, mask, OUT_INT, LO, HI, False)


def dtype_bounds(dtype: np.dtype) -> tuple[bool, float, float]:
    """(is integer, min, max) of an output dtype, for `_helper_store_converted`."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return True, float(info.min), float(info.max)
    return False, 0.0, 0.0


def launch_affine(run: GpuRun, out: GpuBatch, inp: GpuBatch, matrix: np.ndarray,
                  offset: np.ndarray) -> None:
    """Apply per-sample `[N, C_out, C_in]` matrices and `[N, C_out]` offsets in one launch."""
    n, cout, cin = matrix.shape
    params = np.zeros((n, 12), dtype=np.float32)
    padded = np.zeros((n, 3, 3), dtype=np.float32)
    padded[:, :cout, :cin] = matrix
    params[:, :9] = padded.reshape(n, 9)
    params[:, 9:9 + cout] = offset
    pixels = inp.sizes // cin
    samples = np.stack([inp.offsets, out.offsets, pixels], axis=1).astype(np.int64)
    tiles = tile_table(pixels, TILE)
    is_int, lo, hi = dtype_bounds(out.dtype.numpy_dtype)
    run.launch(_color_affine_kernel, (len(tiles),), inp.data, out.data, samples, params, tiles,
               BLOCK=TILE, CIN=cin, COUT=cout, OUT_INT=is_int, LO=lo, HI=hi)


def _color_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Colour adjustments: the matrices were built by infer."""
    launch_affine(run, out, inp, np.asarray(arg.color_matrix), np.asarray(arg.color_offset))


for _schema in color.schemas:
    register(_schema, "gpu")(_color_gpu)
