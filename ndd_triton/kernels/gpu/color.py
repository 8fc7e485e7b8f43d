"""Per-sample affine colour transform on the GPU: one launch for the whole ragged batch.

A pixel has CIN channels (1 or 3, constexpr) and produces COUT channels (1 or 3); the sample's
matrix and offset come from a float32 table (3x3 matrix padded with zeros + 3 offsets per
row). 1x1 matrices treat every element as a one-channel pixel, so any channel count works.
Math is fp32; integer outputs round half away from zero and saturate (NaN -> 0).

The batch is a stream of pixels (`_stream.py`, in pixel units): a program owns BLOCK pixels of
one sample, at a 64-bit base plus int32 lane offsets `lane * C + channel`. With one channel
the pixels are the elements, so full tiles load and store 16 bytes per lane; three interleaved
channels are three strided loads (and stores) of one cache-line span. Arguments uniform over
the batch (the usual scalar brightness, a colour space conversion) need no tile table.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._stream import _helper_stream_tile, plan_tiles
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.ops import color
from ndd_triton.ops.schema import Call

IN_BASE: tl.constexpr = tl.constexpr(2)  # after S_START, S_END (pixels): input element base
OUT_BASE: tl.constexpr = tl.constexpr(3)  # of the pixel stream, per sample (0 when DIRECT)
NCOL: tl.constexpr = tl.constexpr(4)
NPARAM: tl.constexpr = tl.constexpr(12)  # 9 matrix entries (row-major 3x3) + 3 offsets


@triton.jit
def _helper_convert(value, OUT_INT: tl.constexpr, LO: tl.constexpr, HI: tl.constexpr,
                    EVEN: tl.constexpr):  # fmt: skip
    """fp32 `value` for an integer output: round (half away, or ties to even) and saturate."""
    if OUT_INT:
        value = tl.where(value != value, 0.0, value)
        if EVEN:
            r = tl.floor(value + 0.5)
            odd = (r - 2.0 * tl.floor(r * 0.5)) != 0.0
            value = tl.where(((r - value) == 0.5) & odd, r - 1.0, r)
        else:
            value = tl.where(value >= 0, tl.floor(value + 0.5), -tl.floor(0.5 - value))
        value = tl.minimum(tl.maximum(value, LO), HI)
    return value


@triton.jit
def _helper_store_converted(
    ptr, value, mask, OUT_INT: tl.constexpr, LO: tl.constexpr, HI: tl.constexpr, EVEN: tl.constexpr
):
    """Store fp32 `value`: integers round (half away, or ties to even) and saturate."""
    value = _helper_convert(value, OUT_INT, LO, HI, EVEN)
    tl.store(ptr, value.to(ptr.dtype.element_ty), mask=mask)


@triton.jit
def _helper_load_pixels(src, lanes, mask, CIN: tl.constexpr, MASKED: tl.constexpr):
    """The channels of the pixels at `src + lanes * CIN` as float32 (v1 = v2 = 0 when CIN is 1)."""
    base = src + lanes * CIN
    if MASKED:
        v0 = tl.load(base, mask=mask, other=0).to(tl.float32)
    else:
        v0 = tl.load(base).to(tl.float32)
    if CIN == 3:
        if MASKED:
            v1 = tl.load(base + 1, mask=mask, other=0).to(tl.float32)
            v2 = tl.load(base + 2, mask=mask, other=0).to(tl.float32)
        else:
            v1 = tl.load(base + 1).to(tl.float32)
            v2 = tl.load(base + 2).to(tl.float32)
    else:
        v1 = tl.zeros_like(v0)
        v2 = tl.zeros_like(v0)
    return v0, v1, v2


@triton.jit
def _helper_affine_pixels(src, dst, prm, lanes, mask, CIN: tl.constexpr, COUT: tl.constexpr,
                          OUT_INT: tl.constexpr, LO: tl.constexpr, HI: tl.constexpr,
                          MASKED: tl.constexpr):  # fmt: skip
    """Transform the pixels at `src + lanes * CIN` into `dst + lanes * COUT`."""
    v0, v1, v2 = _helper_load_pixels(src, lanes, mask, CIN, MASKED)
    out = dst + lanes * COUT
    for k in tl.static_range(COUT):
        acc = (tl.load(prm + 3 * k) * v0 + tl.load(prm + 3 * k + 1) * v1
               + tl.load(prm + 3 * k + 2) * v2 + tl.load(prm + 9 + k))  # fmt: skip
        value = _helper_convert(acc, OUT_INT, LO, HI, False).to(dst.dtype.element_ty)
        if MASKED:
            tl.store(out + k, value, mask=mask)
        else:
            tl.store(out + k, value)


@triton.jit
def _color_affine_kernel(src, dst, samples, ptable, tiles, total, BLOCK: tl.constexpr,
                         CIN: tl.constexpr, COUT: tl.constexpr, OUT_INT: tl.constexpr,
                         LO: tl.constexpr, HI: tl.constexpr, GLOBAL: tl.constexpr,
                         DIRECT: tl.constexpr):  # fmt: skip
    """out[p, k] = sum_c M[k, c] * in[p, c] + o[k] for the pixels p = start + lane of one tile.

    Pixel p of the stream is at element `in_base + p * CIN` (`out_base + p * COUT`); DIRECT:
    the buffers are viewed at their first sample and both bases are 0.
    """
    sample, row, start, lo, hi = _helper_stream_tile(tiles, samples, total, NCOL, BLOCK, GLOBAL)
    prm = ptable + sample * NPARAM
    if DIRECT:
        src = src + start * CIN
        dst = dst + start * COUT
    else:
        src = src + (tl.load(row + IN_BASE) + start * CIN)
        dst = dst + (tl.load(row + OUT_BASE) + start * COUT)
    lanes = tl.arange(0, BLOCK)
    if hi - lo == BLOCK:  # a full tile: unmasked (vectorised for one channel)
        _helper_affine_pixels(src, dst, prm, lanes, lanes, CIN, COUT, OUT_INT, LO, HI, False)
    else:
        mask = (lanes >= (lo - start).to(tl.int32)) & (lanes < (hi - start).to(tl.int32))
        _helper_affine_pixels(src, dst, prm, lanes, mask, CIN, COUT, OUT_INT, LO, HI, True)


def dtype_bounds(dtype: np.dtype) -> tuple[bool, float, float]:
    """(is integer, min, max) of an output dtype, for `_helper_store_converted`."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return True, float(info.min), float(info.max)
    return False, 0.0, 0.0


