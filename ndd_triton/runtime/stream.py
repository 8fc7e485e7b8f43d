"""CUDA streams: `Stream`, `stream()`, current (thread-local) and default (global) streams.

Real CUDA streams are torch streams. On the emulated gpu a Stream is an inert stand-in with the
same API, so the same code paths run in CI; without any gpu, stream creation raises.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any

import torch

from ndd_triton.core import device as _device

_emulated_handles = itertools.count(0x1000)
_default_lock = threading.Lock()
_default_streams: dict[int, Stream] = {}


class _CreateNew:
    def __repr__(self) -> str:
        return "Stream.create_new"


class Stream:
    """A CUDA stream on one device (inert on the emulated gpu)."""

    create_new: Any = _CreateNew()
    __slots__ = ("_keepalive", "_torch", "device_id", "handle")

    def __init__(self, *, stream: Any = create_new, device_id: int | None = None) -> None:
        _device.require_gpu("stream()")
        if device_id is None:
            device_id = _device.current_cuda_device()
        if not 0 <= device_id < _device.gpu_count():
            raise ValueError(f"Invalid device id: {device_id}")
        self.device_id = device_id
        self._keepalive = None
        self._torch: Any = None
        if _device.is_emulated():
            new = stream is Stream.create_new
            self.handle = next(_emulated_handles) if new else _handle(stream)
            self._keepalive = None if stream is Stream.create_new else stream
            return
        if stream is Stream.create_new:
            self._torch = torch.cuda.Stream(device=device_id)
        elif isinstance(stream, torch.cuda.Stream):
            self._torch = stream
        else:
            self._keepalive = stream
            self._torch = torch.cuda.ExternalStream(_handle(stream), device=device_id)
        self.handle = int(self._torch.cuda_stream)

    @property
    def torch_stream(self) -> Any:
        """The torch.cuda.Stream (None on the emulated gpu)."""
        return self._torch

    def synchronize(self) -> None:
        """Wait until all work queued on the stream has finished."""
        if self._torch is not None:
            self._torch.synchronize()

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, self.handle)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and (self.handle, self.device_id) == (other.handle,
                                                                               other.device_id)

    def __hash__(self) -> int:
        return hash((self.handle, self.device_id))

    def __repr__(self) -> str:
        return f"Stream(handle={self.handle:#x}, device_id={self.device_id})"


def _handle(obj: Any) -> int:
    if isinstance(obj, int):
        return obj
    if hasattr(obj, "__cuda_stream__"):
        value = obj.__cuda_stream__()
        return int(value[1] if isinstance(value, tuple) else value)
    if hasattr(obj, "cuda_stream"):
        return int(obj.cuda_stream)
    raise TypeError(f"Cannot use {type(obj).__name__} as a CUDA stream; expected a torch stream, "
                    "an object with __cuda_stream__, or an integer handle")


def stream(*, stream: Any = Stream.create_new, device_id: int | None = None) -> Stream | None:
    """Wrap a stream-like object (torch stream, `__cuda_stream__`, handle) or create a new one."""
    if stream is None:
        return None
    if isinstance(stream, Stream):
        if device_id is not None and device_id != stream.device_id:
            raise ValueError(f"Stream is on device {stream.device_id}, not {device_id}")
        return stream
    return Stream(stream=stream, device_id=device_id)


def get_default_stream(device_id: int | None = None) -> Stream | None:
    """The process-wide default stream of a device (None without a gpu or when unset)."""
    if _device.gpu_backend() is None:
        return None
    with _default_lock:
        return _default_streams.get(device_id if device_id is not None
                                    else _device.current_cuda_device())  # fmt: skip


def set_default_stream(cuda_stream: Any, /, device_id: int | None = None) -> None:
    """Set (or clear with None) the process-wide default stream of a device."""
    _device.require_gpu("set_default_stream")
    wrapped = stream(stream=cuda_stream, device_id=device_id)
    dev = device_id if device_id is not None else _device.current_cuda_device()
    with _default_lock:
        if wrapped is None:
            _default_streams.pop(dev, None)
        else:
            _default_streams[dev] = wrapped


class Event:
    """A completion marker on a stream; inert on the emulated gpu and on the CPU."""

    __slots__ = ("_event", "_on")

    def __init__(self, on: Stream | None) -> None:
        self._event = None
        self._on = None  # the torch stream it was recorded on
        if on is not None and on.torch_stream is not None:
            self._on = on.torch_stream
            self._event = torch.cuda.Event()
            self._event.record(self._on)

    def make_current_stream_wait(self) -> None:
        """Make torch's current stream wait for this event (no host sync)."""
        if self._event is not None:
            torch.cuda.current_stream().wait_event(self._event)

    def wait_stream(self, s: Any) -> None:
        """Make torch stream `s` wait for this event (nothing to do on the stream it was
        recorded on: work queued there later runs after it anyway)."""
        if self._event is not None and s is not None and s is not self._on:
            s.wait_event(self._event)

    def synchronize(self) -> None:
        """Block the host until the event completes."""
        if self._event is not None:
            self._event.synchronize()
