"""Building Tensors and Batches from user data: `tensor`, `as_tensor`, `batch`, `as_batch`.

`as_*` wrap without copying when the source is a contiguous NumPy array, torch tensor or DLPack
producer; `tensor`/`batch` always copy. dtype conversion follows DALI: NumPy rules for Python
lists (truncation, OverflowError), DALI's cast (round half away, saturate) for array sources.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ndd_triton.core import builders
from ndd_triton.core import device as _device
from ndd_triton.core.batch import Batch, TensorsView, stack_samples
from ndd_triton.core.convert import convert_torch
from ndd_triton.core.device import Device
from ndd_triton.core.dtype import DType
from ndd_triton.core.dtype import dtype as to_dtype
from ndd_triton.core.layout import check_layout
from ndd_triton.core.storage import BatchStorage
from ndd_triton.core.tensor import Tensor
from ndd_triton.core.transfer import conform, foreign_to_torch, move_storage, move_torch


def _stack_list(items: list[Any] | tuple[Any, ...], what: str) -> torch.Tensor:
    parts = [to_torch(x, what=what)[0] for x in items]
    if any(p.shape != parts[0].shape for p in parts):
        raise ValueError(f"{what}: cannot stack a list of arrays with different shapes "
                         f"{[tuple(p.shape) for p in parts]}; use ndd.batch for ragged samples")
    return torch.stack(parts) if parts else torch.empty(0)


def to_torch(data: Any, dtype: Any = None, device: Any = None, copy: bool = False,
             what: str = "tensor") -> tuple[torch.Tensor, Device, str | None]:  # fmt: skip
    """Convert user data to (torch tensor, ndd Device, layout), copying only when needed."""
    t, dev, layout, _ = to_torch_external(data, dtype, device, copy, what)
    return t, dev, layout


def to_torch_external(data: Any, dtype: Any = None, device: Any = None, copy: bool = False,
                      what: str = "tensor"
                      ) -> tuple[torch.Tensor, Device, str | None, bool]:  # fmt: skip
    """`to_torch`, plus whether the result views the caller's memory (external data: a NumPy
    array, torch tensor or DLPack producer, or an ndd Tensor/Batch wrapping one). Ops read such
    inputs before the call returns (seed: external data is consumed synchronously)."""
    layout: str | None = None
    if isinstance(data, Tensor):
        t, dev, copied, layout = data._torch(), data.device, False, data.layout
        external = data._external
    elif isinstance(data, Batch):
        t, dev, copied = data.torch(pad=False), data.device, False
        layout = "N" + data.layout if data.layout else None
        external = data._storage_or_raise().external
    elif isinstance(data, list | tuple) and data and any(
            isinstance(x, Tensor | torch.Tensor | np.ndarray) for x in data):
        t = _stack_list(data, what)
        dev, copied, external = _device.device_of_torch(t), True, False
    else:
        t, dev, copied, applied = foreign_to_torch(data, dtype, what)
        external = True
        if applied:
            dtype = None
    t, dev, copied = conform(t, dev, copied, dtype, device, copy)
    return t, dev, layout, external and not copied


def tensor(data: Any, dtype: Any = None, device: Any = None, layout: str | None = None,
           pad: bool = False) -> Tensor:  # fmt: skip
    """A new Tensor holding a copy of `data`."""
    return _make_tensor(data, dtype, device, layout, pad, copy=True)


def as_tensor(data: Any, dtype: Any = None, device: Any = None, layout: str | None = None,
              pad: bool = False) -> Tensor:  # fmt: skip
    """A Tensor sharing `data`'s memory when possible."""
    return _make_tensor(data, dtype, device, layout, pad, copy=False)


def _make_tensor(data: Any, dtype: Any, device: Any, layout: str | None, pad: bool,
                 copy: bool) -> Tensor:  # fmt: skip
    if data is None:
        raise ValueError("Either data, expression or batch and index must be provided")
    if isinstance(data, Batch):
        t = data.torch(pad=pad, copy=True if copy else None)
        inferred = "N" + data.layout if data.layout else None
        result = Tensor._wrap(t, data.device, inferred)
        if dtype is not None or device is not None:
            result = _make_tensor(result, dtype, device, None, False, copy=False)
    elif isinstance(data, Tensor) and not copy and dtype is None and device is None:
        result = Tensor.__new__(Tensor)
        result._init_from(data)
    else:
        t, dev, inferred, external = to_torch_external(data, dtype, device, copy, "tensor")
        result = Tensor._wrap(t, dev, inferred)
        result._external = external
    if layout is not None:
        result._layout = check_layout(layout, len(result.shape), "tensor")
    return result


def batch(tensors: Any, dtype: Any = None, device: Any = None, layout: str | None = None) -> Batch:
    """A new Batch holding copies of the samples."""
    return build_batch(tensors, dtype=dtype, device=device, layout=layout, copy=True)


