"""`Batch`: samples of one dtype and ndim but possibly different shapes.

Concrete data is a `BatchStorage` (one packed buffer for op outputs). A pending batch carries
the inferred dtype/layout/device/shapes of the op that produces it and waits on first data access.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import torch

from ndd_triton.core import builders
from ndd_triton.core import device as _device
from ndd_triton.core.device import Device
from ndd_triton.core.dtype import DType
from ndd_triton.core.indexing import apply_index, basic_index
from ndd_triton.core.operators import ArithmeticMixin
from ndd_triton.core.storage import BatchStorage
from ndd_triton.core.tensor import Tensor
from ndd_triton.core.transfer import move_storage


class Batch(ArithmeticMixin):
    """A batch of samples; select samples with `.select()`, slice inside them with `.slice[...]`."""

    __slots__ = ("__weakref__", "_batch_size", "_device", "_dtype", "_layout", "_producer",
                 "_shapes", "_storage")  # fmt: skip

    def __init__(self, tensors: Any = None, dtype: Any = None, device: Any = None,
                 layout: str | None = None, invocation_result: Any = None,
                 copy: bool = False) -> None:  # fmt: skip
        if tensors is None:
            raise ValueError("Batch: `tensors` must be given")
        built = builders.build_batch(tensors, dtype=dtype, device=device, layout=layout, copy=copy)
        self._adopt(built)

    def _adopt(self, other: Batch) -> None:
        for name in Batch.__slots__[1:]:
            setattr(self, name, getattr(other, name))

    @staticmethod
    def _concrete(storage: BatchStorage, dtype: DType, layout: str | None) -> Batch:
        """Wrap concrete storage (internal fast path)."""
        obj = Batch.__new__(Batch)
        obj._storage = storage
        obj._producer = None
        obj._dtype = dtype
        obj._layout = layout
        obj._device = storage.device
        obj._batch_size = storage.num_samples
        obj._shapes = None
        return obj

    @staticmethod
    def _pending(producer: Any, dtype: DType, layout: str | None, device: Device,
                 batch_size: int, shapes: np.ndarray | None) -> Batch:  # fmt: skip
        """A batch that `producer.storage()` will fill (an op result)."""
        obj = Batch.__new__(Batch)
        obj._storage = None
        obj._producer = producer
        obj._dtype = dtype
        obj._layout = layout
        obj._device = device
        obj._batch_size = batch_size
        obj._shapes = shapes
        return obj

    @staticmethod
    def _failed(producer: Any) -> Batch:
        """The result of a call that failed before its metadata was known: reading anything
        of it (even its dtype) raises the call's error (`producer.storage()` does)."""
        obj = Batch._pending(producer, None, None, None, None, None)  # type: ignore[arg-type]
        return obj

    def _known(self) -> None:
        """Raise the producing call's error when the metadata is unknown (see `_failed`)."""
        if self._dtype is None:
            self._storage_or_raise()

    def _must_run(self) -> bool:
        """True while the producer is a deferred call that has not run: reading `.shape` then
        runs it (deferred mode answers nothing from inference alone, spec/core.md §2)."""
        return self._storage is None and getattr(self._producer, "deferred", False)

    def _storage_or_raise(self) -> BatchStorage:
        """Concrete storage, waiting for the producing op and re-raising its error here."""
        storage = self._storage
        if storage is None:
            storage = self._producer.storage()
            self._storage = storage
        return storage

    # ---- metadata ------------------------------------------------------------------------
    @property
    def batch_size(self) -> int:
        """Number of samples."""
        if self._batch_size is None:
            self._storage_or_raise()
        return self._batch_size

    @property
    def shape(self) -> list[tuple[int, ...]]:
        """Per-sample shapes."""
        if self._shapes is not None and self._storage is None and not self._must_run():
            return [tuple(int(v) for v in s) for s in self._shapes]
        return self._storage_or_raise().shapes

    @property
    def ndim(self) -> int:
        """Per-sample number of dimensions."""
        if self._shapes is not None:
            return int(self._shapes.shape[1]) if self._shapes.ndim == 2 else 0
        samples = self._storage_or_raise().samples
        return samples[0].dim() if samples else 0

    @property
    def dtype(self) -> DType:
        """Element type."""
        if self._dtype is None:
            self._storage_or_raise()
        return self._dtype

    @property
    def layout(self) -> str | None:
        """Per-sample layout (without the batch dimension), or None."""
        self._known()
        return self._layout

    @property
    def device(self) -> Device:
        """Device of the data."""
        self._known()
        return self._device

    @property
    def tensors(self) -> TensorsView:
        """List-like view of the samples as Tensors."""
        self._known()
        return TensorsView(self, range(self._batch_size))

    @property
    def slice(self) -> _PerSampleSlicer:
        """`batch.slice[...]` indexes inside every sample (Batch components are per sample)."""
        return _PerSampleSlicer(self)

    # ---- selection -----------------------------------------------------------------------
    def select(self, which: Any) -> Any:
        """Sample `which` (int) as a Tensor, or a Batch of the samples chosen by a slice/list."""
        self._known()
        if isinstance(which, int | np.integer) and not isinstance(which, bool):
            index = int(which)
            if not -self._batch_size <= index < self._batch_size:
                raise IndexError(f"Batch.select: sample index {index} is out of range for a batch "
                                 f"of {self._batch_size} samples")
            return Tensor._pending(self, index % self._batch_size)
        if which is Ellipsis or (isinstance(which, slice) and which == slice(None)):
            return self
        if isinstance(which, slice):
            indices = list(range(self._batch_size))[which]
        elif isinstance(which, list | np.ndarray | range):
            indices = [int(i) for i in which]
            for i in indices:
                if not -self._batch_size <= i < self._batch_size:
                    raise IndexError(f"Batch.select: sample index {i} is out of range for a batch "
                                     f"of {self._batch_size} samples")
        else:
            raise TypeError(f"Batch.select expects an int, a slice or a list of ints; got "
                            f"{type(which).__name__}")
        return self._subset(indices)

    def _subset(self, indices: list[int]) -> Batch:
        samples = self._storage_or_raise().samples
        chosen = [samples[i] for i in indices]
        return Batch._concrete(BatchStorage(chosen, self._device), self._dtype, self._layout)

    def __getitem__(self, key: Any) -> Any:
        raise TypeError("'Batch' object is not subscriptable; use batch.select(i) to pick "
                        "samples or batch.slice[...] to index inside every sample")

    def __iter__(self) -> Iterator[Tensor]:
        self._known()
        return (Tensor._pending(self, i) for i in range(self._batch_size))

    # ---- evaluation and conversion -------------------------------------------------------
    def evaluate(self) -> Batch:
        """Run the pending computation; returns self."""
        self._storage_or_raise()
        return self

    def cpu(self) -> Batch:
        """Self if on the cpu, else a cpu copy."""
        return self.to_device(Device.CPU)

    def gpu(self, index: int | None = None) -> Batch:
        """Self if on that gpu, else a gpu copy (one packed transfer)."""
        return self.to_device(_device.gpu_device(index))

    def to_device(self, device: Any, force_copy: bool = False) -> Batch:
        """Self if already on `device` (unless force_copy), else a copy there."""
        dev = _device.device(device)
        assert dev is not None
        if dev != self._device:
            traced = builders.traced_transfer(self, dev)
            if traced is not None:  # compile mode: traced and issued ahead, not read now
                return traced
        self._known()
        if dev == self._device and not force_copy:
            return self
        self._consumer_sync()
        storage = move_storage(self._storage_or_raise(), dev)
        return Batch._concrete(storage, self._dtype, self._layout)

    def _consumer_sync(self) -> None:
        storage = self._storage_or_raise()
        if storage.event is not None:
            storage.event.make_current_stream_wait()  # type: ignore[attr-defined]

    def torch(self, copy: bool | None = None, pad: bool = False) -> torch.Tensor:
        """Samples stacked into `(N, *shape)`; ragged batches need `pad=True` (zero padding)."""
        storage = self._storage_or_raise()
        self._consumer_sync()
        shapes = storage.shapes
        uniform = all(s == shapes[0] for s in shapes)
        if not uniform and not pad:
            raise ValueError("The batch has a non-uniform shape. To convert it to a tensor, pad "
                             "argument must be True")
        if uniform and copy is not True:
            dense = storage.dense()
            if dense is not None:
                return dense
        if copy is False:
            raise ValueError("This batch cannot be converted to a tensor without a copy.")
        return stack_samples(storage.samples, self._dtype, storage.device)

    def __repr__(self) -> str:
        host = self.cpu()._storage_or_raise().samples
        texts = [np.array2string(_numpy(s), separator=" ").replace("\n", "\n    ") for s in host]
        parts = ["    " + ",\n    ".join(texts) if texts else "    []", f"    dtype={self._dtype}"]
        if self._layout:
            parts.append(f'    layout="{self._layout}"')
        parts.append(f'    device="{self._device}"')
        parts.append(f"    num_samples={self._batch_size}")
        parts.append(f"    shape={self.shape})")
        return "Batch(\n" + ",\n".join(parts)

    __str__ = __repr__
    __hash__ = None  # type: ignore[assignment]

    @staticmethod
    def broadcast(sample: Any, batch_size: int, device: Any = None, dtype: Any = None) -> Batch:
        """A batch of `batch_size` copies of one sample."""
        if isinstance(batch_size, bool) or not isinstance(batch_size, int | np.integer):
            raise TypeError(f"Batch.broadcast: batch_size must be an int; got "
                            f"{type(batch_size).__name__}")  # fmt: skip
        if batch_size < 0:  # (DALI 2.4: ValueError 'vector::_M_default_append')
            raise ValueError(f"Batch.broadcast: batch_size must not be negative; got "
                             f"{int(batch_size)}")  # fmt: skip
        t = builders.as_tensor(sample, dtype=dtype, device=device)
        data = t._torch()
        storage = BatchStorage.allocate([tuple(data.shape)] * batch_size, data.dtype, t.device)
        for s in storage.samples:
            s.copy_(data)
        return Batch._concrete(storage, t.dtype, t.layout)


