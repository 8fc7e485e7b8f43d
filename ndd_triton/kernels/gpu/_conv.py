"""Dense 1-3-D correlation on the GPU, shared by gaussian_blur, laplacian and filter.

One launch covers the whole ragged batch: each program computes BLOCK output elements of one
sample, seen as `[outer, D, H, W, inner]` (see kernels/_conv_tables.py), looping over the
sample's kernel taps (per-sample sizes and anchors from the sample table, weights from a flat
float32 buffer at a per-sample offset). Source coordinates go through the border rule
(BORDER: 0 reflect_101, 1 reflect_1001, 2 wrap, 3 clamp, 4 constant with a per-sample fill).
Separable windows are expanded to dense weights on the host: simpler, one launch, and the
tap count stays small for the window sizes DALI pipelines use.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels._conv_tables import BORDERS, view_5d
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun, tile_table
from ndd_triton.kernels.gpu.color import _helper_store_converted, dtype_bounds

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
DIMS: tl.constexpr = tl.constexpr(2)  # outer, D, H, W, inner
ODIMS: tl.constexpr = tl.constexpr(7)  # output D, H, W
KDIMS: tl.constexpr = tl.constexpr(10)  # kernel D, H, W
ANCHOR: tl.constexpr = tl.constexpr(13)  # anchor D, H, W
W_OFF: tl.constexpr = tl.constexpr(16)
FILL_OFF: tl.constexpr = tl.constexpr(17)
NCOL: tl.constexpr = tl.constexpr(18)
CONSTANT: tl.constexpr = tl.constexpr(4)
TILE = 1024


@triton.jit
def _helper_border(p, n, BORDER: tl.constexpr):
    """Map source coordinate `p` into [0, n) by the border rule; `ok` is False for fills."""
    ok = p == p
    if BORDER == 0:
        period = tl.maximum(2 * n - 2, 1)
        p = tl.abs(p) % period
        p = tl.where(p >= n, period - p, p)
    elif BORDER == 1:
        period = 2 * n
        p = ((p % period) + period) % period
        p = tl.where(p >= n, period - 1 - p, p)
    elif BORDER == 2:
        p = ((p % n) + n) % n
    elif BORDER == 3:
        p = tl.minimum(tl.maximum(p, 0), n - 1)
    else:
        ok = (p >= 0) & (p < n)
        p = tl.minimum(tl.maximum(p, 0), n - 1)
    return p, ok


@triton.jit
def _correlate_kernel(src, dst, weights, fill, samples, tiles, BLOCK: tl.constexpr,
                      BORDER: tl.constexpr, HAS_FILL: tl.constexpr, OUT_INT: tl.constexpr,
                      LO: tl.constexpr, HI: tl.constexpr, EVEN: tl.constexpr):
    """out[o, z, y, x, c] = Σ w[i, j, l] · in[o, z - az + i, y - ay + j, x - ax + l, c]."""
    sample = tl.load(tiles + 2 * tl.program_id(0))
    first = tl.load(tiles + 2 * tl.program_id(0) + 1)
    row = samples + sample * NCOL
    d = tl.load(row + DIMS + 1)
    h = tl.load(row + DIMS + 2)
    w = tl.load(row + DIMS + 3)
    inner = tl.load(row + DIMS + 4)
    od = tl.load(row + ODIMS)
    oh = tl.load(row + ODIMS + 1)
    ow = tl.load(row + ODIMS + 2)
    kd = tl.load(row + KDIMS)
    kh = tl.load(row + KDIMS + 1)
    kw = tl.load(row + KDIMS + 2)
    w_off = tl.load(row + W_OFF)
    idx = first + tl.arange(0, BLOCK).to(tl.int64)
    mask = idx < tl.load(row + DIMS) * od * oh * ow * inner
    c = idx % inner
    t = idx // inner
    x = t % ow - tl.load(row + ANCHOR + 2)
    t = t // ow
    y = t % oh - tl.load(row + ANCHOR + 1)
    t = t // oh
    z = t % od - tl.load(row + ANCHOR)
    outer = t // od
    base = src + tl.load(row + IN_OFF)
    fill_value = 0.0
    if HAS_FILL:
        fill_value = tl.load(fill + tl.load(row + FILL_OFF)).to(tl.float32)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(0, kd):
        zz, okz = _helper_border(z + i, d, BORDER)
        for j in range(0, kh):
            yy, oky = _helper_border(y + j, h, BORDER)
            plane = (outer * d + zz) * h + yy
            for k in range(0, kw):
                xx, okx = _helper_border(x + k, w, BORDER)
                ok = okz & oky & okx
                weight = tl.load(weights + w_off + (i * kh + j) * kw + k)
                value = tl.load(base + (plane * w + xx) * inner + c, mask=mask & ok,
                                other=0).to(tl.float32)
                if BORDER == CONSTANT:
                    value = tl.where(ok, value, fill_value)
                acc += weight * value
    _helper_store_converted(dst + tl.load(row + OUT_OFF) + idx, acc, mask, OUT_INT, LO, HI, EVEN)


def launch_correlate(run: GpuRun, out: GpuBatch, inp: GpuBatch, span: tuple[int, int],
                     weights: object, weight_offsets: np.ndarray, kernel_dims: np.ndarray,
                     anchors: np.ndarray, border: str = "reflect_101",
                     fill: GpuBatch | None = None, ties_to_even: bool = False) -> None:
    """One launch over the batch; `kernel_dims`/`anchors` are `[N, 3]` (D, H, W) int arrays."""
    n = inp.batch_size
    dims = np.array([view_5d(s, *span) for s in inp.shapes], dtype=np.int64).reshape(n, 5)
    odims = np.array([view_5d(s, *span)[1:4] for s in out.shapes], np.int64).reshape(n, 3)
    fill_off = fill.offsets if fill is not None else np.zeros(n, np.int64)
    samples = np.concatenate([inp.offsets[:, None], out.offsets[:, None], dims, odims,
                              kernel_dims, anchors, weight_offsets[:, None],
                              fill_off[:, None]], axis=1).astype(np.int64)  # fmt: skip
    tiles = tile_table(out.sizes, TILE)
    is_int, lo, hi = dtype_bounds(out.dtype.numpy_dtype)
    run.launch(_correlate_kernel, (len(tiles),), inp.data, out.data, weights,
               fill.data if fill is not None else inp.data, samples, tiles, BLOCK=TILE,
               BORDER=BORDERS[border], HAS_FILL=fill is not None, OUT_INT=is_int, LO=lo, HI=hi,
               EVEN=ties_to_even)  # fmt: skip


def pack_dense(kernels: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flat float32 weights, per-sample offsets and `[N, 3]` dims of 3-D dense kernels."""
    sizes = np.array([k.size for k in kernels], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    flat = np.concatenate([k.reshape(-1) for k in kernels]).astype(np.float32)
    dims = np.array([k.shape for k in kernels], dtype=np.int64).reshape(len(kernels), 3)
    return flat, offsets, dims
