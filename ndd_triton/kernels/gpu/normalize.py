"""normalize on the GPU: a statistics launch (only when mean or stddev is computed), then one
streaming launch for the output.

A group is the set of elements sharing one (mean, stddev): one kept-coordinate row of one
sample, or of every sample with batch=True. Statistics: one program per group walks its
elements as *segments* (one per sample, base offset precomputed on the host) in BLOCK chunks,
computing the mean (unless given) and the centred sum of squares (unless stddev is given), and
writes (mean, stddev) per group. All accumulation is fp32. Output: the batch is a stream of
elements (`_stream.py`; full tiles load and store 16 bytes per lane); an element's group is its
sample's first group plus its kept coordinates, found over the collapsed axes with int32
multiply-shift divisions (`_broadcast.py`), and it becomes `(x - mean) * scale / stddev + shift`
converted with DALI's rounding and saturation.
"""

from __future__ import annotations

import numpy as np
import torch
import triton
import triton.language as tl

from ndd_triton.core.dtype import float32
from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._broadcast import (
    INT32_LIMIT,
    _helper_axis_step,
    collapse,
    magic_numbers,
)
from ndd_triton.kernels.gpu._common import padded_shapes
from ndd_triton.kernels.gpu._stream import (
    S_START,
    _helper_stream_tile,
    block_for,
    input_view,
    plan_stream,
)
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tensor_copy import _helper_dali_convert, convert_meta
from ndd_triton.kernels.gpu.reductions import _block_for
from ndd_triton.ops import normalize
from ndd_triton.ops.schema import Call

# statistics sample table: reduced elements per segment, then the reduced axes collapsed
# (`_broadcast.collapse`: same C-order walk, fewer axes), their division constants and strides
RED_N: tl.constexpr = tl.constexpr(0)
RED_EXT: tl.constexpr = tl.constexpr(1)
RED_MUL: tl.constexpr = tl.constexpr(7)
RED_SHIFT: tl.constexpr = tl.constexpr(13)
RED_STR: tl.constexpr = tl.constexpr(19)
NCOL: tl.constexpr = tl.constexpr(25)
SEG_SAMPLE: tl.constexpr = tl.constexpr(0)
SEG_IN: tl.constexpr = tl.constexpr(1)  # absolute input offset of the segment's base element
SEG_OUT: tl.constexpr = tl.constexpr(2)
SEG_NCOL: tl.constexpr = tl.constexpr(3)
# output stream table after S_START, S_END: input delta, first group, collapsed extents,
# their division constants, group strides (0 on reduced axes)
A_DELTA: tl.constexpr = tl.constexpr(2)
A_GROUP: tl.constexpr = tl.constexpr(3)
A_EXT: tl.constexpr = tl.constexpr(4)
A_MUL: tl.constexpr = tl.constexpr(10)
A_SHIFT: tl.constexpr = tl.constexpr(16)
A_STR: tl.constexpr = tl.constexpr(22)
A_NCOL: tl.constexpr = tl.constexpr(28)


@triton.jit
def _helper_reduced_offset(idx, row, R: tl.constexpr):
    """Offset of the reduced elements `idx` (int32, C order) from their segment's base."""
    rem = idx
    off = idx * 0
    for d in tl.static_range(R):  # collapsed axes, innermost first; the outermost: the rest
        axis = 5 - d
        if d == R - 1:
            coord = rem
        else:
            coord, rem = _helper_axis_step(row, rem, axis, RED_EXT, RED_MUL, RED_SHIFT, False)
        off += coord * tl.load(row + RED_STR + axis).to(tl.int32)
    return off


@triton.jit
def _helper_segment_sum(src, segs, samples, seg0, nseg, center, SQUARE: tl.constexpr,
                        BLOCK: tl.constexpr, R: tl.constexpr):  # fmt: skip
    """Sum of x (or of (x - center)^2) over every segment of a group, and the element count."""
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    count = tl.load(segs + seg0 * SEG_NCOL) * 0
    for s in range(seg0, seg0 + nseg):
        seg = segs + s * SEG_NCOL
        row = samples + tl.load(seg + SEG_SAMPLE) * NCOL
        n = tl.load(row + RED_N).to(tl.int32)
        base = src + tl.load(seg + SEG_IN)
        for start in range(0, n, BLOCK):
            idx = start + tl.arange(0, BLOCK)
            mask = idx < n
            x = tl.load(base + _helper_reduced_offset(tl.minimum(idx, n - 1), row, R), mask=mask,
                        other=0).to(tl.float32)  # fmt: skip
            if SQUARE:
                x = tl.where(mask, (x - center) * (x - center), 0.0)
            acc += x
        count += n
    return tl.sum(acc, axis=0), count


