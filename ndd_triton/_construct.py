"""Building Tensors and Batches from user data: `tensor`, `as_tensor`, `batch`, `as_batch`.

`as_*` wrap without copying when the source is a contiguous NumPy array, torch tensor or DLPack
producer; `tensor`/`batch` always copy. dtype conversion follows DALI: NumPy rules for Python
lists (truncation, OverflowError), DALI's cast (round half away, saturate) for array sources.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import torch

from ndd_triton import _device
from ndd_triton._batch import Batch, TensorsView, stack_samples
from ndd_triton._convert import convert_torch
from ndd_triton._device import Device
from ndd_triton._dtype import DType
from ndd_triton._dtype import dtype as to_dtype
from ndd_triton._layout import check_layout
from ndd_triton._storage import BatchStorage
from ndd_triton._tensor import Tensor

_INT32 = np.iinfo(np.int32)


def python_to_numpy(data: Any, what: str) -> np.ndarray:
    """Python scalars and nested lists with DALI's inference (int -> i32, float -> f32)."""
    try:
        arr = np.asarray(data)
    except ValueError as e:
        raise ValueError(f"{what}: cannot convert a ragged nested list to a tensor ({e})") from e
    kind = arr.dtype.kind
    if kind in "iu":
        if arr.size == 0 or (arr.min() >= _INT32.min and arr.max() <= _INT32.max):
            return arr.astype(np.int32)
        return arr.astype(np.int64)
    if kind == "f":
        return arr.astype(np.float32)
    if kind == "b":
        return arr
    raise RuntimeError(f"{what}: cannot convert {type(data).__name__} {data!r:.60} to a tensor; "
                       "expected numbers, nested lists of numbers, arrays or tensors")


def _numpy_to_torch(arr: np.ndarray, what: str) -> torch.Tensor:
    if arr.dtype.kind == "c":
        raise TypeError(f"{what}: complex data ({arr.dtype}) is not supported")
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{what}: unsupported NumPy dtype {arr.dtype}")
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    if not arr.flags.writeable or not arr.flags.c_contiguous:
        arr = arr.copy(order="C")  # (np.ascontiguousarray would turn 0-D into 1-D)
    return torch.from_numpy(arr)


def _is_python_data(data: Any) -> bool:
    return isinstance(data, numbers.Number | list | tuple) and not isinstance(data, np.generic)


def _stack_list(items: list[Any] | tuple[Any, ...], what: str) -> torch.Tensor:
    parts = [to_torch(x, what=what)[0] for x in items]
    if any(p.shape != parts[0].shape for p in parts):
        raise ValueError(f"{what}: cannot stack a list of arrays with different shapes "
                         f"{[tuple(p.shape) for p in parts]}; use ndd.batch for ragged samples")
    return torch.stack(parts) if parts else torch.empty(0)


