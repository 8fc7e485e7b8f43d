"""Concrete batch storage: one packed torch buffer plus per-sample offsets and shapes.

Every op output is allocated as one buffer, so a GPU kernel can address the whole ragged batch
from a sample table in one launch; batches wrapped from scattered tensors are packed on demand
(one copy, cached). A uniform packed batch has a zero-copy dense `(N, *shape)` view.
"""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from ndd_triton.core.device import Device
from ndd_triton.core.packing import Packing

# Host buffers of batches are recycled: a fresh 38 MB batch (64 x 224x224x3 float32) is mmapped
# by malloc and page-faulted in on first touch, ~25 ms per batch vs ~9 ms for reused memory.
# A pooled buffer is a NumPy array; it is free when nothing but the pool refers to it (every
# NumPy view of it refers to it as its base, and every torch tensor made from such a view keeps
# that view alive) and is then handed out again for batches of 1/2 to 1x its size; at most
# _POOL_COUNT buffers are kept. Host batches hold NumPy memory and make their torch views on
# first use: kernels and readers work on NumPy, and a torch call at a batch boundary costs
# 40-60 us with caches cold from the kernels before it (measured in situ).
_POOL_MIN_BYTES = 1 << 20
# Tests: op outputs and kernels' scratch buffers start as 0xFF bytes (NaN, -1, 255), not
# whatever the allocator returns (often zeros), so an element a kernel forgets to write shows
POISON_MEMORY = False
_POOL_COUNT = 12
_pool: list[np.ndarray] = []
_pool_lock = threading.Lock()


def _refs(k: int) -> int:
    """References to pool buffer `k` (the pool's own and one temporary when free)."""
    return sys.getrefcount(_pool[k])


def _can_pool() -> bool:
    """Whether reference counts tell free buffers apart (CPython: a free one has 2)."""
    _pool.append(np.empty(1, np.uint8))
    try:
        free = _refs(0)
        view = _pool[0][:1]
        return free == 2 and _refs(0) == 3 and view.base is _pool[0]
    finally:
        _pool.clear()


_CAN_POOL = _can_pool()


def host_empty(nbytes: int) -> np.ndarray:
    """`nbytes` of uninitialised host memory as a 1-D uint8 array; large ones are recycled."""
    if nbytes < _POOL_MIN_BYTES or not _CAN_POOL:
        return np.full(nbytes, 0xFF, np.uint8) if POISON_MEMORY else np.empty(nbytes, np.uint8)
    with _pool_lock:
        best, best_size = -1, 0
        for k in range(len(_pool)):
            size = _pool[k].size
            if nbytes <= size <= 2 * nbytes and (best < 0 or size < best_size) and \
                    _refs(k) == 2:  # fmt: skip
                best, best_size = k, size
        if best >= 0:
            raw = _pool.pop(best)
        else:
            raw = np.empty(nbytes, np.uint8)
            if len(_pool) >= _POOL_COUNT:
                _pool.pop(0)
        _pool.append(raw)  # most recently used last
    if POISON_MEMORY:
        raw[:nbytes] = 0xFF
    return raw[:nbytes]


def ensure_pool_count(count: int) -> None:
    """Track at least `count` host buffers: a loader with batches in flight holds more at once
    than a plain loop, and a buffer dropped from the pool costs a fresh, page-faulted one."""
    global _POOL_COUNT
    with _pool_lock:
        _POOL_COUNT = max(_POOL_COUNT, int(count))


def ensure_pool_for(batches: int) -> None:
    """`ensure_pool_count` for `batches` batches in flight besides the caller's: each holds
    about 6 pooled host buffers (reader output, decoded images, intermediates, outputs)."""
    ensure_pool_count(_POOL_COUNT_BASE + 6 * batches)


_POOL_COUNT_BASE = _POOL_COUNT