def _numpy(t: torch.Tensor) -> np.ndarray:
    t = t.float() if t.dtype == torch.bfloat16 else t
    return t.numpy()


def stack_samples(samples: list[torch.Tensor], dtype: DType, device: Device) -> torch.Tensor:
    """Stack samples into one tensor, zero-padding each axis to the batch maximum."""
    if not samples:
        return torch.empty((0,), dtype=dtype.torch_dtype, device=device.torch_device)
    ndim = samples[0].dim()
    extent = [max(int(s.shape[d]) for s in samples) for d in range(ndim)]
    out = torch.zeros((len(samples), *extent), dtype=samples[0].dtype, device=samples[0].device)
    for i, s in enumerate(samples):
        out[(i, *[slice(0, n) for n in s.shape])] = s
    return out


class TensorsView:
    """List-like view of a batch's samples (`len`, `[i]`, slicing, iteration, `.tolist()`)."""

    __slots__ = ("_batch", "_indices")

    def __init__(self, batch: Batch, indices: range | list[int]) -> None:
        self._batch = batch
        self._indices = indices

    def __len__(self) -> int:
        return len(self._indices)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return TensorsView(self._batch, self._indices[key])
        if not isinstance(key, int | np.integer):
            raise TypeError(f"Batch.tensors indices must be int or slice; got {type(key).__name__}")
        try:
            index = self._indices[int(key)]
        except IndexError:
            raise IndexError(f"Batch.tensors index {key} is out of range for {len(self)} "
                             "samples") from None
        return Tensor._pending(self._batch, index)

    def __iter__(self) -> Iterator[Tensor]:
        return (Tensor._pending(self._batch, i) for i in self._indices)

    def tolist(self) -> list[Tensor]:
        """The samples as a list of Tensors."""
        return list(self)

    def as_batch(self) -> Batch:
        """The viewed samples as a Batch."""
        return self._batch.select(list(self._indices))  # type: ignore[no-any-return]

    def select(self, which: Any) -> Any:
        """Like `Batch.select`, relative to this view."""
        return self.as_batch().select(which)


