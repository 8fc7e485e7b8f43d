"""Devices: `Device`, the thread-local device stack, and real-CUDA vs emulated-GPU resolution.

This module and `_stream.py` are the only places that know whether "gpu" is a real CUDA device
or the emulated one (CPU torch storage labelled gpu, for machines without CUDA; enabled with
`NDD_TRITON_EMULATE_GPU=1`, which tests set together with `TRITON_INTERPRET=1`).
"""

from __future__ import annotations

import functools
import os
import threading
from typing import Any

import torch

EMULATE_ENV = "NDD_TRITON_EMULATE_GPU"
EMULATE_COUNT_ENV = "NDD_TRITON_EMULATE_GPU_COUNT"  # emulated devices (default 2: multi-GPU paths)
_tls = threading.local()


@functools.cache
def gpu_backend() -> str | None:
    """'emulated' when NDD_TRITON_EMULATE_GPU=1, 'cuda' when CUDA is usable, else None."""
    if os.environ.get(EMULATE_ENV, "") == "1":
        return "emulated"
    return "cuda" if torch.cuda.is_available() else None


def is_emulated() -> bool:
    """True when the gpu device is the CPU-backed emulation."""
    return gpu_backend() == "emulated"


def gpu_count() -> int:
    """Number of usable gpu devices (the emulation provides NDD_TRITON_EMULATE_GPU_COUNT, 2)."""
    backend = gpu_backend()
    if backend == "cuda":
        return torch.cuda.device_count()
    if backend == "emulated":
        return max(1, int(os.environ.get(EMULATE_COUNT_ENV, "2")))
    return 0


def require_gpu(what: str = "device='gpu'") -> None:
    """Raise a clear RuntimeError when no gpu device (real or emulated) exists."""
    if gpu_backend() is None:
        raise RuntimeError(
            f"{what}: no CUDA device is available (torch.cuda.is_available() is False). Use "
            f"device='cpu', run on a machine with an NVIDIA GPU, or set {EMULATE_ENV}=1 (and "
            "TRITON_INTERPRET=1 before importing triton) to emulate the GPU on the CPU for tests."
        )


def current_cuda_device() -> int:
    """The current CUDA ordinal (emulated: the innermost `with Device("gpu", i)`, else 0).

    Before CUDA is initialised in this process the current device is 0 (selecting another
    initialises it): asking must not initialise CUDA, so that CPU-only work never creates a
    CUDA context, nor fails in a forked child of a process that used CUDA."""
    if gpu_backend() == "cuda":
        return torch.cuda.current_device() if torch.cuda.is_initialized() else 0
    stack = getattr(_tls, "stack", None)
    for dev in reversed(stack or []):
        if dev.device_type == "gpu":
            return int(dev.device_id)
    return 0


