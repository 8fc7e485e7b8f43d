"""cast, cast_like on the GPU: one streaming launch converting with DALI's rules in Triton.

The batch is one flat stream (`_stream.py`): full tiles load and store 16 bytes per lane
unmasked; the conversion is `_helper_dali_convert` (round half away from zero, saturate).
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._stream import (
    _helper_stream_tile,
    block_for,
    input_view,
    plan_stream,
)
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tensor_copy import _helper_dali_convert, convert_meta
from ndd_triton.ops import cast
from ndd_triton.ops.schema import Call

DELTA: tl.constexpr = tl.constexpr(2)  # input index - stream index (inputs packed differently)
NCOL: tl.constexpr = tl.constexpr(3)


@triton.jit
def _cast_kernel(src, dst, samples, tiles, total, BLOCK: tl.constexpr, GLOBAL: tl.constexpr,
                 SAME: tl.constexpr, CONVERT: tl.constexpr, LO: tl.constexpr, HI: tl.constexpr,
                 NANV: tl.constexpr, LO_F: tl.constexpr, HI_F: tl.constexpr):  # fmt: skip
    """dst[g] = convert(src[g (+ delta)]) for stream elements g = start + lane of one tile."""
    _, row, start, lo, hi = _helper_stream_tile(tiles, samples, total, NCOL, BLOCK, GLOBAL)
    offs = tl.arange(0, BLOCK)
    if SAME:  # noqa: SIM108 (a static if: Triton compiles one branch)
        src = src + start
    else:
        src = src + (tl.load(row + DELTA) + start)
    if hi - lo == BLOCK:  # a full tile: unmasked, vectorised
        val = tl.load(src + offs)
        if CONVERT:
            val = _helper_dali_convert(val, dst.dtype.element_ty, LO, HI, NANV, LO_F, HI_F)
        tl.store(dst + start + offs, val)
    else:
        mask = (offs >= (lo - start).to(tl.int32)) & (offs < (hi - start).to(tl.int32))
        val = tl.load(src + offs, mask=mask)
        if CONVERT:
            val = _helper_dali_convert(val, dst.dtype.element_ty, LO, HI, NANV, LO_F, HI_F)
        tl.store(dst + start + offs, val, mask=mask)


def _launch_cast(run: GpuRun, out: GpuBatch, inp: GpuBatch) -> None:
    block = block_for(inp.data.dtype, out.data.dtype)
    if out.dtype.name == "f16" and inp.dtype.name in ("i16", "u16"):
        # 16-bit integers to float16 at 4096 elements spill 8 bytes (sm_90, 64 registers)
        block = min(block, 2048)
    view, delta, same = input_view(inp, out)
    plan = plan_stream(out, block, global_ok=same)
    samples, tiles = plan.tables(delta)
    # IEEE overflow to inf (f32 -> f16) and NaN from inf - inf in the rounding step are intended
    # (handled by the saturation); NumPy-backed evaluation (the Triton interpreter) would warn.
    with np.errstate(over="ignore", invalid="ignore"):
        run.launch(_cast_kernel, (plan.grid,), view, plan.out, samples, tiles, plan.total,
                   BLOCK=block, GLOBAL=plan.is_global, SAME=same,
                   **convert_meta(inp.dtype, out.dtype))  # fmt: skip


@register(cast.cast, "gpu", replay=True)
def cast_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Convert the whole batch in one launch."""
    _launch_cast(run, out, inp)


@register(cast.cast_like, "gpu", replay=True)
def cast_like_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, like: GpuBatch, arg: Call) -> None:
    """Convert the whole batch to the dtype of `like` in one launch."""
    _launch_cast(run, out, inp)
