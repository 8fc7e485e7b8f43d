"""Concrete batch storage: one packed torch buffer plus per-sample offsets and shapes.

Every op output is allocated as one buffer, so a GPU kernel can address the whole ragged batch
from a sample table in one launch; batches wrapped from scattered tensors are packed on demand
(one copy, cached). A uniform packed batch has a zero-copy dense `(N, *shape)` view.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence

import numpy as np
import torch

from ndd_triton._device import Device


class BatchStorage:
    """Samples of one batch as torch tensors, optionally views into one packed buffer."""

    __slots__ = ("_dense", "_lock", "_samples", "buffer", "device", "event", "offsets")

    def __init__(self, samples: list[torch.Tensor], device: Device,
                 buffer: torch.Tensor | None = None, offsets: np.ndarray | None = None) -> None:  # fmt: skip
        self._samples: list[torch.Tensor] | None = samples
        self.device = device
        self.buffer = buffer
        self.offsets = offsets
        self._lock = threading.Lock()
        self._dense: torch.Tensor | None = None  # cached (N, *shape) view of a uniform batch
        self.event: object | None = None  # CUDA event marking when the producing kernels end

    @staticmethod
    def allocate(shapes: Sequence[Sequence[int]] | np.ndarray, dtype: torch.dtype,
                 device: Device) -> BatchStorage:  # fmt: skip
        """One uninitialised buffer holding all samples of the given shapes."""
        arr = np.asarray(shapes, dtype=np.int64)
        n = len(arr)
        arr = arr.reshape(n, -1) if n else arr.reshape(0, 0)
        shape_rows = arr.tolist()
        if n and all(r == shape_rows[0] for r in shape_rows):
            # Uniform: one (N, *shape) allocation split along the batch axis; cheaper than N
            # narrow+view calls, and the dense view comes for free.
            row = shape_rows[0]
            dense = torch.empty((n, *row), dtype=dtype, device=device.torch_device)
            size = math.prod(row)
            storage = BatchStorage(None, device, dense.view(-1),  # type: ignore[arg-type]
                                   np.arange(n, dtype=np.int64) * size)  # fmt: skip
            storage._dense = dense  # samples are split off lazily (often never needed)
            return storage
        sizes = arr.prod(axis=1) if arr.shape[1] else np.ones(n, dtype=np.int64)
        offsets = np.zeros(n, dtype=np.int64)
        if n > 1:
            np.cumsum(sizes[:-1], out=offsets[1:])
        total = int(sizes.sum())
        buffer = torch.empty(total, dtype=dtype, device=device.torch_device)
        samples = [buffer[o:o + k].view(row) for o, k, row in zip(offsets.tolist(),
                                                                 sizes.tolist(), shape_rows)]
        return BatchStorage(samples, device, buffer, offsets)

    @property
    def samples(self) -> list[torch.Tensor]:
        """Per-sample tensors (views into the packed buffer when there is one)."""
        samples = self._samples
        if samples is None:
            assert self._dense is not None
            samples = self._samples = list(self._dense.unbind(0))
        return samples

    @property
    def shapes(self) -> list[tuple[int, ...]]:
        """Per-sample shapes."""
        return [tuple(s.shape) for s in self.samples]

    def packed(self) -> tuple[torch.Tensor, np.ndarray]:
        """The flat buffer and per-sample element offsets, packing (one copy) if needed."""
        if self.buffer is None:
            with self._lock:
                if self.buffer is None:
                    flat = [s.reshape(-1) for s in self.samples]
                    sizes = np.array([f.numel() for f in flat], dtype=np.int64)
                    offsets = np.zeros(len(flat), dtype=np.int64)
                    if len(flat) > 1:
                        np.cumsum(sizes[:-1], out=offsets[1:])
                    if flat:
                        self.buffer = torch.cat(flat)
                    else:
                        self.buffer = torch.empty(0, device=self.device.torch_device)
                    self.offsets = offsets
        assert self.offsets is not None
        return self.buffer, self.offsets

    def dense(self) -> torch.Tensor | None:
        """Zero-copy `(N, *shape)` view when shapes are uniform and the batch is packed."""
        if self._dense is not None:
            return self._dense
        if self.buffer is None or not self.samples:
            return None
        first = self.samples[0].shape
        for s in self.samples:
            if s.shape != first:
                return None
        # Every constructor of a packed storage lays samples out back to back, in order.
        n = len(self.samples)
        self._dense = self.buffer[: n * self.samples[0].numel()].view(n, *first)
        return self._dense
