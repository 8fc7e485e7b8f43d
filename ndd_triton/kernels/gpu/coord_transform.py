"""coord_transform on the GPU: one launch; a program maps BLOCK rows of one sample.

Per-sample float32 table `[M (m*n, row-major), T (m)]`; n and m are constexprs (a few values in
practice: 2-3 coordinates, 3 -> 1 for colour weights). Products are summed left to right, then T
is added, fp32 without FMA: the CPU kernel's (and DALI's) rounding. Integer outputs round half
away from zero and saturate (`_saturate.py`).
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._box_rows import (
    R_IN,
    R_NCOL,
    R_OUT,
    _helper_row_tile,
    row_plan,
)
from ndd_triton.kernels.gpu._saturate import _helper_round_saturate, int_limits
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tiles import grid_of
from ndd_triton.ops import coord_transform
from ndd_triton.ops.schema import Call

NCOL: tl.constexpr = tl.constexpr(R_NCOL)


@triton.jit
def _coord_transform_kernel(src, dst, samples, coefs, tiles, N_IN: tl.constexpr,
                            N_OUT: tl.constexpr, OUT_INT: tl.constexpr, LO: tl.constexpr,
                            HI: tl.constexpr, HI_INT: tl.constexpr, NAN_INT: tl.constexpr,
                            BLOCK: tl.constexpr):  # fmt: skip
    """BLOCK rows of one sample: out[i] = sum_j M[i, j] * v[j] + T[i]."""
    s, row, rows, mask = _helper_row_tile(samples, tiles, NCOL, BLOCK)
    i_off = tl.load(row + R_IN) + rows * N_IN
    o_off = tl.load(row + R_OUT) + rows * N_OUT
    p = coefs + s * (N_OUT * N_IN + N_OUT)
    for i in tl.static_range(N_OUT):
        acc = tl.zeros([BLOCK], tl.float32)
        for j in tl.static_range(N_IN):
            v = tl.load(src + i_off + j, mask=mask, other=0).to(tl.float32)
            acc += v * tl.load(p + i * N_IN + j)
        acc += tl.load(p + N_OUT * N_IN + i)
        if OUT_INT:
            value = _helper_round_saturate(acc, dst.dtype.element_ty, LO, HI, HI_INT, NAN_INT)
            tl.store(dst + o_off + i, value, mask=mask)
        else:
            tl.store(dst + o_off + i, acc, mask=mask)


@register(coord_transform.schema, "gpu", replay=True)
def coord_transform_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Tables and one launch."""
    mats = np.asarray(arg.matrix, np.float32)
    count, m, n = mats.shape
    params = np.concatenate([mats.reshape(count, m * n),
                             np.asarray(arg.translation, np.float32).reshape(count, m)], axis=1)
    rows = inp.sizes // max(n, 1) if n else np.zeros(count, np.int64)
    samples, tiles, block = row_plan(inp.offsets, out.offsets, rows)
    np_dtype = np.dtype(out.dtype.numpy_dtype)
    limits = int_limits(np_dtype) if np_dtype.kind in "iu" else \
        {"LO": 0.0, "HI": 0.0, "HI_INT": 0, "NAN_INT": 0}  # fmt: skip
    run.launch(_coord_transform_kernel, (grid_of(tiles),), inp.data, out.data, samples,
               np.ascontiguousarray(params), tiles, N_IN=n, N_OUT=m,
               OUT_INT=np_dtype.kind in "iu", BLOCK=block, **limits)  # fmt: skip