@triton.jit
def _normalize_stats_kernel(src, groups, ptable, segs, samples, stats, ddof, epsilon,
                            HAS_MEAN: tl.constexpr, HAS_STD: tl.constexpr, BLOCK: tl.constexpr,
                            R: tl.constexpr):  # fmt: skip
    """(mean, stddev) of one group into `stats`: given values, or computed over its segments."""
    g = tl.program_id(0)
    seg0 = tl.load(groups + 2 * g)
    nseg = tl.load(groups + 2 * g + 1)
    if HAS_MEAN:
        mean = tl.load(ptable + 2 * g)
    else:
        total, count = _helper_segment_sum(src, segs, samples, seg0, nseg, 0.0, False, BLOCK, R)
        mean = total / tl.maximum(count, 1).to(tl.float32)
    if HAS_STD:
        std = tl.load(ptable + 2 * g + 1)
    else:
        ssd, count = _helper_segment_sum(src, segs, samples, seg0, nseg, mean, True, BLOCK, R)
        divisor = count - ddof
        var = tl.where(divisor > 0, ssd / tl.maximum(divisor, 1).to(tl.float32), 0.0)
        std = tl.sqrt(var + epsilon)
    tl.store(stats + 2 * g, mean)
    tl.store(stats + 2 * g + 1, std)


@triton.jit
def _helper_group(row, start, lanes, R: tl.constexpr):
    """Group index of the sample elements `start - S_START + lanes` (a scalar when R == 0)."""
    group = tl.load(row + A_GROUP)
    if R > 0:
        rem = tl.maximum((start - tl.load(row + S_START)).to(tl.int32) + lanes, 0)
        index = rem * 0
        for d in tl.static_range(R):  # collapsed axes, innermost first; the outermost: the rest
            axis = 5 - d
            if d == R - 1:
                coord = rem
            else:
                coord, rem = _helper_axis_step(row, rem, axis, A_EXT, A_MUL, A_SHIFT, False)
            index += coord * tl.load(row + A_STR + axis).to(tl.int32)
        group = group + index
    return group


@triton.jit
def _helper_normalized(x, stats, group, scale, shift, CONVERT: tl.constexpr, LO: tl.constexpr,
                       HI: tl.constexpr, NANV: tl.constexpr, LO_F: tl.constexpr,
                       HI_F: tl.constexpr, DST: tl.constexpr):  # fmt: skip
    """(x - mean) * scale / stddev + shift of the elements' groups, converted for DST."""
    mean = tl.load(stats + 2 * group)
    std = tl.load(stats + 2 * group + 1)
    factor = tl.where(std > 0, scale / tl.where(std > 0, std, 1.0), 0.0)
    y = (x.to(tl.float32) - mean) * factor + shift
    if CONVERT:
        y = _helper_dali_convert(y, DST, LO, HI, NANV, LO_F, HI_F)
    return y