def as_batch(tensors: Any, dtype: Any = None, device: Any = None,
             layout: str | None = None) -> Batch:  # fmt: skip
    """A Batch wrapping the samples without copying when possible."""
    return build_batch(tensors, dtype=dtype, device=device, layout=layout, copy=False)


def build_batch(tensors: Any, dtype: Any = None, device: Any = None, layout: str | None = None,
                copy: bool = False) -> Batch:  # fmt: skip
    """Shared implementation of `batch`/`as_batch`/`Batch(...)`."""
    if isinstance(tensors, TensorsView):
        tensors = tensors.as_batch()
    if isinstance(tensors, Batch):
        result = tensors
        if copy or dtype is not None or device is not None:
            result = _convert_batch(tensors, dtype, device, copy)
    elif isinstance(tensors, list | tuple):
        result = _batch_from_list(list(tensors), dtype, device, copy)
    else:
        t, dev, inner, external = to_torch_external(tensors, dtype, device, copy, "batch")
        if t.dim() == 0:
            raise ValueError("batch: a single array-like needs an outer (batch) dimension; got a "
                             "0-D value")
        flat = t.reshape(-1)
        size = int(np.prod(t.shape[1:], dtype=np.int64))
        offsets = np.arange(t.shape[0], dtype=np.int64) * size
        storage = BatchStorage(list(t.unbind(0)), dev, flat, offsets)
        storage.external = external
        result = Batch._concrete(storage, DType.from_fw_type(t.dtype),
                                 inner[1:] if inner else None)  # fmt: skip
    if layout is not None:
        if result is tensors:
            result = Batch._concrete(result._storage_or_raise(), result.dtype, result.layout)
        result._layout = check_layout(layout, result.ndim, "batch")
    return result


def _convert_batch(src: Batch, dtype: Any, device: Any, copy: bool) -> Batch:
    storage = src._storage_or_raise()
    target = to_dtype(dtype) if dtype is not None else src.dtype
    dev = _device.device(device) if device is not None else src.device
    assert dev is not None
    samples = storage.samples
    if target != src.dtype:
        samples = [convert_torch(s, target.torch_dtype) for s in samples]
        storage = BatchStorage(samples, src.device)
    if dev != src.device:
        storage = move_storage(storage, dev)
    elif copy and target == src.dtype:
        storage = move_storage(storage, dev) if storage.buffer is not None else \
            BatchStorage([s.clone() for s in samples], dev)  # fmt: skip
        if storage.buffer is not None and storage.buffer.data_ptr() == \
                src._storage_or_raise().packed()[0].data_ptr():  # fmt: skip
            storage = BatchStorage([s.clone() for s in samples], dev)
    return Batch._concrete(storage, target, src.layout)


def _batch_from_list(items: list[Any], dtype: Any, device: Any, copy: bool) -> Batch:
    if not items:
        if dtype is None:
            raise ValueError("Element type must be specified if the list is empty")
        target = to_dtype(dtype)
        dev = _device.device(device) if device is not None else Device.CPU
        assert dev is not None
        return Batch._concrete(BatchStorage([], dev), target, None)
    converted = [to_torch_external(x, dtype, device, copy, f"batch sample {i}")
                 for i, x in enumerate(items)]  # fmt: skip
    first_t, first_dev, first_layout, _ = converted[0]
    for i, (t, _dev, _, _) in enumerate(converted):
        if t.dim() != first_t.dim():
            raise RuntimeError(f"batch: Sample must have the same sample dim as the first sample: "
                               f"sample {i} has {t.dim()} dimensions, sample 0 has "
                               f"{first_t.dim()}")
        if t.dtype != first_t.dtype:
            raise TypeError(f"batch: samples have different dtypes: sample 0 is "
                            f"{DType.from_fw_type(first_t.dtype)}, sample {i} is "
                            f"{DType.from_fw_type(t.dtype)}; pass dtype= to convert")
    samples = [t if dev == first_dev else move_torch(t, first_dev) for t, dev, _, _ in converted]
    storage = BatchStorage(samples, first_dev)
    storage.external = any(ext and dev == first_dev for _, dev, _, ext in converted)
    if first_dev.device_type == "cpu" and all(
            type(x) is np.ndarray and ext for x, (_, _, _, ext) in zip(items, converted,
                                                                      strict=True)):  # fmt: skip
        # Uncopied NumPy arrays are the very views `sample_arrays` would make of the samples
        # (`_numpy_to_torch` wraps only native, writeable, C-contiguous arrays): kept, instead
        # of a `Tensor.numpy()` per sample (~0.6 us) at every op call that reads them
        storage._host_views = items
    return Batch._concrete(storage, DType.from_fw_type(first_t.dtype), first_layout)


def stack_batch(b: Batch, pad: bool) -> torch.Tensor:
    """Stack a batch into one torch tensor (zero-padding ragged samples when `pad`)."""
    storage = b._storage_or_raise()
    return stack_samples(storage.samples, b.dtype, storage.device) if pad else b.torch()


builders.to_torch = to_torch_external
builders.build_batch = build_batch
builders.tensor = tensor
builders.as_tensor = as_tensor
