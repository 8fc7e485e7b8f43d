"""reductions.* on the GPU: one launch per call; each program reduces one output row.

A "row" is one output element of one sample: the kept coordinates (`o`, unravelled over the
sample's kept extents) fix a base offset, and the program walks the reduced elements in BLOCK
chunks (unravelled over the reduced extents, any subset of up to 6 axes), accumulating in fp32
(int64 for integer accumulation, the input type for min/max). Rows of all samples form one
grid through a `(sample, o)` row table, so a ragged batch is a single launch. A reduction of a
whole large sample to one value runs in one program: simple and deterministic, at the cost of
parallelism for that shape (a split-row scheme would need a second pass or atomics).
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._common import MAX_RANK
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tiles import _helper_find_tile, grid_of, tile_starts
from ndd_triton.ops import reductions as red
from ndd_triton.ops.schema import Call

IN_OFF: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
MEAN_OFF: tl.constexpr = tl.constexpr(2)
MEAN_STEP: tl.constexpr = tl.constexpr(3)  # 1: one mean per output element, 0: scalar mean
RED_N: tl.constexpr = tl.constexpr(4)  # number of reduced elements
KEPT_EXT: tl.constexpr = tl.constexpr(5)  # 6 extents of the kept axes (padded with 1)
KEPT_STR: tl.constexpr = tl.constexpr(11)  # their strides in the input (padded with 0)
RED_EXT: tl.constexpr = tl.constexpr(17)  # 6 extents of the reduced axes
RED_STR: tl.constexpr = tl.constexpr(23)  # their strides
NCOL: tl.constexpr = tl.constexpr(29)

OP_SUM: tl.constexpr = tl.constexpr(red.SUM)
OP_MEAN: tl.constexpr = tl.constexpr(red.MEAN)
OP_MEAN_SQUARE: tl.constexpr = tl.constexpr(red.MEAN_SQUARE)
OP_RMS: tl.constexpr = tl.constexpr(red.RMS)
OP_MIN: tl.constexpr = tl.constexpr(red.MIN)
OP_MAX: tl.constexpr = tl.constexpr(red.MAX)
OP_VARIANCE: tl.constexpr = tl.constexpr(red.VARIANCE)
OP_STD_DEV: tl.constexpr = tl.constexpr(red.STD_DEV)
MAX_BLOCK = 1024


@triton.jit
def _helper_strided_offset(idx, row, EXT: tl.constexpr, STR: tl.constexpr):
    """Offset of flat index `idx` unravelled over 6 extents at `row+EXT`, strides at `row+STR`."""
    rem = idx
    off = idx * 0
    for d in tl.static_range(6):
        axis = 5 - d
        extent = tl.load(row + EXT + axis)
        off += (rem % extent) * tl.load(row + STR + axis)
        rem = rem // extent
    return off


@triton.jit
def _helper_reduced_offset(idx, row, RED_DIMS: tl.constexpr, SMALL: tl.constexpr):
    """Offset of the reduced elements `idx` (int64): one merged axis is a multiply; several
    unravel in 32 bits when the sample's reduced count fits (SMALL), keeping 64-bit division
    (a software routine of dozens of instructions) out of the reduction loop."""
    if RED_DIMS == 1:
        off = idx * tl.load(row + RED_STR + 5)
    elif SMALL:
        rem = idx.to(tl.int32)
        off = idx * 0
        for d in tl.static_range(RED_DIMS):
            axis = 5 - d
            extent = tl.load(row + RED_EXT + axis).to(tl.int32)
            off += (rem % extent).to(tl.int64) * tl.load(row + RED_STR + axis)
            rem = rem // extent
    else:
        off = _helper_strided_offset(idx, row, RED_EXT, RED_STR)
    return off


@triton.jit
def _helper_finish(total, n, ddof, OP: tl.constexpr, INT_ACC: tl.constexpr):
    """Turn the accumulated total of one row into the result (mean, rms, variance, ...)."""
    if OP == OP_SUM or OP == OP_MIN or OP == OP_MAX:  # noqa: SIM109 (Triton constexpr test)
        result = total
    elif INT_ACC:
        # Integer mean truncated toward zero; empty rows give 0.
        safe = tl.maximum(n, 1)
        mag = tl.where(total < 0, -total, total) // safe
        result = tl.where(total < 0, -mag, mag)
        if OP == OP_RMS:
            result = tl.sqrt(result.to(tl.float32)).to(tl.int64)
    else:
        if OP >= OP_VARIANCE:  # DALI 2.4: N - ddof <= 0 divides anyway (inf, NaN, negative)
            div = (n - ddof).to(tl.float32)
            zero = tl.where(total > 0, float("inf"), float("nan"))  # ssd / 0 (ssd >= 0)
            result = tl.where(div != 0, total / tl.where(div != 0, div, 1.0), zero)
        else:
            result = tl.where(n > 0, total / tl.maximum(n, 1).to(tl.float32), float("nan"))
        if OP == OP_RMS or OP == OP_STD_DEV:  # noqa: SIM109 (Triton constexpr test)
            result = tl.sqrt(tl.where(result >= 0, result, float("nan")))
    return result


@triton.jit
def _reduce_kernel(src, dst, mean, ident, samples, rows, ddof, OP: tl.constexpr,
                   INT_ACC: tl.constexpr, NO_AXES: tl.constexpr, BLOCK: tl.constexpr,
                   RED_DIMS: tl.constexpr, SMALL: tl.constexpr):  # fmt: skip
    """Reduce one (sample, output element) row. NO_AXES: variance / std_dev over no axes,
    which DALI 2.4 returns as 0."""
    sample, o = _helper_find_tile(rows)
    sample = sample.to(tl.int64)
    o = o.to(tl.int64)
    row = samples + sample * NCOL
    n = tl.load(row + RED_N)
    base = tl.load(row + IN_OFF) + _helper_strided_offset(o, row, KEPT_EXT, KEPT_STR)
    if OP == OP_MIN or OP == OP_MAX:  # noqa: SIM109 (Triton constexpr test)
        acc = tl.zeros([BLOCK], dtype=src.dtype.element_ty) + tl.load(ident)
    elif INT_ACC:
        acc = tl.zeros([BLOCK], dtype=tl.int64)
    else:
        acc = tl.zeros([BLOCK], dtype=tl.float32)
    m = 0.0
    if OP >= OP_VARIANCE:
        m = tl.load(mean + tl.load(row + MEAN_OFF) + o * tl.load(row + MEAN_STEP)).to(tl.float32)
    for start in range(0, n, BLOCK):
        idx = start + tl.arange(0, BLOCK).to(tl.int64)
        mask = idx < n
        x = tl.load(src + base + _helper_reduced_offset(idx, row, RED_DIMS, SMALL), mask=mask)
        if OP == OP_MIN:
            acc = tl.where(mask, tl.minimum(acc, x), acc)
        elif OP == OP_MAX:
            acc = tl.where(mask, tl.maximum(acc, x), acc)
        elif INT_ACC:
            v = x.to(tl.int64)
            if OP == OP_MEAN_SQUARE or OP == OP_RMS:  # noqa: SIM109 (Triton constexpr test)
                v = v * v
            acc += tl.where(mask, v, 0)
        else:
            v = x.to(tl.float32)
            if OP == OP_MEAN_SQUARE or OP == OP_RMS:  # noqa: SIM109 (Triton constexpr test)
                v = v * v
            if OP >= OP_VARIANCE:
                v = (v - m) * (v - m)
            acc += tl.where(mask, v, 0.0)
    if OP == OP_MIN:
        total = tl.min(acc, axis=0)
    elif OP == OP_MAX:
        total = tl.max(acc, axis=0)
    else:
        total = tl.sum(acc, axis=0)
    result = _helper_finish(total, n, ddof, OP, INT_ACC)
    if NO_AXES:
        result = tl.where(n > 0, 0.0, 0.0)
    tl.store(dst + tl.load(row + OUT_OFF) + o, result.to(dst.dtype.element_ty))


def _runs(axes: list[int]) -> list[list[int]]:
    """Runs of consecutive axes: `[0, 1, 3]` -> `[[0, 1], [3]]`."""
    runs: list[list[int]] = []
    for d in axes:
        if runs and runs[-1][-1] == d - 1:
            runs[-1].append(d)
        else:
            runs.append([d])
    return runs


def _split_table(shapes: np.ndarray, axes: tuple[int, ...]) -> tuple[np.ndarray, int]:
    """`[N, 24]`: kept extents, kept strides, reduced extents, reduced strides (C order), and
    the number of reduced axes. Consecutive reduced axes are one axis (their extents multiplied,
    the last one's stride: the same offsets in the same order), so reducing HW of HWC, or a
    whole sample, walks a single strided axis."""
    n, ndim = shapes.shape
    strides = np.ones((n, ndim), dtype=np.int64)
    for d in range(ndim - 2, -1, -1):
        strides[:, d] = strides[:, d + 1] * shapes[:, d + 1]
    reduced = _runs([d for d in range(ndim) if d in axes])
    kept = [[d] for d in range(ndim) if d not in axes]
    cols = []
    for group in (kept, reduced):
        ext = np.ones((n, MAX_RANK), dtype=np.int64)
        stride = np.zeros((n, MAX_RANK), dtype=np.int64)
        for k, run in enumerate(group):
            col = MAX_RANK - len(group) + k
            ext[:, col] = np.prod(shapes[:, run], axis=1, dtype=np.int64)
            stride[:, col] = strides[:, run[-1]]
        cols += [ext, stride]
    return np.concatenate(cols, axis=1), max(len(reduced), 1)


def _block_for(counts: np.ndarray) -> int:
    largest = int(counts.max()) if len(counts) else 1
    return int(min(MAX_BLOCK, max(16, triton.next_power_of_2(max(largest, 1)))))


@register(red.schemas[0], "gpu", replay=True)
def reduce_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, *rest: GpuBatch | Call) -> None:
    """Build the sample and row tables and launch once for the whole batch."""
    call = rest[-1]
    assert isinstance(call, Call)
    mean = rest[0] if len(rest) == 2 else None
    axes: tuple[int, ...] = call.reduce_axes
    op: int = call.op_code
    shapes = inp.shapes
    red_n = np.prod(shapes[:, list(axes)], axis=1, dtype=np.int64) if axes else \
        np.ones(len(shapes), dtype=np.int64)  # fmt: skip
    if isinstance(mean, GpuBatch):
        mean_off, mean_step = mean.offsets, (mean.sizes != 1).astype(np.int64)
        mean_data = mean.data
    else:
        mean_off = mean_step = np.zeros(len(shapes), dtype=np.int64)
        mean_data = inp.data
    split, red_dims = _split_table(shapes, axes)
    samples = np.concatenate([np.stack([inp.offsets, out.offsets, mean_off, mean_step, red_n],
                                       axis=1), split], axis=1)  # fmt: skip
    rows = tile_starts(out.sizes)
    np_in = inp.dtype.numpy_dtype
    int_acc = op not in (red.MIN, red.MAX) and out.dtype.is_integer
    info = np.finfo(np_in) if np_in.kind == "f" else np.iinfo(np_in)
    ident = np.array([info.max if op == red.MIN else info.min], dtype=np_in)
    ddof = int(call.values.get("ddof") or 0)
    run.launch(_reduce_kernel, (grid_of(rows),), inp.data, out.data, mean_data, ident, samples,
               rows, ddof, OP=op, INT_ACC=int_acc, NO_AXES=op >= red.VARIANCE and not axes,
               BLOCK=_block_for(red_n), RED_DIMS=red_dims,
               SMALL=bool(len(red_n) == 0 or red_n.max() < 1 << 31))  # fmt: skip


for _schema in red.schemas[1:]:
    register(_schema, "gpu", replay=True)(reduce_gpu)
