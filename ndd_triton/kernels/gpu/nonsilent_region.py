"""nonsilent_region on the GPU: one launch, one program per sample.

The short-term power at t needs the prefix sums of x^2 at t + 1 and t + 1 - window: a program
walks its signal in BLOCK chunks with two running fp64 prefix sums (a leading and a lagging
one, each a block cumsum plus a carry), so no scratch buffer is needed. Pass 1 finds the
largest power (unless `reference_power` is given), pass 2 the first and last loud positions.
fp64 keeps the threshold decisions those of the CPU kernel's float64 prefix sums.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.ops import nonsilent_region
from ndd_triton.ops.schema import Call

IN_OFF: tl.constexpr = tl.constexpr(0)
BEGIN_OFF: tl.constexpr = tl.constexpr(1)
LENGTH_OFF: tl.constexpr = tl.constexpr(2)
SIZE: tl.constexpr = tl.constexpr(3)
NCOL: tl.constexpr = tl.constexpr(4)
BLOCK = 1024


@triton.jit
def _helper_power(src, base, start, size, window, lead, lag, BLOCK: tl.constexpr):
    """Power of positions start + lane and the updated (lead, lag) carries."""
    t = start + tl.arange(0, BLOCK)
    x = tl.load(src + base + t, mask=t < size, other=0).to(tl.float64)
    ahead = tl.cumsum(x * x, axis=0) + lead
    back = t - window
    y = tl.load(src + base + back, mask=(back >= 0) & (back < size), other=0).to(tl.float64)
    behind = tl.cumsum(y * y, axis=0) + lag
    power = (ahead - behind) / window
    return t, power, tl.max(ahead, axis=0), tl.max(behind, axis=0)


@triton.jit
def _nonsilent_kernel(src, begins, lengths, samples, window, levels,
                      BLOCK: tl.constexpr):  # fmt: skip
    """begins[i], lengths[i] of sample i; levels = (cutoff_db, reference_power) as fp64."""
    sample = tl.program_id(0)
    row = samples + sample * NCOL
    base = tl.load(row + IN_OFF)
    size = tl.load(row + SIZE)
    cutoff = tl.load(levels)
    ref = tl.load(levels + 1)
    if ref <= 0:
        lead = tl.zeros((), tl.float64)
        lag = tl.zeros((), tl.float64)
        top = tl.zeros((BLOCK,), tl.float64)
        for start in range(0, size, BLOCK):
            t, power, lead, lag = _helper_power(src, base, start, size, window, lead, lag, BLOCK)
            top = tl.maximum(top, tl.where(t < size, power, 0.0))
        ref = tl.max(top, axis=0)
    threshold = ref * tl.exp2(cutoff * 0.33219280948873623)  # 10^(dB / 10)
    lead = tl.zeros((), tl.float64)
    lag = tl.zeros((), tl.float64)
    first = tl.full((BLOCK,), 2147483647, tl.int32)
    last = tl.full((BLOCK,), -1, tl.int32)
    for start in range(0, size, BLOCK):
        t, power, lead, lag = _helper_power(src, base, start, size, window, lead, lag, BLOCK)
        loud = (t < size) & (power >= threshold)
        first = tl.minimum(first, tl.where(loud, t.to(tl.int32), 2147483647))
        last = tl.maximum(last, tl.where(loud, t.to(tl.int32), -1))
    lo = tl.min(first, axis=0)
    hi = tl.max(last, axis=0)
    begin = tl.maximum(lo - window + 1, 0)
    length = tl.where(hi >= 0, hi + 1 - begin, 0)
    begin = tl.where(hi >= 0, begin, 0)
    short = size < window
    tl.store(begins + tl.load(row + BEGIN_OFF), tl.where(short, 0, begin).to(tl.int32))
    tl.store(lengths + tl.load(row + LENGTH_OFF), tl.where(short, size, length).to(tl.int32))


@register(nonsilent_region.schema, "gpu", replay=True)
def nonsilent_region_gpu(run: GpuRun, out: tuple[GpuBatch, GpuBatch], inp: GpuBatch,
                         arg: Call) -> None:  # fmt: skip
    """One program per sample writes both int32 outputs."""
    begins, lengths = out
    samples = np.stack([inp.offsets, begins.offsets, lengths.offsets, inp.sizes],
                       axis=1).astype(np.int64)  # fmt: skip
    run.launch(_nonsilent_kernel, (inp.batch_size,), inp.data, begins.data, lengths.data,
               samples, int(arg.window_length),
               np.array([arg.cutoff_db, arg.reference_power], np.float64), BLOCK=BLOCK)  # fmt: skip
