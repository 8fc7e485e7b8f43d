"""`Tensor`: one sample, backed by one torch tensor (or, while pending, by an op's result).

Metadata (dtype, layout, device and usually shape) is known as soon as the op call returns;
reading the data waits for the run and re-raises its error at the reader's line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ndd_triton.core import builders
from ndd_triton.core import device as _device
from ndd_triton.core.device import Device
from ndd_triton.core.dtype import DType
from ndd_triton.core.indexing import apply_index, basic_index
from ndd_triton.core.layout import check_layout
from ndd_triton.core.operators import ArithmeticMixin
from ndd_triton.core.transfer import move_torch

if TYPE_CHECKING:
    from ndd_triton.core.batch import Batch


class Tensor(ArithmeticMixin):
    """A single sample (any ndim) on the cpu or the gpu."""

    __slots__ = ("__weakref__", "_device", "_dtype", "_external", "_index", "_layout", "_shape",
                 "_source", "_t")  # fmt: skip

    def __init__(self, data: Any = None, dtype: Any = None, device: Any = None,
                 layout: str | None = None, batch: Batch | None = None,
                 index_in_batch: int | None = None, invocation_result: Any = None,
                 copy: bool = False) -> None:  # fmt: skip
        if batch is not None and index_in_batch is not None:
            src = batch.select(index_in_batch)
            self._init_from(src)
            if layout is not None:
                self._layout = check_layout(layout, self.ndim, "Tensor")
            return
        if data is None:
            raise ValueError("Either data, expression or batch and index must be provided")
        if isinstance(data, Tensor) and not copy and dtype is None and device is None:
            self._init_from(data)
        else:
            t, dev, inferred_layout, external = builders.to_torch(data, dtype, device, copy,
                                                                  "Tensor")  # fmt: skip
            self._set(t, dev, inferred_layout)
            self._external = external
        if layout is not None:
            self._layout = check_layout(layout or None, self._t.dim() if self._t is not None
                                        else len(self.shape), "Tensor")  # fmt: skip

    def _init_from(self, other: Tensor) -> None:
        self._t = other._t
        self._source = other._source
        self._index = other._index
        self._dtype = other._dtype
        self._layout = other._layout
        self._device = other._device
        self._shape = other._shape
        self._external = other._external

    def _set(self, t: torch.Tensor, device: Device, layout: str | None) -> None:
        self._t = t
        self._source = None
        self._index = 0
        self._dtype = DType.from_fw_type(t.dtype)
        self._layout = layout
        self._device = device
        self._shape = tuple(t.shape)
        self._external = False  # True: `_t` views the caller's memory (see `core.construct`)

    @staticmethod
    def _wrap(t: torch.Tensor, device: Device, layout: str | None = None) -> Tensor:
        """Wrap a torch tensor without checks (internal fast path)."""
        obj = Tensor.__new__(Tensor)
        obj._set(t, device, layout)
        return obj

    @staticmethod
    def _pending(batch: Batch, index: int) -> Tensor:
        """Sample `index` of a (possibly pending) batch, materialised on first data access."""
        obj = Tensor.__new__(Tensor)
        obj._t = None
        obj._source = batch
        obj._index = index
        obj._dtype = batch._dtype
        obj._layout = batch._layout
        obj._device = batch._device
        shapes = batch._shapes
        obj._shape = None if shapes is None else tuple(int(v) for v in shapes[index])
        obj._external = False
        return obj

    # ---- data access ---------------------------------------------------------------------
    def _torch(self) -> torch.Tensor:
        """The torch tensor, waiting for the producing op (errors surface here)."""
        t = self._t
        if t is None:
            assert self._source is not None
            t = self._source._storage_or_raise().samples[self._index]
            self._t = t
            self._shape = tuple(t.shape)
        return t

    def _consumer_sync(self) -> None:
        if self._source is not None and self._device.device_type == "gpu":
            storage = self._source._storage_or_raise()
            if storage.event is not None:
                storage.event.make_current_stream_wait()  # type: ignore[attr-defined]

    def evaluate(self) -> Tensor:
        """Run the pending computation (no-op when concrete); returns self."""
        self._torch()
        return self

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape as a tuple (`()` for scalars); inferred shapes answer without waiting, except
        in deferred mode, where reading the shape runs the call."""
        if self._shape is None or (self._t is None and self._source is not None and
                                   self._source._must_run()):  # fmt: skip
            self._torch()
        assert self._shape is not None
        return self._shape

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    @property
    def dtype(self) -> DType:
        """Element type."""
        if self._dtype is None:
            self._torch()
        return self._dtype

    @property
    def layout(self) -> str | None:
        """Layout string, or None."""
        if self._dtype is None:
            self._torch()
        return self._layout

    @property
    def device(self) -> Device:
        """Device where the data lives."""
        if self._dtype is None:
            self._torch()
        return self._device

    @property
    def size(self) -> int:
        """Number of elements."""
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self._dtype.bytes

    @property
    def nbytes(self) -> int:
        """Total bytes."""
        return self.size * self.itemsize

    # ---- conversion ----------------------------------------------------------------------
    def cpu(self) -> Tensor:
        """Self if on the cpu, else a cpu copy."""
        return self.to_device(Device.CPU)

    def gpu(self, index: int | None = None) -> Tensor:
        """Self if already on that gpu, else a copy on gpu `index` (current device if None)."""
        return self.to_device(_device.gpu_device(index))

    def to_device(self, device: Any, force_copy: bool = False) -> Tensor:
        """Self if already on `device` (unless force_copy), else a copy there."""
        if self._dtype is None:
            self._torch()  # a failed call: raise its error
        dev = _device.device(device)
        assert dev is not None
        if dev == self._device and not force_copy:
            return self
        self._consumer_sync()
        return Tensor._wrap(move_torch(self._torch(), dev, copy=True), dev, self._layout)

    def torch(self, copy: bool = False) -> torch.Tensor:
        """The data as a torch tensor; shares memory unless `copy=True`."""
        t = self._torch()
        self._consumer_sync()
        return t.clone() if copy else t

    def item(self) -> Any:
        """The value of a one-element tensor as a Python scalar."""
        if self.size != 1:
            raise ValueError(f"Tensor has {self.size} elements, expected 1")
        return self.cpu()._torch().reshape(()).item()

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if self._device is None:  # the result of a failed call: reading it raises its error
            self._torch()
        if self._device.device_type != "cpu":
            raise TypeError("This is not a CPU tensor. Use .cpu() to copy it to the host first.")
        t = self._torch()
        arr = t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy()
        if dtype is not None:
            arr = arr.astype(dtype, copy=bool(copy))
        elif copy:
            arr = arr.copy()
        return arr

    def __dlpack__(self, stream: Any = None, **kwargs: Any) -> Any:
        t = self._torch()
        self._consumer_sync()
        if t.device.type == "cuda" and stream is not None:
            return t.__dlpack__(stream=stream)
        return t.__dlpack__()

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._torch().__dlpack_device__()  # type: ignore[no-any-return]

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        """CUDA array interface (gpu tensors only; a host pointer on the emulated gpu)."""
        if self._device.device_type != "gpu":
            raise AttributeError("This is not a GPU tensor. Use .gpu() to copy it to the GPU.")
        t = self._torch()
        self._consumer_sync()
        if t.device.type == "cuda":
            return t.__cuda_array_interface__  # type: ignore[no-any-return]
        typestr = t.numpy().__array_interface__["typestr"]
        return {"shape": tuple(t.shape), "typestr": typestr, "data": (t.data_ptr(), False),
                "version": 3, "strides": None, "stream": None}  # fmt: skip

    # ---- Python protocol -----------------------------------------------------------------
    def __getitem__(self, key: Any) -> Tensor:
        torch_key, layout = basic_index(key, self.shape, self._layout, "Tensor")
        return Tensor._wrap(apply_index(self._torch(), torch_key), self._device, layout)

    def __iter__(self) -> Any:
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d Tensor")
        return (self[i] for i in range(self.shape[0]))

    def __len__(self) -> int:
        raise TypeError("object of type 'Tensor' has no len()")

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(f"The truth value of a Tensor with {self.size} elements is "
                             "ambiguous; use .item() on a one-element tensor")
        return bool(self.item())

    __hash__ = None  # type: ignore[assignment]  # __eq__ is elementwise

    def __repr__(self) -> str:
        arr = np.asarray(self.cpu())
        text = np.array2string(arr, separator=" ").replace("\n", "\n    ")
        parts = [f"    {text}", f"    dtype={self._dtype}"]
        if self._layout:
            parts.append(f'    layout="{self._layout}"')
        parts.append(f'    device="{self._device}"')
        parts.append(f"    shape={self.shape})")
        return "Tensor(\n" + ",\n".join(parts)

    __str__ = __repr__
