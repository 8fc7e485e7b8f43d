"""Moving data into torch storage and between devices, below Tensor and Batch.

Foreign data (NumPy arrays, Python numbers and lists, torch tensors, DLPack and CUDA-array
producers) becomes a torch tensor here, and tensors and batch storage move between devices here.
`core.construct` builds Tensors and Batches on top of it; `Tensor.to_device`/`Batch.to_device`
use the moves. Calls go one way: construct -> transfer -> storage/device.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import torch

from ndd_triton.core import device as _device
from ndd_triton.core.convert import convert_torch
from ndd_triton.core.device import Device
from ndd_triton.core.dtype import dtype as to_dtype
from ndd_triton.core.storage import BatchStorage

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




def foreign_to_torch(data: Any, dtype: Any, what: str) -> tuple[torch.Tensor, Device, bool, bool]:
    """(tensor, device, copied, dtype applied) for data that is not an ndd Tensor/Batch.

    Python numbers and lists follow NumPy's rules for an explicit `dtype` (truncation,
    OverflowError), so the dtype is applied here for them; arrays keep their own dtype.
    """
    if isinstance(data, torch.Tensor):
        t = data if data.is_contiguous() else data.contiguous()
        return t, _device.device_of_torch(t), False, False
    if isinstance(data, np.ndarray | np.generic):
        t = _numpy_to_torch(np.asarray(data), what)
        copied = not np.shares_memory(t.numpy(), data) if isinstance(data, np.ndarray) else True
        return t, Device.CPU, copied, False
    if isinstance(data, str | bytes):
        raise RuntimeError(f"{what}: cannot convert {type(data).__name__} to a tensor; encode "
                           "text as np.frombuffer(data, np.uint8)")
    if _is_python_data(data):
        arr = python_to_numpy(data, what)
        if dtype is not None:
            target = to_dtype(dtype)
            try:
                arr = np.asarray(data, dtype=target.numpy_dtype)
            except OverflowError as e:
                raise OverflowError(f"{what}: value out of range for {target}: {e}") from e
        return torch.from_numpy(arr.copy(order="C")), Device.CPU, True, True
    if hasattr(data, "__cuda_array_interface__") and not hasattr(data, "__dlpack__"):
        t = torch.as_tensor(data, device="cuda")
        return t, _device.device_of_torch(t), False, False
    if hasattr(data, "__dlpack__"):
        t = torch.from_dlpack(data)
        return t, _device.device_of_torch(t), False, False
    if hasattr(data, "__array__"):
        return _numpy_to_torch(np.asarray(data), what), Device.CPU, False, False
    raise TypeError(f"{what}: cannot convert {type(data).__name__} to a tensor")


def conform(t: torch.Tensor, dev: Device, copied: bool, dtype: Any, device: Any,
            copy: bool) -> tuple[torch.Tensor, Device, bool]:  # fmt: skip
    """`t` converted to `dtype` (DALI's cast), moved to `device`, copied once if `copy`; the
    flag says whether the result is a copy (False: it still views the source's memory)."""
    if dtype is not None:
        target = to_dtype(dtype)
        if t.dtype != target.torch_dtype:
            t, copied = convert_torch(t, target.torch_dtype), True
    if device is not None:
        target_dev = _device.device(device)
        assert target_dev is not None
        if target_dev != dev:
            t, dev, copied = move_torch(t, target_dev, copy=True), target_dev, True
    if copy and not copied:
        t, copied = t.clone(), True
    return t, dev, copied
