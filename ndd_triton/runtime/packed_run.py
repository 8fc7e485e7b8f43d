"""The run of a packed CPU kernel (`KernelEntry.packed`): spans of samples on flat buffers.

Why packed kernels exist (the GIL hand-offs of small per-sample work) and when they run:
docs/concepts.md, "Small per-sample work and the GIL".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ndd_triton.core.host_views import Packed, packed_view
from ndd_triton.core.storage import BatchStorage
from ndd_triton.kernels import KernelEntry
from ndd_triton.ops.schema import Call

# Packed kernels split a call into one span per pool thread from this much work on.
_PACKED_SPLIT_BYTES = 1 << 23


def run_packed(call: Call, kernel: KernelEntry, ins: list[BatchStorage | None],
               outs: list[BatchStorage], pool: Any, work: int,
               caller_helps: bool = False) -> bool:  # fmt: skip
    """Run a packed kernel over spans of samples (one per pool thread, this thread one of them
    with `caller_helps`; one span on this thread for small calls); False when an input or
    output is not laid out in one host buffer."""
    packs_in: list[Packed | None] = []
    for storage in ins:
        view = packed_view(storage) if storage is not None else None
        if view is None and storage is not None:
            return False
        packs_in.append(view)
    packs_out = [packed_view(storage) for storage in outs]
    if any(view is None for view in packs_out):
        return False
    n = call.batch_size
    parts = pool.num_threads if work >= _PACKED_SPLIT_BYTES else 1
    bounds = _span_bounds([p for p in (*packs_in, *packs_out) if p is not None], n, parts)
    fn = kernel.packed
    assert fn is not None
    dst: Any = packs_out[0] if len(packs_out) == 1 else tuple(packs_out)

    def span(k: int) -> None:
        fn(dst, *packs_in, call, bounds[k], bounds[k + 1])

    pool.run(span, len(bounds) - 1, work_bytes=work, caller_helps=caller_helps)
    return True


def _span_bounds(packs: list[Packed], n: int, parts: int) -> list[int]:
    """`parts` contiguous spans of samples [b[k], b[k + 1]) of about equal bytes."""
    if parts <= 1 or n <= 1:
        return [0, n]
    cost = np.zeros(n + 1, np.int64)
    for p in packs:
        cost += p.offsets * p.flat.itemsize
    targets = cost[-1] * np.arange(1, parts) // parts
    inner = np.searchsorted(cost, targets).tolist()
    return sorted({0, n, *(min(max(b, 1), n - 1) for b in inner)})