@triton.jit
def _normalize_apply_kernel(src, dst, samples, tiles, stats, scale, shift, BLOCK: tl.constexpr,
                            SAME: tl.constexpr, R: tl.constexpr, CONVERT: tl.constexpr,
                            LO: tl.constexpr, HI: tl.constexpr, NANV: tl.constexpr,
                            LO_F: tl.constexpr, HI_F: tl.constexpr):  # fmt: skip
    """One stream tile of one sample: every element normalized with its group's statistics."""
    _, row, start, lo, hi = _helper_stream_tile(tiles, samples, 0, A_NCOL, BLOCK, False)
    lanes = tl.arange(0, BLOCK)
    group = _helper_group(row, start, lanes, R)
    if SAME:  # noqa: SIM108 (a static if: Triton compiles one branch)
        src = src + start
    else:
        src = src + (tl.load(row + A_DELTA) + start)
    ty = dst.dtype.element_ty
    if hi - lo == BLOCK:  # a full tile: unmasked, vectorised
        y = _helper_normalized(tl.load(src + lanes), stats, group, scale, shift, CONVERT, LO,
                               HI, NANV, LO_F, HI_F, ty)  # fmt: skip
        tl.store(dst + start + lanes, y)
    else:
        mask = (lanes >= (lo - start).to(tl.int32)) & (lanes < (hi - start).to(tl.int32))
        inside = tl.where(mask, group, 0)  # lanes outside the sample: group 0's statistics
        y = _helper_normalized(tl.load(src + lanes, mask=mask, other=0), stats, inside, scale,
                               shift, CONVERT, LO, HI, NANV, LO_F, HI_F, ty)  # fmt: skip
        tl.store(dst + start + lanes, y, mask=mask)


