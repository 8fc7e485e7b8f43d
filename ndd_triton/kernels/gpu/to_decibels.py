"""to_decibels on the GPU: one launch, one program per sample (its maximum, then the output).

Audio samples are spectrograms of thousands to a few million values; a program walks its
sample twice in BLOCK chunks (fp32 max, then the decibel map).
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.ops import to_decibels
from ndd_triton.ops.schema import Call

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
SIZE: tl.constexpr = tl.constexpr(2)
NCOL: tl.constexpr = tl.constexpr(3)
BLOCK = 1024
LOG10_2 = 0.30102999566398120


@triton.jit
def _to_decibels_kernel(src, dst, samples, mult, inv_ref, floor, BLOCK: tl.constexpr,
                        PER_SAMPLE_MAX: tl.constexpr):  # fmt: skip
    """dst = mult * log10(max(floor, x * inv_ref)); inv_ref = 1 / max(x) if PER_SAMPLE_MAX."""
    sample = tl.program_id(0)
    row = samples + sample * NCOL
    base = tl.load(row + IN_OFF)
    out_base = tl.load(row + OUT_OFF)
    size = tl.load(row + SIZE)
    offs = tl.arange(0, BLOCK)
    scale = inv_ref
    if PER_SAMPLE_MAX:
        top = tl.full((BLOCK,), float("-inf"), tl.float32)
        for start in range(0, size, BLOCK):
            x = tl.load(src + base + start + offs, mask=start + offs < size, other=float("-inf"))
            top = tl.maximum(top, x)
        best = tl.max(top, axis=0)
        scale = tl.where(best > 0, 1.0 / tl.where(best > 0, best, 1.0), 0.0)
    for start in range(0, size, BLOCK):
        mask = start + offs < size
        x = tl.load(src + base + start + offs, mask=mask, other=0.0)
        ratio = tl.maximum(x * scale, floor)
        tl.store(dst + out_base + start + offs, mult * (tl.log2(ratio) * 0.30102999566398120),
                 mask=mask)  # fmt: skip


@register(to_decibels.schema, "gpu", replay=True)
def to_decibels_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """One program per sample."""
    samples = np.stack([inp.offsets, out.offsets, out.sizes], axis=1).astype(np.int64)
    mult = float(arg.multiplier)
    reference = float(arg.reference)
    run.launch(_to_decibels_kernel, (out.batch_size,), inp.data, out.data, samples, mult,
               1.0 / reference if reference > 0 else 0.0,
               10.0 ** (float(arg.cutoff_db) / mult) if mult else 1.0,  # multiplier 0: zeros
               BLOCK=BLOCK, PER_SAMPLE_MAX=reference <= 0)  # fmt: skip
