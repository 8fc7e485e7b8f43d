"""one_hot on the GPU: one launch; output (outer, class, inner) reads input (outer, inner)."""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun, tile_table
from ndd_triton.ops import one_hot
from ndd_triton.ops.schema import Call

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
SIZE: tl.constexpr = tl.constexpr(2)
CLASSES: tl.constexpr = tl.constexpr(3)
INNER: tl.constexpr = tl.constexpr(4)  # elements of the input after the new axis
NCOL: tl.constexpr = tl.constexpr(5)
TILE = 1024


@triton.jit
def _one_hot_kernel(src, dst, samples, on_off, tiles, BLOCK: tl.constexpr):
    """One tile of one sample: on_value where trunc(input) equals the class index."""
    sample = tl.load(tiles + 2 * tl.program_id(0))
    first = tl.load(tiles + 2 * tl.program_id(0) + 1)
    row = samples + sample * NCOL
    idx = first + tl.arange(0, BLOCK).to(tl.int64)
    mask = idx < tl.load(row + SIZE)
    classes = tl.load(row + CLASSES)
    inner = tl.load(row + INNER)
    cls = (idx // inner) % classes
    in_idx = (idx // (inner * classes)) * inner + idx % inner
    x = tl.load(src + tl.load(row + IN_OFF) + in_idx, mask=mask, other=0)
    if x.dtype.is_fp64():
        hit = tl.where(x < 0, tl.ceil(x), tl.floor(x)) == cls.to(tl.float64)
    elif x.dtype.is_floating():
        xf = x.to(tl.float32)  # trunc is exact in the input's precision; NaN matches nothing
        hit = tl.where(xf < 0, tl.ceil(xf), tl.floor(xf)) == cls.to(tl.float32)
    else:
        hit = x.to(tl.int64) == cls
    val = tl.where(hit, tl.load(on_off), tl.load(on_off + 1))
    tl.store(dst + tl.load(row + OUT_OFF) + idx, val, mask=mask)


@register(one_hot.schema, "gpu")
def one_hot_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Build the sample table and launch once."""
    pos = arg.position
    shapes = arg.sample_shapes
    inner = np.prod(shapes[:, pos:], axis=1, dtype=np.int64)
    classes = np.full(out.batch_size, out.shapes[0, pos] if out.batch_size else 0, np.int64)
    samples = np.stack([inp.offsets, out.offsets, out.sizes, classes, inner], axis=1)
    tiles = tile_table(out.sizes, TILE)
    on_off = np.ascontiguousarray(arg.on_off)  # converted as DALI does (ops/one_hot.py)
    run.launch(_one_hot_kernel, (len(tiles),), inp.data, out.data, samples, on_off, tiles,
               BLOCK=TILE)  # fmt: skip
