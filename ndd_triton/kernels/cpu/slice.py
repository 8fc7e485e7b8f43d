"""slice on the CPU: per-axis source index vectors (policy applied), one fancy-indexed gather."""

from __future__ import annotations

import numpy as np

from ndd_triton.core.convert import convert_numpy
from ndd_triton.kernels import register
from ndd_triton.ops import slice as slice_op
from ndd_triton.ops.schema import SampleArgs


def source_index(start: int, length: int, extent: int, policy: int
                 ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Source coordinates of output positions `start + [0, length)` and which are inside."""
    coords = start + np.arange(length, dtype=np.int64)
    valid = (coords >= 0) & (coords < extent)
    if policy in (slice_op.INSIDE, slice_op.PAD, slice_op.EDGE):
        return np.clip(coords, 0, max(extent - 1, 0)), valid
    if policy == slice_op.WRAP:
        return coords % extent, valid
    if policy == slice_op.REFLECT_1001:  # [0 1 2 3] -> ... 1 0 | 0 1 2 3 | 3 2 ...
        m = coords % (2 * extent)
        return np.where(m >= extent, 2 * extent - 1 - m, m), valid
    if extent == 1:  # reflect_101 of a single element repeats it
        return np.zeros_like(coords), valid
    m = coords % (2 * extent - 2)  # [0 1 2 3] -> ... 2 1 | 0 1 2 3 | 2 1 ...
    return np.where(m >= extent, 2 * extent - 2 - m, m), valid


def _inside(starts: np.ndarray, shape: tuple[int, ...], extents: tuple[int, ...]
            ) -> tuple[slice, ...] | None:  # fmt: skip
    """The window `starts + [0, shape)` as slices when it is non-empty and inside the input
    on every axis (then no policy applies), else None."""
    window = []
    for start, length, extent in zip(starts.tolist(), shape, extents, strict=True):
        start = int(start)
        if length <= 0 or start < 0 or start + length > extent:
            return None
        window.append(slice(start, start + length))
    return tuple(window)


@register(slice_op.schema, "cpu")
def slice_cpu(out: np.ndarray, data: np.ndarray, anchor: object, shape: object,
              arg: SampleArgs) -> None:  # fmt: skip
    """Gather the window; positions outside the input get the fill values ('pad' policy)."""
    starts = arg.anchor_full
    window = _inside(starts, out.shape, data.shape)  # the common case, without index vectors
    if window is not None:
        # the window lies inside the input: a strided view and one copy (np.ix_ gathers are
        # ~7x slower on a 500x400x3 image: the SSD recipe's crop after random_bbox_crop)
        view = data[window]
        if view.dtype == out.dtype:
            out[...] = view
        else:
            convert_numpy(view, out.dtype, out=out)
        return
    policy: int = arg.policy_code
    index, valid = [], []
    for axis, (length, extent) in enumerate(zip(out.shape, data.shape, strict=True)):
        idx, ok = source_index(int(starts[axis]), length, extent, policy)
        index.append(idx)
        valid.append(ok)
    if data.size and all(ok.all() and (len(idx) == 0 or idx[-1] - idx[0] == len(idx) - 1)
                         for idx, ok in zip(index, valid, strict=True)):  # fmt: skip
        # inside, with an empty axis: a (strided) view and one copy, as above
        view = data[tuple(slice(int(idx[0]), int(idx[0]) + len(idx)) if len(idx) else slice(0, 0)
                          for idx in index)]  # fmt: skip
        if view.dtype == out.dtype:
            out[...] = view
        else:
            convert_numpy(view, out.dtype, out=out)
        return
    if data.size == 0:
        values = np.empty(out.shape, data.dtype)
        inside = np.zeros(out.shape, bool)
    else:
        values = data[np.ix_(*index)]
        inside = np.ones(out.shape, bool)
        if policy == slice_op.PAD:
            for axis, ok in enumerate(valid):
                inside &= ok.reshape([-1 if a == axis else 1 for a in range(out.ndim)])
    converted = convert_numpy(values, out.dtype)
    if policy != slice_op.PAD or inside.all():
        out[...] = converted
        return
    fill = arg.fill
    if arg.channel_axis >= 0:
        fill = fill.reshape([-1 if a == arg.channel_axis else 1 for a in range(out.ndim)])
    out[...] = np.where(inside, converted, fill)
