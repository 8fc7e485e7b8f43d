"""NumPy views of host batch storage: what CPU kernels and codecs read and write.

Views are sliced in NumPy from the batch's buffer where it has one (cheaper than torch views);
a uniform batch is also one `(N, ...)` array for dense kernels. Zero-copy throughout.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import torch

from ndd_triton.core.storage import BatchStorage


def to_numpy(t: torch.Tensor, what: str = "") -> np.ndarray:
    """Zero-copy NumPy view of CPU storage."""
    if t.dtype == torch.bfloat16:
        raise TypeError(f"{what}: bfloat16 data is not supported by CPU kernels")
    return t.numpy()


class Packed(NamedTuple):
    """A host batch as one flat NumPy array: sample i is `flat[offsets[i]:offsets[i + 1]]`,
    of shape `shapes[i]` (what packed CPU kernels read and write)."""

    flat: np.ndarray
    offsets: np.ndarray  # int64 [N + 1]
    shapes: np.ndarray  # int64 [N, ndim]


def packed_view(storage: BatchStorage) -> Packed | None:
    """The `Packed` view of a host batch laid out in one buffer (an op's output, a uniform
    batch), without copying; None when its samples are scattered or not on the host."""
    if storage.device.device_type != "cpu":
        return None
    rows = storage._shape_rows
    if rows is not None:
        flat = storage.host_buffer()
        sizes = storage.sample_sizes()
        if flat is None or sizes is None:
            return None
        offsets = np.empty(len(rows) + 1, np.int64)
        offsets[:-1] = storage.offsets  # type: ignore[assignment]
        offsets[-1] = offsets[-2] + sizes[-1] if len(rows) else 0
        return Packed(flat, offsets, np.array(rows, np.int64).reshape(len(rows), -1))
    dense = storage._dense_np
    if dense is None:
        return None
    n, size = dense.shape[0], math.prod(dense.shape[1:])
    shapes = np.empty((n, dense.ndim - 1), np.int64)
    shapes[:] = dense.shape[1:]
    return Packed(dense.reshape(-1), np.arange(n + 1, dtype=np.int64) * size, shapes)


def sample_getter(storage: BatchStorage, what: str) -> Callable[[int], np.ndarray]:
    """`get(i)`: the NumPy view of sample i that `sample_arrays(storage)[i]` would be."""
    rows = storage._shape_rows
    flat = storage.host_buffer() if rows is not None else None
    if flat is not None:
        starts = storage.offsets.tolist()  # type: ignore[union-attr]

        def ragged(i: int) -> np.ndarray:
            row = rows[i]
            return flat[starts[i]:starts[i] + math.prod(row)].reshape(row)

        return ragged
    arr = storage._dense_np
    if arr is None and storage._dense_t is not None:
        arr = to_numpy(storage._dense_t, what)
    if arr is not None:
        dense = arr
        return dense.__getitem__ if dense.ndim > 1 else lambda i: dense[i, ...]
    samples = storage.samples
    return lambda i: to_numpy(samples[i], what)


def sample_arrays(storage: BatchStorage, what: str) -> list[np.ndarray]:
    """Per-sample NumPy views of CPU storage (sliced in NumPy: cheaper than torch views)."""
    views = storage.host_views()
    if views is not None:
        return views
    arr = storage._dense_np
    if arr is None and storage._dense_t is not None:
        arr = to_numpy(storage._dense_t, what)
    if arr is not None:
        # Iterating yields views of each sample; 0-d samples need `[i, ...]` (not scalars).
        return list(arr) if arr.ndim > 1 else [arr[i, ...] for i in range(len(arr))]
    return [to_numpy(t, what) for t in storage.samples]


def dense_array(storage: BatchStorage) -> np.ndarray | None:
    """`(N, ...)` NumPy view of a uniform host batch (packing it once if scattered), or None."""
    arr = storage._dense_np
    if arr is not None:
        return arr
    if storage._dense_t is None and storage.buffer is None:
        samples = storage.samples
        if not samples or any(t.shape != samples[0].shape for t in samples):
            return None
        storage.packed()  # one small copy, cached on the batch
    view = storage.dense()
    if view is None:
        return None
    arr = storage._dense_np = to_numpy(view)  # kept: the view never changes
    return arr
