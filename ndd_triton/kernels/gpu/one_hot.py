"""one_hot on the GPU: one streaming launch; output (outer, class, inner) reads (outer, inner).

The output is a stream of elements (`_stream.py`): full tiles store 16 bytes per lane. An
element's class and input index come from two int32 multiply-shift divisions (by inner, then by
the class count; `_broadcast.py`); each input value is read by its `classes` outputs (cached).
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._broadcast import INT32_LIMIT, _helper_magic_div, magic_numbers
from ndd_triton.kernels.gpu._stream import S_START, _helper_stream_tile, plan_stream
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.ops import one_hot
from ndd_triton.ops.schema import Call

# sample table after S_START, S_END: input offset, inner extent, class count, division constants
IN_OFF: tl.constexpr = tl.constexpr(2)
INNER: tl.constexpr = tl.constexpr(3)  # elements of the input after the new axis
CLASSES: tl.constexpr = tl.constexpr(4)
INNER_MUL: tl.constexpr = tl.constexpr(5)
INNER_SHIFT: tl.constexpr = tl.constexpr(6)
CLASS_MUL: tl.constexpr = tl.constexpr(7)
CLASS_SHIFT: tl.constexpr = tl.constexpr(8)
NCOL: tl.constexpr = tl.constexpr(9)


@triton.jit
def _helper_one_hot(src, row, on_off, start, lanes, mask, MASKED: tl.constexpr):
    """on/off values of the sample elements `start - S_START + lanes`.

    Element e: i = e % inner, cls = (e // inner) % classes, input (e // (inner * classes)) *
    inner + i.
    """
    e = tl.maximum((start - tl.load(row + S_START)).to(tl.int32) + lanes, 0)
    inner = tl.load(row + INNER).to(tl.int32)
    classes = tl.load(row + CLASSES).to(tl.int32)
    q = _helper_magic_div(e, tl.load(row + INNER_MUL), tl.load(row + INNER_SHIFT))
    outer = _helper_magic_div(q, tl.load(row + CLASS_MUL), tl.load(row + CLASS_SHIFT))
    cls = q - outer * classes
    in_idx = outer * inner + (e - q * inner)
    if MASKED:
        x = tl.load(src + tl.load(row + IN_OFF) + in_idx, mask=mask, other=0)
    else:
        x = tl.load(src + tl.load(row + IN_OFF) + in_idx)
    if x.dtype.is_fp64():
        hit = tl.where(x < 0, tl.ceil(x), tl.floor(x)) == cls.to(tl.float64)
    elif x.dtype.is_floating():
        xf = x.to(tl.float32)  # trunc is exact in the input's precision; NaN matches nothing
        hit = tl.where(xf < 0, tl.ceil(xf), tl.floor(xf)) == cls.to(tl.float32)
    else:
        hit = x.to(tl.int64) == cls.to(tl.int64)
    return tl.where(hit, tl.load(on_off), tl.load(on_off + 1))


@triton.jit
def _one_hot_kernel(src, dst, samples, on_off, tiles, BLOCK: tl.constexpr):
    """One stream tile of one sample: on_value where trunc(input) equals the class index."""
    _, row, start, lo, hi = _helper_stream_tile(tiles, samples, 0, NCOL, BLOCK, False)
    lanes = tl.arange(0, BLOCK)
    if hi - lo == BLOCK:  # a full tile: unmasked, vectorised stores
        tl.store(dst + start + lanes, _helper_one_hot(src, row, on_off, start, lanes, lanes, False))
    else:
        mask = (lanes >= (lo - start).to(tl.int32)) & (lanes < (hi - start).to(tl.int32))
        val = _helper_one_hot(src, row, on_off, start, lanes, mask, True)
        tl.store(dst + start + lanes, val, mask=mask)


@register(one_hot.schema, "gpu", replay=True)
def one_hot_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Build the sample table and launch once."""
    pos = arg.position
    shapes = arg.sample_shapes
    if out.batch_size and int(out.sizes.max()) >= INT32_LIMIT:
        raise ValueError("one_hot: GPU samples must have fewer than 2**31 elements")
    inner = np.prod(shapes[:, pos:], axis=1, dtype=np.int64)
    classes = np.full(out.batch_size, out.shapes[0, pos] if out.batch_size else 0, np.int64)
    inner_mul, inner_shift = magic_numbers(inner)
    class_mul, class_shift = magic_numbers(classes)
    block = 2048
    plan = plan_stream(out, block, global_ok=False)
    samples, tiles = plan.tables(inp.offsets, inner, classes, inner_mul, inner_shift, class_mul,
                                 class_shift)  # fmt: skip
    on_off = np.ascontiguousarray(arg.on_off)  # converted as DALI does (ops/one_hot.py)
    run.launch(_one_hot_kernel, (plan.grid,), inp.data, plan.out, samples, on_off, tiles,
               BLOCK=block)  # fmt: skip