def to_torch(data: Any, dtype: Any = None, device: Any = None, copy: bool = False,
             what: str = "tensor") -> tuple[torch.Tensor, Device, str | None]:  # fmt: skip
    """Convert user data to (torch tensor, ndd Device, layout), copying only when needed."""
    layout: str | None = None
    copied = False
    from_python = False
    if isinstance(data, Tensor):
        t, dev, layout = data._torch(), data.device, data.layout
    elif isinstance(data, Batch):
        t, dev = data.torch(pad=False), data.device
        layout = "N" + data.layout if data.layout else None
    elif isinstance(data, torch.Tensor):
        t = data if data.is_contiguous() else data.contiguous()
        dev = _device.device_of_torch(t)
    elif isinstance(data, np.ndarray | np.generic):
        t, dev = _numpy_to_torch(np.asarray(data), what), Device.CPU
        copied = not np.shares_memory(t.numpy(), data) if isinstance(data, np.ndarray) else True
    elif isinstance(data, str | bytes):
        raise RuntimeError(f"{what}: cannot convert {type(data).__name__} to a tensor; encode "
                           "text as np.frombuffer(data, np.uint8)")
    elif isinstance(data, list | tuple) and data and any(
            isinstance(x, Tensor | torch.Tensor | np.ndarray) for x in data):
        t, dev, copied = _stack_list(data, what), Device.CPU, True
        dev = _device.device_of_torch(t)
    elif _is_python_data(data):
        from_python = True
        arr = python_to_numpy(data, what)
        if dtype is not None:
            target = to_dtype(dtype)
            try:
                arr = np.asarray(data, dtype=target.numpy_dtype)
            except OverflowError as e:
                raise OverflowError(f"{what}: value out of range for {target}: {e}") from e
        t, dev, copied = torch.from_numpy(arr.copy(order="C")), Device.CPU, True
    elif hasattr(data, "__cuda_array_interface__") and not hasattr(data, "__dlpack__"):
        t = torch.as_tensor(data, device="cuda")
        dev = _device.device_of_torch(t)
    elif hasattr(data, "__dlpack__"):
        t = torch.from_dlpack(data)
        dev = _device.device_of_torch(t)
    elif hasattr(data, "__array__"):
        arr = np.asarray(data)
        t, dev = _numpy_to_torch(arr, what), Device.CPU
    else:
        raise TypeError(f"{what}: cannot convert {type(data).__name__} to a tensor")
    if dtype is not None and not from_python:
        target = to_dtype(dtype)
        if t.dtype != target.torch_dtype:
            t, copied = convert_torch(t, target.torch_dtype), True
    if device is not None:
        target_dev = _device.device(device)
        assert target_dev is not None
        if target_dev != dev:
            t, dev, copied = move_torch(t, target_dev, copy=True), target_dev, True
    if copy and not copied:
        t = t.clone()
    return t, dev, layout


def move_torch(t: torch.Tensor, dev: Device, copy: bool = False) -> torch.Tensor:
    """Storage of `t` for device `dev` (a copy when the device changes or `copy`)."""
    target = dev.torch_device
    if t.device == target:
        return t.clone() if copy else t
    return t.to(target)


def move_storage(storage: BatchStorage, dev: Device) -> BatchStorage:
    """Copy a batch to another device with one packed transfer."""
    buffer, offsets = storage.packed()
    moved = move_torch(buffer, dev, copy=True)
    pairs = zip(offsets.tolist(), storage.samples, strict=True)
    samples = [moved[o:o + s.numel()].view(s.shape) for o, s in pairs]
    return BatchStorage(samples, dev, moved, offsets)


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
        t, dev, inferred = to_torch(data, dtype=dtype, device=device, copy=copy, what="tensor")
        result = Tensor._wrap(t, dev, inferred)
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
        t, dev, inner = to_torch(tensors, dtype=dtype, device=device, copy=copy, what="batch")
        if t.dim() == 0:
            raise ValueError("batch: a single array-like needs an outer (batch) dimension; got a "
                             "0-D value")
        flat = t.reshape(-1)
        size = int(np.prod(t.shape[1:], dtype=np.int64))
        offsets = np.arange(t.shape[0], dtype=np.int64) * size
        storage = BatchStorage(list(t.unbind(0)), dev, flat, offsets)
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
    converted = [to_torch(x, dtype=dtype, device=device, copy=copy, what=f"batch sample {i}")
                 for i, x in enumerate(items)]  # fmt: skip
    first_t, first_dev, first_layout = converted[0]
    for i, (t, _dev, _) in enumerate(converted):
        if t.dim() != first_t.dim():
            raise RuntimeError(f"batch: Sample must have the same sample dim as the first sample: "
                               f"sample {i} has {t.dim()} dimensions, sample 0 has "
                               f"{first_t.dim()}")
        if t.dtype != first_t.dtype:
            raise TypeError(f"batch: samples have different dtypes: sample 0 is "
                            f"{DType.from_fw_type(first_t.dtype)}, sample {i} is "
                            f"{DType.from_fw_type(t.dtype)}; pass dtype= to convert")
    samples = [t if dev == first_dev else move_torch(t, first_dev) for t, dev, _ in converted]
    storage = BatchStorage(samples, first_dev)
    return Batch._concrete(storage, DType.from_fw_type(first_t.dtype), first_layout)


def stack_batch(b: Batch, pad: bool) -> torch.Tensor:
    """Stack a batch into one torch tensor (zero-padding ragged samples when `pad`)."""
    storage = b._storage_or_raise()
    return stack_samples(storage.samples, b.dtype, storage.device) if pad else b.torch()