def _segments(inp: GpuBatch, out: GpuBatch, kept_offsets: list[np.ndarray], batch: bool
              ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Group table `(first_segment, count)` and segment table `(sample, in_abs, out_abs)`."""
    n = inp.batch_size
    if batch:  # group g = kept row g of every sample: segments ordered group-major
        rows = len(kept_offsets[0]) if n else 0
        sample = np.tile(np.arange(n, dtype=np.int64), rows)
        base = np.stack(kept_offsets, axis=1).reshape(-1) if rows else np.zeros(0, np.int64)
        groups = np.stack([np.arange(rows, dtype=np.int64) * n, np.full(rows, n)], axis=1)
    else:
        counts = np.array([len(k) for k in kept_offsets], dtype=np.int64)
        sample = np.repeat(np.arange(n, dtype=np.int64), counts)
        base = np.concatenate(kept_offsets) if n else np.zeros(0, np.int64)
        groups = np.stack([np.arange(len(base), dtype=np.int64), np.ones(len(base), np.int64)],
                          axis=1)  # fmt: skip
    segs = np.stack([sample, inp.offsets[sample] + base, out.offsets[sample] + base], axis=1)
    return groups.reshape(-1, 2), segs.reshape(-1, 3)


def _kept_offsets(shapes: np.ndarray, axes: tuple[int, ...]) -> list[np.ndarray]:
    """Element offset of every kept-coordinate row of each sample (C order over kept axes)."""
    result = []
    for shape in shapes:
        keep = tuple(1 if d in axes else int(e) for d, e in enumerate(shape))
        strides: np.ndarray = np.cumprod([*list(shape[1:]), 1][::-1])[::-1] if len(shape) \
            else np.zeros(0, np.int64)  # fmt: skip
        idx = np.indices(keep, dtype=np.int64).reshape(len(keep), -1) if keep else \
            np.zeros((0, 1), np.int64)  # fmt: skip
        result.append((idx * np.asarray(strides, np.int64)[:, None]).sum(axis=0))
    return result


def _group_geometry(shapes: np.ndarray, axes: tuple[int, ...], batch: bool
                    ) -> tuple[np.ndarray, int]:  # fmt: skip
    """`[N, 25]` columns A_GROUP..A_STR of the output stream table, and R."""
    n, ndim = shapes.shape
    kept = np.where(np.isin(np.arange(ndim), axes), 1, shapes)  # kept extents (1 if reduced)
    strides = np.zeros((n, ndim), np.int64)  # row-major over the kept axes, 0 on reduced ones
    run = np.ones(n, np.int64)
    for d in range(ndim - 1, -1, -1):
        if d not in axes:
            strides[:, d] = run
            run = run * kept[:, d]
    first = np.zeros(n, np.int64) if batch else np.cumsum(run) - run
    pad = np.zeros((n, 6), np.int64)
    if ndim:
        pad[:, 6 - ndim :] = strides
    ext, (gstr,), rank = collapse(padded_shapes(shapes), [pad])
    if not (gstr != 0).any():
        rank = 0  # one group per sample: no per-element group index
    mul, shift = magic_numbers(ext)
    return np.concatenate([first[:, None], ext, mul, shift, gstr], axis=1), rank


def _reduced_geometry(shapes: np.ndarray, axes: tuple[int, ...]) -> tuple[np.ndarray, int]:
    """`[N, 24]` collapsed reduced extents, division constants and strides; R (at least 1)."""
    n, ndim = shapes.shape
    strides = np.ones((n, ndim), np.int64)
    for d in range(ndim - 2, -1, -1):
        strides[:, d] = strides[:, d + 1] * shapes[:, d + 1]
    reduced = [d for d in range(ndim) if d in axes]
    ext, stride = np.ones((n, 6), np.int64), np.zeros((n, 6), np.int64)
    if reduced:
        ext[:, 6 - len(reduced) :] = shapes[:, reduced]
        stride[:, 6 - len(reduced) :] = strides[:, reduced]
    ext, (stride,), rank = collapse(ext, [stride])
    mul, shift = magic_numbers(ext)
    return np.concatenate([ext, mul, shift, stride], axis=1), max(rank, 1)


def _statistics(run: GpuRun, inp: GpuBatch, out: GpuBatch, arg: Call, *tables: np.ndarray
                ) -> tuple[torch.Tensor, list[torch.Tensor]]:  # fmt: skip
    """Per-group (mean, stddev): the given values, else computed by one launch (one program
    per group); uploaded with the output launch's host `tables`, whose device views come
    back too (one copy for the call)."""
    axes: tuple[int, ...] = arg.norm_axes
    kept = _kept_offsets(inp.shapes, axes)
    groups, segs = _segments(inp, out, kept, bool(arg.batch))
    given = arg.group_params
    params = np.zeros((len(groups), 2), dtype=np.float32)
    for col, name in enumerate(("mean", "stddev")):
        if name in given:
            values = given[name][:1] if arg.batch else given[name]
            params[:, col] = np.concatenate(values) if values else []
    if "mean" in given and "stddev" in given:
        params_dev, *views = run.upload(params.reshape(-1), *tables)
        return params_dev, views
    red_n = np.array([np.prod([s[d] for d in axes], dtype=np.int64) for s in inp.shapes],
                     dtype=np.int64).reshape(-1)  # fmt: skip
    samples, rank = _reduced_geometry(inp.shapes, axes)
    samples = np.concatenate([red_n[:, None], samples], axis=1)
    groups_dev, params_dev, segs_dev, samples_dev, *views = run.upload(
        groups, params, segs, samples, *tables)  # fmt: skip
    stats = run.empty(2 * len(groups), torch.float32)
    run.launch(_normalize_stats_kernel, (len(groups),), inp.data, groups_dev, params_dev,
               segs_dev, samples_dev, stats, int(arg.ddof), float(arg.epsilon),
               HAS_MEAN="mean" in given, HAS_STD="stddev" in given, BLOCK=_block_for(red_n),
               R=rank)  # fmt: skip
    return stats, views


@register(normalize.schema, "gpu", replay=True)
def normalize_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Statistics (one program per group) when computed; then one streaming output launch.
    All host tables of the call go to the device in one upload."""
    if inp.batch_size and int(inp.sizes.max()) >= INT32_LIMIT:
        raise ValueError("normalize: GPU samples must have fewer than 2**31 elements")
    geometry, rank = _group_geometry(inp.shapes, arg.norm_axes, bool(arg.batch))
    block = block_for(inp.data.dtype, out.data.dtype, torch.float32)
    view, delta, same = input_view(inp, out)
    plan = plan_stream(out, block, global_ok=False)
    stats, (samples, tiles) = _statistics(run, inp, out, arg, *plan.tables(delta, geometry))
    # NumPy-backed evaluation (the Triton interpreter) must not warn where IEEE arithmetic
    # overflows or meets inf * 0 in lanes the conversion saturates; a no-op when compiled.
    with np.errstate(over="ignore", invalid="ignore"):
        run.launch(_normalize_apply_kernel, (plan.grid,), view, plan.out, samples, tiles, stats,
                   float(arg.scale), float(arg.shift), BLOCK=block, SAME=same, R=rank,
                   **convert_meta(float32, out.dtype))  # fmt: skip
