"""normalize on the GPU: one launch; each program owns one statistics group.

A group is the set of elements sharing one (mean, stddev): one kept-coordinate row of one
sample, or of every sample with batch=True. Its elements are listed as *segments* (one per
sample, base offset precomputed on the host) whose reduced elements are walked in BLOCK chunks
(unravelled over the sample's reduced extents). The program makes up to three passes: the
mean (unless given), the centred sum of squares (unless stddev is given), then the output
`(x - mean) * scale / stddev + shift`, converted with DALI's rounding and saturation. Given
parameters arrive as one float per group. All accumulation is fp32.
"""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from ndd_triton.core.dtype import float32
from ndd_triton.kernels import register
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tensor_copy import _helper_dali_convert, convert_meta
from ndd_triton.kernels.gpu.reductions import _block_for, _helper_strided_offset, _split_table
from ndd_triton.ops import normalize
from ndd_triton.ops.schema import Call

RED_N: tl.constexpr = tl.constexpr(0)  # reduced elements per segment
RED_EXT: tl.constexpr = tl.constexpr(13)  # columns of _split_table: kept (0-11), reduced (12-23)
RED_STR: tl.constexpr = tl.constexpr(19)
NCOL: tl.constexpr = tl.constexpr(25)
SEG_SAMPLE: tl.constexpr = tl.constexpr(0)
SEG_IN: tl.constexpr = tl.constexpr(1)  # absolute input offset of the segment's base element
SEG_OUT: tl.constexpr = tl.constexpr(2)
SEG_NCOL: tl.constexpr = tl.constexpr(3)


@triton.jit
def _helper_segment_sum(src, segs, samples, seg0, nseg, center, SQUARE: tl.constexpr,
                        BLOCK: tl.constexpr):  # fmt: skip
    """Sum of x (or of (x - center)^2) over every segment of a group, and the element count."""
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    count = tl.load(segs + seg0 * SEG_NCOL) * 0
    for s in range(seg0, seg0 + nseg):
        seg = segs + s * SEG_NCOL
        row = samples + tl.load(seg + SEG_SAMPLE) * NCOL
        n = tl.load(row + RED_N)
        base = tl.load(seg + SEG_IN)
        for start in range(0, n, BLOCK):
            idx = start + tl.arange(0, BLOCK).to(tl.int64)
            mask = idx < n
            x = tl.load(src + base + _helper_strided_offset(idx, row, RED_EXT, RED_STR),
                        mask=mask, other=0).to(tl.float32)  # fmt: skip
            if SQUARE:
                x = tl.where(mask, (x - center) * (x - center), 0.0)
            acc += x
        count += n
    return tl.sum(acc, axis=0), count


@triton.jit
def _normalize_kernel(src, dst, groups, ptable, segs, samples, ddof, epsilon, scale, shift,
                      HAS_MEAN: tl.constexpr, HAS_STD: tl.constexpr, BLOCK: tl.constexpr,
                      CONVERT: tl.constexpr, LO: tl.constexpr, HI: tl.constexpr,
                      NANV: tl.constexpr, LO_F: tl.constexpr, HI_F: tl.constexpr):  # fmt: skip
    """Statistics and output of one group."""
    g = tl.program_id(0)
    seg0 = tl.load(groups + 2 * g)
    nseg = tl.load(groups + 2 * g + 1)
    if HAS_MEAN:
        mean = tl.load(ptable + 2 * g)
    else:
        total, count = _helper_segment_sum(src, segs, samples, seg0, nseg, 0.0, False, BLOCK)
        mean = total / tl.maximum(count, 1).to(tl.float32)
    if HAS_STD:
        std = tl.load(ptable + 2 * g + 1)
    else:
        ssd, count = _helper_segment_sum(src, segs, samples, seg0, nseg, mean, True, BLOCK)
        divisor = count - ddof
        var = tl.where(divisor > 0, ssd / tl.maximum(divisor, 1).to(tl.float32), 0.0)
        std = tl.sqrt(var + epsilon)
    factor = tl.where(std > 0, scale / tl.where(std > 0, std, 1.0), 0.0)
    for s in range(seg0, seg0 + nseg):
        seg = segs + s * SEG_NCOL
        row = samples + tl.load(seg + SEG_SAMPLE) * NCOL
        n = tl.load(row + RED_N)
        base_in = tl.load(seg + SEG_IN)
        base_out = tl.load(seg + SEG_OUT)
        for start in range(0, n, BLOCK):
            idx = start + tl.arange(0, BLOCK).to(tl.int64)
            mask = idx < n
            off = _helper_strided_offset(idx, row, RED_EXT, RED_STR)
            x = tl.load(src + base_in + off, mask=mask, other=0).to(tl.float32)
            y = (x - mean) * factor + shift
            if CONVERT:
                y = _helper_dali_convert(y, dst.dtype.element_ty, LO, HI, NANV, LO_F, HI_F)
            tl.store(dst + base_out + off, y, mask=mask)


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


@register(normalize.schema, "gpu")
def normalize_gpu(run: GpuRun, out: GpuBatch, inp: GpuBatch, arg: Call) -> None:
    """Build group, segment and sample tables; launch one program per group."""
    axes: tuple[int, ...] = arg.norm_axes
    kept = _kept_offsets(inp.shapes, axes)
    groups, segs = _segments(inp, out, kept, bool(arg.batch))
    red_n = np.array([np.prod([s[d] for d in axes], dtype=np.int64) for s in inp.shapes],
                     dtype=np.int64).reshape(-1)  # fmt: skip
    samples = np.concatenate([red_n[:, None], _split_table(inp.shapes, axes)], axis=1)
    given = arg.group_params
    params = np.zeros((len(groups), 2), dtype=np.float32)
    for col, name in enumerate(("mean", "stddev")):
        if name in given:
            values = given[name][:1] if arg.batch else given[name]
            params[:, col] = np.concatenate(values) if values else []
    with np.errstate(over="ignore"):
        run.launch(
            _normalize_kernel,
            (len(groups),),
            inp.data,
            out.data,
            groups,
            params,
            segs,
            samples,
            int(arg.ddof),
            float(arg.epsilon),
            float(arg.scale),
            float(arg.shift),
            HAS_MEAN="mean" in given,
            HAS_STD="stddev" in given,
            BLOCK=_block_for(red_n),
            **convert_meta(float32, out.dtype),
        )