def launch_affine(
    run: GpuRun, out: GpuBatch, inp: GpuBatch, matrix: np.ndarray, offset: np.ndarray
) -> None:
    """Apply per-sample `[N, C_out, C_in]` matrices and `[N, C_out]` offsets in one launch."""
    n, cout, cin = matrix.shape
    params = np.zeros((n, 12), dtype=np.float32)
    padded = np.zeros((n, 3, 3), dtype=np.float32)
    padded[:, :cout, :cin] = matrix
    params[:, :9] = padded.reshape(n, 9)
    params[:, 9 : 9 + cout] = offset
    pixels = inp.sizes // cin
    is_int, lo, hi = dtype_bounds(out.dtype.numpy_dtype)
    block = 2048 if max(cin, cout) == 3 else 4096 if out.data.element_size() == 1 else 2048
    bits = params.view(np.int32)
    uniform = n == 0 or bool((bits == bits[0]).all())  # bitwise: -0.0 and NaNs stay per sample
    starts = np.cumsum(pixels) - pixels  # the pixel stream: samples back to back
    in_base, out_base = inp.offsets - starts * cin, out.offsets - starts * cout
    direct = n > 0 and bool((in_base == in_base[0]).all() and (out_base == out_base[0]).all())
    src, dst = inp.data, out.data
    if direct:
        src, dst = inp.data[int(in_base[0]) :], out.data[int(out_base[0]) :]
    grid, tiles, columns, total = plan_tiles(starts, pixels, block, global_ok=direct and uniform)
    samples = np.concatenate([columns, in_base[:, None], out_base[:, None]], axis=1)
    run.launch(_color_affine_kernel, (grid,), src, dst, samples, params,
               np.zeros((1, 2), np.int32) if tiles is None else tiles, total, BLOCK=block,
               CIN=cin, COUT=cout, OUT_INT=is_int, LO=lo, HI=hi, GLOBAL=tiles is None,
               DIRECT=direct)  # fmt: skip


def _color_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Colour adjustments: the matrices were built by infer."""
    launch_affine(run, out, inp, np.asarray(arg.color_matrix), np.asarray(arg.color_offset))


for _schema in color.schemas:
    register(_schema, "gpu", replay=True)(_color_gpu)
