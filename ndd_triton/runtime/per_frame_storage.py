"""Lazy, zero-copy producers that reshape batches for per-frame calls (see `_per_frame`).

Each class is a *producer*: a pending `Batch` calls its `storage()` on first data access, which
happens inside the run of the op that consumes it (on the executor thread in eager mode, at the
first read in deferred mode). So prepare never waits for data, and a failure of the producing
op surfaces where the consuming op's result is read.

A packed input keeps its one buffer: frames of a back-to-back packed batch are back to back in
the same buffer, so a GPU kernel still sees one buffer plus offsets (one launch per batch).
"""

from __future__ import annotations

import numpy as np
import torch

from ndd_triton.core.batch import Batch
from ndd_triton.core.storage import BatchStorage
from ndd_triton.core.tensor import Tensor


def _source_samples(source: Tensor | Batch, n: int
                    ) -> tuple[list[torch.Tensor], BatchStorage | None]:  # fmt: skip
    """The samples of a Batch (or a Tensor repeated n times) and the storage they live in."""
    if isinstance(source, Tensor):
        batch = source._source
        storage = batch._storage_or_raise() if batch is not None else None
        return [source._torch()] * n, storage if n == 1 else None
    storage = source._storage_or_raise()
    return storage.samples, storage


def _back_to_back(storage: BatchStorage | None, samples: list[torch.Tensor]) -> bool:
    """True when `storage` is packed with sample k starting where sample k-1 ends."""
    if storage is None or storage.buffer is None or storage.offsets is None:
        return False
    offsets = storage.offsets
    if len(offsets) != len(samples):
        return False
    expected = 0
    for offset, sample in zip(offsets.tolist(), samples, strict=True):
        if offset != expected:
            return False
        expected += sample.numel()
    return True


class Unfold:
    """Producer: every F-frame sample of `source` as F samples (its frames), zero-copy."""

    __slots__ = ("n", "source")

    def __init__(self, source: Tensor | Batch, n: int) -> None:
        self.source, self.n = source, n

    def storage(self) -> BatchStorage:
        samples, storage = _source_samples(self.source, self.n)
        frames = [frame for sample in samples for frame in sample.unbind(0)]
        device = storage.device if storage is not None else self.source.device
        if _back_to_back(storage, samples):
            sizes = np.array([f.numel() for f in frames], dtype=np.int64)
            offsets = np.zeros(len(frames), dtype=np.int64)
            if len(frames) > 1:
                np.cumsum(sizes[:-1], out=offsets[1:])
            assert storage is not None
            result = BatchStorage(frames, device, storage.buffer, offsets)
        else:
            result = BatchStorage(frames, device)
        result.event = storage.event if storage is not None else None
        return result


class Repeat:
    """Producer: sample i of `source` repeated `counts[i]` times (views, no copy)."""

    __slots__ = ("counts", "source")

    def __init__(self, source: Batch, counts: np.ndarray) -> None:
        self.source, self.counts = source, counts

    def storage(self) -> BatchStorage:
        storage = self.source._storage_or_raise()
        samples = [s for s, k in zip(storage.samples, self.counts.tolist(), strict=True)
                   for _ in range(k)]  # fmt: skip
        result = BatchStorage(samples, storage.device)
        result.event = storage.event
        return result


class Fold:
    """Producer: consecutive runs of `counts[i]` frame samples of `frames` as one F-frame sample.

    Op outputs are packed back to back, so each sequence is a view of the same buffer; any other
    storage is stacked (one copy per sequence).
    """

    __slots__ = ("counts", "frames", "what")

    def __init__(self, frames: Batch, counts: np.ndarray, what: str) -> None:
        self.frames, self.counts, self.what = frames, counts, what

    def storage(self) -> BatchStorage:
        storage = self.frames._storage_or_raise()
        frames = storage.samples
        packed = _back_to_back(storage, frames)
        samples: list[torch.Tensor] = []
        offsets = np.zeros(len(self.counts), dtype=np.int64)
        first = 0
        for i, count in enumerate(self.counts.tolist()):
            run = frames[first:first + count]
            shape = run[0].shape
            if any(f.shape != shape for f in run):
                raise ValueError(f"{self.what}: the frames of output sample {i} have different "
                                 f"shapes {[tuple(f.shape) for f in run]}; a sequence needs one "
                                 "frame shape")
            if packed:
                assert storage.offsets is not None
                assert storage.buffer is not None
                start = int(storage.offsets[first])
                offsets[i] = start
                samples.append(storage.buffer[start:start + count * run[0].numel()]
                               .view(count, *shape))  # fmt: skip
            else:
                samples.append(torch.stack(run))
            first += count
        result = BatchStorage(samples, storage.device, storage.buffer if packed else None,
                              offsets if packed else None)  # fmt: skip
        result.event = storage.event
        return result


class Relayout:
    """Producer: the storage of `source` (a Batch or a Tensor repeated n times), unchanged."""

    __slots__ = ("n", "source")

    def __init__(self, source: Tensor | Batch, n: int) -> None:
        self.source, self.n = source, n

    def storage(self) -> BatchStorage:
        if isinstance(self.source, Batch):
            return self.source._storage_or_raise()
        samples, storage = _source_samples(self.source, self.n)
        result = BatchStorage(samples, self.source.device)
        result.event = storage.event if storage is not None else None
        return result