class _PerSampleSlicer:
    """`batch.slice[...]`: the same basic index applied inside every sample."""

    __slots__ = ("_batch",)

    def __init__(self, batch: Batch) -> None:
        self._batch = batch

    def __getitem__(self, key: Any) -> Batch:
        batch = self._batch
        items = key if isinstance(key, tuple) else (key,)
        if key is None or key is Ellipsis:
            return batch
        storage = batch._storage_or_raise()
        out: list[torch.Tensor] = []
        layout: str | None = batch._layout
        for i, sample in enumerate(storage.samples):
            sample_key = tuple(_per_sample(item, i, batch._batch_size) for item in items)
            torch_key, layout = basic_index(sample_key, tuple(sample.shape), batch._layout,
                                            f"Batch.slice sample {i}")  # fmt: skip
            out.append(apply_index(sample, torch_key))
        return Batch._concrete(BatchStorage(out, batch._device), batch._dtype, layout)


def _per_sample(item: Any, index: int, batch_size: int) -> Any:
    if isinstance(item, Batch):
        if item.batch_size != batch_size:
            raise ValueError(f"Batch.slice: Inconsistent batch size: {item.batch_size} != "
                             f"{batch_size}")
        return item.select(index)
    if isinstance(item, slice):
        return slice(*(_per_sample(v, index, batch_size) for v in (item.start, item.stop,
                                                                   item.step)))  # fmt: skip
    return item
