"""bb_flip on the CPU: the boxes of the whole batch at once, through their corners.

One batch call (the samples' boxes concatenated, each box with its sample's flags): per
sample, NumPy's call overhead cost several times the arithmetic of a few boxes. Every box goes
through the same float32 steps either way.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops import bb_flip
from ndd_triton.ops._bbox import check_batch_box_values
from ndd_triton.ops.schema import Call

_ONE = np.float32(1)


def _flags(call: Call, name: str, n: int) -> np.ndarray:
    """`[n]` bool: the argument is nonzero, per sample (as `SampleArgs` reads it)."""
    value = call.values[name]
    if name in call.per_sample:
        return np.array([value[i] != 0 for i in range(n)], bool)
    return np.full(n, value != 0, bool)


@register(bb_flip.schema, "cpu", batched=True)
def bb_flip_cpu(call: Call, outs: list[list[np.ndarray]], ins: list[list[np.ndarray]]) -> None:
    """`l, r -> 1 - r, 1 - l` (and `t, b`) in float32; `[x, y, w, h]` via `r = x + w`."""
    ltrb = bool(call.ltrb)
    boxes = [x.reshape(-1, 4) for x in ins[0]]
    check_batch_box_values("bb_flip", boxes, ends=ltrb)
    counts = [len(b) for b in boxes]
    if not sum(counts):
        return
    flags = np.stack([_flags(call, name, len(boxes)) for name in ("horizontal", "vertical")], 1)
    flip = np.repeat(flags, counts, axis=0)  # [B, 2]: each box's sample's flags
    allb = np.concatenate(boxes)
    lo = allb[:, :2]
    hi = allb[:, 2:] if ltrb else lo + allb[:, 2:]
    new_lo = np.where(flip, _ONE - hi, lo)
    new_hi = np.where(flip, _ONE - lo, hi)
    result = np.concatenate([new_lo, new_hi if ltrb else new_hi - new_lo], 1)
    at = 0
    for out, k in zip(outs[0], counts, strict=True):
        out.reshape(-1, 4)[...] = result[at:at + k]
        at += k