NUMPY_DTYPES: dict[torch.dtype, np.dtype] = {  # torch -> NumPy element types (no bfloat16)
    t: np.dtype(n) for t, n in (
        (torch.bool, np.bool_), (torch.uint8, np.uint8), (torch.int8, np.int8),
        (torch.int16, np.int16), (torch.int32, np.int32), (torch.int64, np.int64),
        (getattr(torch, "uint16", None), np.uint16), (getattr(torch, "uint32", None), np.uint32),
        (getattr(torch, "uint64", None), np.uint64), (torch.float16, np.float16),
        (torch.float32, np.float32), (torch.float64, np.float64),
    ) if t is not None
}
_TORCH_DTYPES = {n: t for t, n in NUMPY_DTYPES.items()}  # NumPy -> torch, no torch call
_pack_lock = threading.Lock()  # packing scattered samples is rare: one lock for all batches


class BatchStorage:
    """Samples of one batch as torch tensors, optionally views into one packed buffer."""

    __slots__ = ("_buffer", "_buffer_np", "_dense_np", "_dense_t", "_host_views", "_offsets",
                 "_sample_sizes", "_samples", "_shape_rows", "contiguous", "device", "event",
                 "external", "hints")

    def __init__(self, samples: list[torch.Tensor], device: Device,
                 buffer: torch.Tensor | None = None,
                 offsets: np.ndarray | None = None) -> None:  # fmt: skip
        self._samples: list[torch.Tensor] | None = samples
        self.device = device
        # The samples view the caller's memory (`as_batch` of NumPy/torch data without a copy):
        # ops read such inputs before the call returns (seed: external data is synchronous).
        self.external = False
        self._buffer = buffer
        self._buffer_np: np.ndarray | None = None  # a host `buffer` as NumPy (`allocate`)
        self._offsets = offsets
        # A uniform batch's (N, *shape) data: torch view, and for host batches its NumPy view
        # (small outputs are allocated as NumPy arrays; the torch view is made on first use).
        self._dense_t: torch.Tensor | None = None
        self._dense_np: np.ndarray | None = None
        # A ragged batch from `allocate` keeps its shapes; its per-sample views into `buffer`
        # are made on first use (CPU kernels slice the buffer in NumPy instead: cheaper).
        self._shape_rows: list[list[int]] | None = None
        self._host_views: list[np.ndarray] | None = None  # cached by `host_views`
        self._sample_sizes: np.ndarray | None = None  # elements per sample (ragged `allocate`)
        self.event: object | None = None  # CUDA event marking when the producing kernels end
        # Per-sample facts its producer computed about the data (a reader's parsed JPEG
        # headers, "image_info"; its source paths, "source"), read by ops that would otherwise
        # recompute them. Only the storage object that was annotated carries them: selections
        # and op outputs do not.
        self.hints: dict[str, Any] | None = None
        # The samples lie back to back in `buffer`, in order (offsets = running sums of the
        # sample sizes): how `allocate` and packing lay them out, so every op output is
        # contiguous; a whole-call replay keys such inputs without their offsets
        self.contiguous = False

    @staticmethod
    def from_numpy_dense(array: np.ndarray, device: Device) -> BatchStorage:
        """A uniform host batch held by a C-contiguous `(N, *shape)` NumPy array (not copied)."""
        storage = BatchStorage(None, device)  # type: ignore[arg-type]
        storage._dense_np = array
        return storage

    def _dense_view(self) -> torch.Tensor | None:
        """The (N, *shape) torch view of a uniform batch, or None."""
        dense = self._dense_t
        if dense is None and self._dense_np is not None:
            dense = self._dense_t = torch.from_numpy(self._dense_np)
        return dense

    # A uniform batch from `allocate` starts as its dense (N, *shape) array only; the flat
    # buffer view and the offsets are derived on first use (most small CPU calls never ask).
    @property
    def buffer(self) -> torch.Tensor | None:
        """The packed 1-D buffer holding every sample, or None when not packed (yet)."""
        buffer = self._buffer
        if buffer is None:
            if self._buffer_np is not None:
                buffer = self._buffer = torch.from_numpy(self._buffer_np)
            else:
                dense = self._dense_view()
                if dense is not None:
                    buffer = self._buffer = dense.view(-1)
        return buffer

    def host_array(self) -> np.ndarray | None:
        """The NumPy array that holds a host batch allocated here (the flat ragged buffer or
        the uniform `(N, ...)` array), or None. Every view of the batch's data, NumPy or torch,
        keeps this very object alive, so its lifetime bounds the memory's use as this batch."""
        return self._buffer_np if self._buffer_np is not None else self._dense_np

    def host_buffer(self) -> np.ndarray | None:
        """The packed buffer of a host batch as a flat NumPy array (without a torch call when
        the batch was allocated here), or None (not packed, not on the host, or a dtype NumPy
        lacks)."""
        if self._buffer_np is not None:
            return self._buffer_np
        if self._dense_np is not None:
            return self._dense_np.reshape(-1)
        if self.device.device_type != "cpu":
            return None
        buffer = self.buffer
        if buffer is None or buffer.dtype not in NUMPY_DTYPES:
            return None
        return buffer.numpy()

    @buffer.setter
    def buffer(self, value: torch.Tensor | None) -> None:
        self._buffer = value

    @property
    def offsets(self) -> np.ndarray | None:
        """Element offset of each sample in `buffer` (None when not packed)."""
        offsets = self._offsets
        if offsets is None:
            dense = self._dense_np if self._dense_np is not None else self._dense_t
            if dense is not None:
                n, size = dense.shape[0], math.prod(dense.shape[1:])
                offsets = self._offsets = np.arange(n, dtype=np.int64) * size
        return offsets

    @offsets.setter
    def offsets(self, value: np.ndarray | None) -> None:
        self._offsets = value

    @staticmethod
    def allocate(shapes: Sequence[Sequence[int]] | np.ndarray, dtype: torch.dtype,
                 device: Device) -> BatchStorage:  # fmt: skip
        """One uninitialised buffer holding all samples of the given shapes."""
        lay = Packing(shapes)
        n, row = lay.n, lay.row
        # Host memory is NumPy's (torch views on first use, see `host_empty`)
        np_dtype = NUMPY_DTYPES.get(dtype) if device.device_type == "cpu" else None
        if row is not None:
            # Uniform: one (N, *shape) allocation split along the batch axis; cheaper than N
            # narrow+view calls, and the dense view comes for free.
            if np_dtype is not None:
                dense = host_empty(lay.total * dtype.itemsize).view(np_dtype).reshape(n, *row)
                return BatchStorage.from_numpy_dense(dense, device)
        elif np_dtype is not None:
            storage = BatchStorage(None, device, None, lay.offsets)  # type: ignore[arg-type]
            storage._buffer_np = host_empty(lay.total * dtype.itemsize).view(np_dtype)
            storage._shape_rows, storage._sample_sizes = lay.rows, lay.sizes
            storage.contiguous = True
            return storage
        return BatchStorage.device_allocator(lay, dtype, device)()

    @staticmethod
    def device_allocator(shapes: Any, dtype: torch.dtype,
                         device: Device) -> Callable[[], BatchStorage]:  # fmt: skip
        """`allocate` of device memory for batches of these shapes (or their `Packing`), its
        per-shape work done once: each call allocates only the buffer (the offsets and shape
        rows are shared by the storages it makes: read-only by convention, as ever). The flat
        buffer and offsets a kernel reads are set at once (every GPU op reads them); the
        samples are derived lazily."""
        lay = shapes if isinstance(shapes, Packing) else Packing(shapes)
        offsets, rows, sizes, total = lay.offsets, lay.rows, lay.sizes, lay.total
        torch_device = device.torch_device
        dense = (lay.n, *lay.row) if lay.row is not None else None

        def allocate() -> BatchStorage:
            flat = torch.empty(total, dtype=dtype, device=torch_device)
            if POISON_MEMORY:
                flat.view(torch.uint8).fill_(0xFF)
            storage = BatchStorage(None, device, flat, offsets)  # type: ignore[arg-type]
            if dense is not None:
                storage._dense_t = flat.view(*dense)  # (unpacked: ~0.5 us cheaper than a tuple)
            else:
                storage._shape_rows, storage._sample_sizes = rows, sizes
            storage.contiguous = True
            return storage

        return allocate

    @property
    def samples(self) -> list[torch.Tensor]:
        """Per-sample tensors (views into the packed buffer when there is one)."""
        samples = self._samples
        if samples is None:
            rows = self._shape_rows
            if rows is not None:
                buffer, offsets = self.buffer, self._offsets
                assert buffer is not None
                assert offsets is not None
                if rows and all(len(row) == 1 for row in rows):
                    # 1-D samples (encoded files) packed back to back: one split call, ~7x
                    # cheaper than a slice and a view per sample (and so is their release)
                    sizes = [row[0] for row in rows]
                    samples = list(buffer[:sum(sizes)].split(sizes))
                else:
                    samples = [buffer[o:o + math.prod(row)].view(row)
                               for o, row in zip(offsets.tolist(), rows, strict=True)]  # fmt: skip
            else:
                dense = self._dense_view()
                assert dense is not None
                samples = list(dense.unbind(0))
            self._samples = samples
        return samples

    @property
    def num_samples(self) -> int:
        """Number of samples (without making the per-sample views)."""
        if self._samples is not None:
            return len(self._samples)
        if self._shape_rows is not None:
            return len(self._shape_rows)
        dense = self._dense_np if self._dense_np is not None else self._dense_t
        assert dense is not None
        return int(dense.shape[0])

    @property
    def dtype(self) -> torch.dtype:
        """The samples' torch dtype (without making the per-sample views)."""
        if self._dense_t is not None:
            return self._dense_t.dtype
        if self._dense_np is not None:
            known = _TORCH_DTYPES.get(self._dense_np.dtype)
            return known if known is not None else torch.from_numpy(self._dense_np[:0]).dtype
        if self._buffer is not None:
            return self._buffer.dtype
        if self._buffer_np is not None:
            return _TORCH_DTYPES[self._buffer_np.dtype]
        return self.samples[0].dtype

    @property
    def shapes(self) -> list[tuple[int, ...]]:
        """Per-sample shapes."""
        if self._samples is None and self._shape_rows is not None:
            return [tuple(row) for row in self._shape_rows]
        return [tuple(s.shape) for s in self.samples]

    def sample_sizes(self) -> np.ndarray | None:
        """Elements per sample of a ragged batch from `allocate` (int64), else None."""
        return self._sample_sizes

    def host_views(self) -> list[np.ndarray] | None:
        """Per-sample NumPy views of a ragged host batch from `allocate` (sliced from one NumPy
        view of the buffer: cheaper than converting its torch sample views, which view the same
        bytes), else None."""
        views = self._host_views
        if views is not None:
            return list(views)
        rows = self._shape_rows
        if rows is None or self.device.device_type != "cpu":
            return None
        flat, offsets = self.host_buffer(), self._offsets
        assert offsets is not None
        if flat is None:
            return None
        # made once: a reader's batch is viewed by its prefetch thread (headers) and again by
        # the op that reads it (its layout never changes after `allocate`)
        views = [flat[o:o + math.prod(row)].reshape(row)
                 for o, row in zip(offsets.tolist(), rows, strict=True)]  # fmt: skip
        self._host_views = views
        return list(views)

    def packed(self) -> tuple[torch.Tensor, np.ndarray]:
        """The flat buffer and per-sample element offsets, packing (one copy) if needed."""
        buffer, offsets = self._buffer, self._offsets
        if buffer is not None and offsets is not None:
            return buffer, offsets
        if self.buffer is None:
            with _pack_lock:
                if self.buffer is None:
                    flat = [s.reshape(-1) for s in self.samples]
                    sizes = np.array([f.numel() for f in flat], dtype=np.int64)
                    offsets = np.zeros(len(flat), dtype=np.int64)
                    if len(flat) > 1:
                        np.cumsum(sizes[:-1], out=offsets[1:])
                    if flat:
                        self.buffer = torch.cat(flat)
                        self.contiguous = True
                    else:
                        self.buffer = torch.empty(0, device=self.device.torch_device)
                    self.offsets = offsets
        assert self.offsets is not None
        return self.buffer, self.offsets

    def dense(self) -> torch.Tensor | None:
        """Zero-copy `(N, *shape)` view when shapes are uniform and the batch is packed."""
        dense = self._dense_view()
        if dense is not None:
            return dense
        if self.buffer is None or not self.samples:
            return None
        first = self.samples[0].shape
        for s in self.samples:
            if s.shape != first:
                return None
        # Every constructor of a packed storage lays samples out back to back, in order.
        n = len(self.samples)
        dense = self._dense_t = self.buffer[: n * self.samples[0].numel()].view(n, *first)
        return dense
