"""Index-map geometry folded into a fused pass's source read (compile mode, `runtime/fusion.py`).

A slice or crop whose window lies inside its image, and a horizontal or vertical flip, only
choose which input pixel each output pixel is: output pixel `(i, j)` of such a chain is input
pixel `b + M @ (i, j)`, `M` a signed diagonal 2x2 matrix. A pass that reads the chain's input
at `b + M @ (i, j)` instead of the chain's output reads the same values (exact), and the
chain's copies disappear. `resample_cmn` uses it for the calls before its resize (the
detection recipe's `slice -> resize -> flip -> crop_mirror_normalize` is one GPU launch), and
`affine_cmn`/`affine_geometry` for the calls before a warp (`runtime/fusion_affine.py`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ndd_triton.runtime.fusion_group import sole_producer
from ndd_triton.runtime.trace import CallRecord

HEAD_OPS = ("slice", "crop", "flip")
MAX_HEADS = 4
View = tuple[np.ndarray, np.ndarray]  # `(b, M)` of `source_view`


def geometry_heads(program: list[CallRecord], uses: dict[tuple[int, int], int],
                   p: int) -> tuple[int, ...]:  # fmt: skip
    """The GPU slices, crops and flips (in program order, at most `MAX_HEADS`) before call p,
    each the only producer of the next and read by nothing else."""
    heads: list[int] = []
    rec = program[p]
    while len(heads) < MAX_HEADS:
        q = sole_producer(program, uses, rec, HEAD_OPS)
        if q is None or not program[q].gpu:
            break
        heads.insert(0, q)
        rec = program[q]
    return tuple(heads)


def source_view(calls: list[Any], specs: list[Any]) -> View | None:
    """`(b, M)` (`[N, 2]`, `[N, 2, 2]`) of a chain of prepared slice/crop/flip calls on HWC
    images: output pixel `(i, j)` (row, column) is input pixel `b + M @ (i, j)` of the first
    call's input; None when a call is not an index map (a window leaving its image, a channel
    cut, a type conversion, a depthwise flip, another layout)."""
    n = calls[0].batch_size
    b = np.zeros((n, 2), np.int64)
    m = np.broadcast_to(np.eye(2, dtype=np.int64), (n, 2, 2)).copy()
    for call, spec in zip(calls, specs, strict=True):
        data = call.inputs[0]
        dims = data.shapes
        if data.layout != "HWC" or spec.layout != "HWC" or spec.dtype != data.dtype:
            return None
        if call.schema.name == "flip":
            if np.asarray(call.depthwise).reshape(n).any():
                return None
            v = np.asarray(call.vertical).reshape(n) != 0
            h = np.asarray(call.horizontal).reshape(n) != 0
            shift = np.stack([np.where(v, dims[:, 0] - 1, 0), np.where(h, dims[:, 1] - 1, 0)], 1)
            sign = np.stack([np.where(v, -1, 1), np.where(h, -1, 1)], axis=1)
        else:
            shift = window_start(call, spec)
            if shift is None:
                return None
            sign = np.ones((n, 2), np.int64)
        b = b + np.einsum("nij,nj->ni", m, shift)
        m = m * sign[:, None, :]
    return b, m


def window_start(call: Any, spec: Any) -> np.ndarray | None:
    """A slice's or crop's window start `[N, 2]` (row, column) when every window lies inside
    its image and keeps every channel, else None."""
    dims = call.inputs[0].shapes
    if spec.shapes.shape != dims.shape or (spec.shapes[:, 2] != dims[:, 2]).any():
        return None
    if call.schema.name == "slice":
        anchor = np.asarray(call.anchor_full)
        if anchor.shape != dims.shape or (anchor[:, 2] != 0).any():
            return None
        start = anchor[:, :2]
    else:
        start = np.asarray(call.window_start)
        if start.shape != (len(dims), 2):
            return None
    size = spec.shapes[:, :2]
    if (start < 0).any() or (start + size > dims[:, :2]).any():
        return None
    return start.astype(np.int64)


def pixel_steps(view: tuple[np.ndarray, np.ndarray], width: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """For images `width` pixels wide: the pixel index of the view's pixel (0, 0), and the
    index steps from one of its rows and from one of its columns to the next."""
    b, m = view
    return (b[:, 0] * width + b[:, 1], m[:, 0, 0] * width + m[:, 1, 0],
            m[:, 0, 1] * width + m[:, 1, 1])  # fmt: skip


def read_through(heads: list[Any], core: Any) -> tuple[View | None, Any, list[Any]] | None:
    """`(view, call, batches)` of a pass that runs the prepared `core` (a resize or warp)
    reading the prepared `heads` (slices, crops, flips before it) in place: the heads' index
    map (None without heads), the core's call with the pass's one input (the first head's, else
    its own first) and that input's batch; None when the heads are not an index map."""
    call = core.call
    if not heads:
        return None, dataclasses.replace(call, inputs=call.inputs[:1]), core.batches[:1]
    view = source_view([h.call for h in heads], [h.specs[0] for h in heads])
    if view is None:
        return None
    return view, dataclasses.replace(call, inputs=[heads[0].call.inputs[0]]), \
        heads[0].batches[:1]  # fmt: skip


def view_source(view: View | None, inp: Any
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:  # fmt: skip
    """Where a pass reading RGB HWC batch `inp` through `view` finds its pixels: per sample the
    element offset of pixel (0, 0) and the pixel steps to the next row and column (None: `inp`'s
    samples themselves)."""
    if view is None:
        return None
    first, row_step, col_step = pixel_steps(view, inp.shapes[:, 1])
    return inp.offsets + first * 3, row_step, col_step