class Device:
    """A device: `Device("cpu")`, `Device("gpu", 1)`, `Device("gpu:1")`; a context manager."""

    __slots__ = ("device_id", "device_type")
    CPU: Device

    def __init__(self, name: str, device_id: int | None = None) -> None:
        if not isinstance(name, str):
            raise TypeError(f"Device name must be a str; got {type(name).__name__}")
        dev_type, _, id_text = name.partition(":")
        if dev_type == "cuda":
            dev_type = "gpu"
        if dev_type not in ("cpu", "gpu"):
            raise ValueError(f"Invalid device type: {name!r}; expected 'cpu' or 'gpu' "
                             "('mixed' is a pipeline-mode concept; use 'gpu')")
        if id_text:
            if device_id is not None:
                raise ValueError(f"Device id given twice: in the name {name!r} and as "
                                 f"device_id={device_id}")
            try:
                device_id = int(id_text)
            except ValueError:
                raise ValueError(f"Invalid device id in {name!r}") from None
        if dev_type == "cpu":
            if device_id is not None:
                raise ValueError(f"Invalid device id: {device_id} for device type: cpu. "
                                 "Must be None")
        else:
            require_gpu(f"Device({name!r})")
            if device_id is None:
                device_id = current_cuda_device()
            if not isinstance(device_id, int) or not 0 <= device_id < gpu_count():
                raise ValueError(f"Invalid device id: {device_id} for device type: gpu; "
                                 f"{gpu_count()} device(s) available")
        self.device_type = dev_type
        self.device_id = device_id

    @staticmethod
    def _make(device_type: str, device_id: int | None) -> Device:
        dev = object.__new__(Device)
        dev.device_type = device_type
        dev.device_id = device_id
        return dev

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            try:
                other = Device(other)
            except (ValueError, RuntimeError):
                return False
        if not isinstance(other, Device):
            return False
        return (self.device_type, self.device_id) == (other.device_type, other.device_id)

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_id))

    def __repr__(self) -> str:
        if self.device_type == "cpu":
            return "Device(device_type='cpu')"
        return f"Device(device_type='gpu', device_id={self.device_id})"

    def __str__(self) -> str:
        return "cpu" if self.device_type == "cpu" else f"gpu:{self.device_id}"

    @property
    def torch_device(self) -> torch.device:
        """Where storage for this device lives (CPU memory for the emulated gpu)."""
        if self.device_type == "cpu" or is_emulated():
            return _TORCH_CPU
        known = _torch_cuda.get(self.device_id)
        if known is None:
            known = _torch_cuda[self.device_id] = torch.device("cuda", self.device_id)
        return known

    def __enter__(self) -> Device:
        stack = _stack()
        stack.append(self)
        if self.device_type == "gpu" and gpu_backend() == "cuda":
            # device 0 before CUDA's initialisation is already current: nothing to select
            # (selecting would initialise CUDA for work that may stay on the CPU)
            prev = None
            if torch.cuda.is_initialized() or self.device_id != 0:
                prev = torch.cuda.current_device()
                torch.cuda.set_device(self.device_id)
            _cuda_prev().append(prev)
        return self

    def __exit__(self, *exc: object) -> None:
        _stack().pop()
        if self.device_type == "gpu" and gpu_backend() == "cuda":
            prev = _cuda_prev().pop()
            if prev is not None:
                torch.cuda.set_device(prev)

    @staticmethod
    def current() -> Device:
        """Innermost `with Device(...)` on this thread, else the CPU."""
        stack = _stack()
        return stack[-1] if stack else Device.CPU

    @staticmethod
    def default_device_id(device_type: str) -> int | None:
        """None for 'cpu'; the current CUDA device for 'gpu'."""
        if device_type == "cpu":
            return None
        require_gpu()
        return current_cuda_device()

    @staticmethod
    def type_from_dlpack(dev_type: int) -> str:
        """DLPack device type code to 'cpu'/'gpu'."""
        if dev_type in (1, 3):  # kDLCPU, kDLCUDAHost
            return "cpu"
        if dev_type in (2, 13):  # kDLCUDA, kDLCUDAManaged
            return "gpu"
        raise ValueError(f"Unsupported DLPack device type {dev_type}")

    @staticmethod
    def from_dlpack(dl_device: tuple[int, int]) -> Device:
        """A `__dlpack_device__()` tuple to a Device."""
        kind = Device.type_from_dlpack(dl_device[0])
        return Device.CPU if kind == "cpu" else Device("gpu", dl_device[1])


Device.CPU = Device._make("cpu", None)
_TORCH_CPU = torch.device("cpu")
_torch_cuda: dict[Any, torch.device] = {}  # torch.device per CUDA ordinal (made once)


def _stack() -> list[Device]:
    stack = getattr(_tls, "stack", None)
    if stack is None:
        stack = _tls.stack = []
    return stack


def _cuda_prev() -> list[int | None]:
    prev = getattr(_tls, "cuda_prev", None)
    if prev is None:
        prev = _tls.cuda_prev = []
    return prev


def gpu_device(device_id: int | None = None) -> Device:
    """The gpu Device with this id (current device if None); raises if there is no gpu."""
    require_gpu()
    if device_id is None:
        current = Device.current()
        device_id = current.device_id if current.device_type == "gpu" else current_cuda_device()
    return Device("gpu", device_id)


def device(obj: Any, id: int | None = None) -> Device | None:
    """Convert a Device, device string or torch.device to a Device (None stays None)."""
    if obj is None:
        return None
    if isinstance(obj, Device):
        if id is not None:
            raise ValueError("device id cannot be given with a Device object")
        return obj
    if isinstance(obj, str):
        if obj == "cpu" and id is None:
            return Device.CPU
        return Device(obj, id)
    if isinstance(obj, torch.device):
        if obj.type == "cpu":
            return Device.CPU
        if obj.type == "cuda":
            return Device("gpu", obj.index if obj.index is not None else id)
    raise TypeError(f"Cannot convert {type(obj)} to Device")


def device_of_torch(t: torch.Tensor) -> Device:
    """The ndd Device of a torch tensor (CPU tensors are cpu even when emulating)."""
    if t.device.type == "cuda":
        return Device._make("gpu", t.device.index or 0)
    return Device.CPU
