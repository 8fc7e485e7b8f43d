"""Concrete batch storage: one packed torch buffer plus per-sample offsets and shapes.

Every op output is allocated as one buffer, so a GPU kernel can address the whole ragged batch
from a sample table in one launch; batches wrapped from scattered tensors are packed on demand
(one copy, cached). A uniform packed batch has a zero-copy dense `(N, *shape)` view.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import torch

from ndd_triton._device import Device


class BatchStorage:
    """Samples of one batch as torch tensors, optionally views into one packed buffer."""

    __slots__ = ("_lock", "buffer", "device", "event", "offsets", "samples")

    def __init__(self, samples: list[torch.Tensor], device: Device,
                 buffer: torch.Tensor | None = None, offsets: np.ndarray | None = None) -> None:  # fmt: skip
        self.samples = samples
        self.device = device
        self.buffer = buffer
        self.offsets = offsets
        self._lock = threading.Lock()
        self.event: object | None = None  # CUDA event marking when the producing kernels end

    @staticmethod
    def allocate(shapes: Sequence[Sequence[int]] | np.ndarray, dtype: torch.dtype,
                 device: Device) -> BatchStorage:  # fmt: skip
        """One uninitialised buffer holding all samples of the given shapes."""
        shapes_list = [tuple(int(v) for v in s) for s in shapes]
        sizes = np.array([int(np.prod(s)) for s in shapes_list], dtype=np.int64)
        offsets = np.zeros(len(sizes), dtype=np.int64)
        if len(sizes) > 1:
            np.cumsum(sizes[:-1], out=offsets[1:])
        total = int(sizes.sum())
        buffer = torch.empty(total, dtype=dtype, device=device.torch_device)
        samples = [buffer[o:o + n].view(s) for o, n, s in zip(offsets.tolist(), sizes.tolist(),
                                                             shapes_list)]  # fmt: skip
        return BatchStorage(samples, device, buffer, offsets)

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
        if self.buffer is None or not self.samples:
            return None
        first = self.samples[0].shape
        if any(s.shape != first for s in self.samples):
            return None
        n = len(self.samples)
        size = self.samples[0].numel()
        assert self.offsets is not None
        if not np.array_equal(self.offsets, np.arange(n, dtype=np.int64) * size):
            return None
        return self.buffer[: n * size].view(n, *first)
