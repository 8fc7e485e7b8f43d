"""Prepare, part one: a call's inputs become batches on one device, with a batch size.

Normalises what the user passed (Tensors, Batches, external data, per-sample argument values)
into `Batch`es on the op's device plus `InputMeta`s for inference, resolves the device and the
batch size, and converts the argument values (`ops.args`). Every user error is raised here,
naming the op and the input or argument.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ndd_triton.core import device as _device
from ndd_triton.core.batch import Batch
from ndd_triton.core.construct import as_tensor, move_storage
from ndd_triton.core.device import Device
from ndd_triton.core.errors import CallRuntimeError, CallTypeError, CallValueError, call_error
from ndd_triton.core.host_views import sample_arrays
from ndd_triton.core.layout import default_layout
from ndd_triton.core.storage import NUMPY_DTYPES, BatchStorage
from ndd_triton.core.tensor import Tensor
from ndd_triton.ops.args import constant_value, per_sample_value, validate
from ndd_triton.ops.schema import REQUIRED, Arg, Call, InputMeta, OpSchema


class Broadcast:
    """Producer that repeats one (possibly pending) Tensor as N samples on a device."""

    __slots__ = ("device", "n", "tensor")

    def __init__(self, tensor: Tensor, n: int, device: Device) -> None:
        self.tensor, self.n, self.device = tensor, n, device

    def storage(self) -> BatchStorage:
        data = self.tensor._torch()
        storage = BatchStorage([data] * self.n, self.tensor.device)
        return storage if self.tensor.device == self.device else move_storage(storage, self.device)


class Moved:
    """Producer that copies a (possibly pending) batch to another device on first use."""

    __slots__ = ("batch", "device")

    def __init__(self, batch: Batch, device: Device) -> None:
        self.batch, self.device = batch, device

    def storage(self) -> BatchStorage:
        return move_storage(self.batch._storage_or_raise(), self.device)


def shapes_of(b: Batch) -> np.ndarray:
    """`[N, ndim]` shapes of a batch (kept on the batch: its shapes never change)."""
    if b._shapes is not None:
        return b._shapes
    shapes = b._storage_or_raise().shapes
    ndim = len(shapes[0]) if shapes else 0
    arr = b._shapes = np.array(shapes, dtype=np.int64).reshape(len(shapes), ndim)
    return arr


def _require_gpu(what: str) -> None:
    try:
        _device.require_gpu(what)
    except RuntimeError as e:
        raise CallRuntimeError(str(e)) from None


def resolve_device(schema: OpSchema, device: Any, data: list[Any]) -> Device:
    if device is not None:
        if isinstance(device, str) and device == "mixed":
            raise CallValueError(f"{schema.name}: Invalid device 'mixed'; dynamic mode uses "
                             "device='gpu' for hybrid decoding")
        if isinstance(device, str) and device.startswith(("gpu", "cuda")):
            _require_gpu(f"{schema.name}: device='gpu'")
        dev = _device.device(device)
        assert dev is not None
    else:
        gpu = [x.device for x in data if x is not None and
               x.device.device_type == "gpu"]  # fmt: skip
        dev = gpu[0] if gpu else Device.CPU
    if dev.device_type not in schema.devices:
        raise CallValueError(f"{schema.name}: device='{dev.device_type}' is not supported; "
                             f"this operator runs on {' or '.join(schema.devices)}")
    if dev.device_type == "gpu":
        _require_gpu(f"{schema.name}: device='gpu'")
    return dev


def host_values(x: Tensor | Batch, n: int) -> tuple[list[np.ndarray], dict[str, Any] | None]:
    """Per-sample host copies of an argument-like input (waits for it, like DALI's CPU args),
    and its storage's producer hints when the values are that storage's own samples."""
    if isinstance(x, Tensor):
        return [np.asarray(x.cpu())] * n, None
    dev = x._device
    # (a host batch is its own host copy: `cpu()` would compare devices twice to say so)
    host = x if dev is not None and dev.device_type == "cpu" and x._dtype is not None else \
        x.cpu()  # fmt: skip
    torch_dtype = host.dtype.torch_dtype
    if torch_dtype is not None and torch_dtype in NUMPY_DTYPES:
        # NumPy views straight from the storage: ~8x cheaper than a Tensor object per sample
        # (decoders read 64 encoded files per batch here, before any decoding can start)
        storage = host._storage_or_raise()
        return sample_arrays(storage, "input"), storage.hints
    return [np.asarray(t) for t in host], None


def tensor_batch(x: Tensor, n: int, dev: Device) -> Batch:
    """A Tensor input as a batch of `n` on `dev`: a concrete one-sample view of its data when
    they are ready there (no copy), else a pending broadcast (waits, copies, moves on use)."""
    shape = x.shape
    shapes = np.array([shape] * n, dtype=np.int64).reshape(n, len(shape))
    t = x._t
    if t is None and x._source is not None and x._source._storage is not None:
        t = x._torch()
    if n == 1 and t is not None and x._device == dev:
        storage = BatchStorage([t], dev)
        if dev.device_type == "cpu" and t.is_contiguous() and t.dtype in NUMPY_DTYPES:
            storage._dense_np = t.numpy()[None]  # the dense path's view, made once here
        elif dev.device_type != "cpu" and t.is_contiguous():  # packed as it is (no copy)
            storage._buffer, storage._offsets = t.view(-1), np.zeros(1, np.int64)
            storage.contiguous = True
        b = Batch._pending(None, x._dtype, x._layout, dev, 1, shapes)
        b._storage = storage
        return b
    return Batch._pending(Broadcast(x, n, dev), x._dtype, x._layout, dev, n, shapes)


def input_layout(schema: OpSchema, k: int, layout: str | None, ndim: int) -> str | None:
    spec = schema.inputs[min(k, len(schema.inputs) - 1)]
    if spec.layouts is None:
        return layout
    if layout is None:
        layout = default_layout(ndim, spec.layouts)
        if layout is None:
            raise CallValueError(f"{schema.name}: input {k} has {ndim} dimensions and no layout; "
                             f"expected one of {', '.join(spec.layouts)}")
        return layout
    if layout not in spec.layouts:
        raise ValueError(f"{schema.name}: input {k} has layout '{layout}'; expected one of "
                         f"{', '.join(spec.layouts)}")
    return layout


def _warn_channel_first(schema: OpSchema, k: int, shape: np.ndarray, layout: str) -> None:
    """Warn when a layout-less input read as channel-last looks channel-first: DALI's rule
    (no layout: HWC for 3-D images) reads a torch-style (3, 64, 64) tensor as 3 rows of 64
    pixels with 64 channels, a silent garbage result (docs/reliability.md)."""
    if shape.size < 3 or shape[0] > 4 or shape[-1] <= 4 * max(int(shape[0]), 4):
        return
    first = "C" + layout[:-1]
    hint = f"layout='{first}'" if schema.inputs[0].layouts is None or first in \
        schema.inputs[0].layouts else "a channel-last (HWC) tensor"  # fmt: skip
    warnings.warn(f"{schema.name}: input {k} has no layout; its shape {tuple(shape.tolist())} is "
                  f"read as {layout} ({int(shape[-1])} channels) but looks channel-first; pass "
                  f"{hint} if it is", UserWarning, stacklevel=6)  # fmt: skip


def wrap_inputs(schema: OpSchema, inputs: Sequence[Any]) -> tuple[list[Any], bool]:
    """Inputs as Tensor/Batch (None for absent optional ones); True if any was external data."""
    op = schema.name
    if schema.inputs and schema.inputs[-1].variadic and inputs and \
            isinstance(inputs[0], list | tuple):  # fmt: skip
        raise CallValueError(f"{op}: inputs must be passed as separate positional arguments "
                         f"(op(a, b, ...)); got a {type(inputs[0]).__name__} as input 0")
    data: list[Any] = []
    external = False
    for k, x in enumerate(inputs):
        if x is None:
            spec = schema.inputs[min(k, len(schema.inputs) - 1)] if schema.inputs else None
            if spec is not None and not spec.optional:
                raise CallTypeError(f"{op}: input {k} ('{spec.name}') is required; got None")
        if type(x) is Tensor:
            external = external or x._external
        elif type(x) is Batch:
            external = external or (x._storage is not None and x._storage.external)
        elif x is not None and not isinstance(x, Tensor | Batch):
            try:
                x = as_tensor(x)
            except (TypeError, ValueError, RuntimeError) as e:
                raise call_error(type(e), f"{op}: input {k} cannot be converted to a tensor: "
                                 f"{e}") from e
            external = True
        data.append(x)
    return data, external


def resolve_batch_size(schema: OpSchema, data: list[Any], arg_values: Sequence[Any],
                batch_size: Any) -> tuple[int, bool]:  # fmt: skip
    """(N, result is a Batch): from Batch inputs/arguments, else `batch_size=`, else 1."""
    op = schema.name
    sizes = [(f"input {k}", x.batch_size) for k, x in enumerate(data) if isinstance(x, Batch)]
    sizes += [(f"argument '{arg.name}'", value.batch_size)
              for arg, value in zip(schema.args, arg_values, strict=True)
              if isinstance(value, Batch)]
    if sizes:
        n = sizes[0][1]
        for what, size in sizes[1:]:
            if size != n:
                raise ValueError(f"{op}: Inconsistent batch size: {size} != {n} ({what} vs "
                                 f"{sizes[0][0]})")
        return n, True
    if batch_size is None:
        return 1, False
    if isinstance(batch_size, bool) or not isinstance(batch_size, int | np.integer):
        raise CallTypeError(f"{op}: batch_size must be an int; got {type(batch_size).__name__}")
    if batch_size < 1:  # DALI's random generators report this as a RuntimeError
        raise (RuntimeError if schema.random else ValueError)(
            f"{op}: batch_size must be positive; got {batch_size}")
    return int(batch_size), True


def input_batches(schema: OpSchema, data: list[Any], n: int, dev: Device
                   ) -> tuple[list[Batch | None], list[InputMeta | None]]:  # fmt: skip
    """Every input as a batch of N on the op's device, plus what infer may know of it."""
    op = schema.name
    batches: list[Batch | None] = []
    metas: list[InputMeta | None] = []
    for k, x in enumerate(data):
        if x is None:
            batches.append(None)
            metas.append(None)
            continue
        # cpu_inputs ops (decoders, file reading) take host data whatever device they run on.
        in_dev = Device.CPU if schema.cpu_inputs else dev
        if x.device.device_type == "gpu" and dev.device_type == "cpu" and not schema.cpu_inputs:
            raise ValueError(f"{op}: device='cpu' but input {k} is on the gpu; copy it with "
                             ".cpu() first or use device='gpu'")
        if isinstance(x, Tensor):
            b = tensor_batch(x, n, in_dev)
        elif x.device != in_dev:
            b = Batch._pending(Moved(x, in_dev), x.dtype, x.layout, in_dev, x.batch_size,
                               shapes_of(x))  # fmt: skip
        else:
            b = x
        shapes = shapes_of(b)
        layout = input_layout(schema, k, b.layout, shapes.shape[1])
        if b.layout is None and layout is not None and layout.endswith("C") and len(shapes):
            _warn_channel_first(schema, k, shapes[0], layout)
        spec = schema.inputs[min(k, len(schema.inputs) - 1)] if schema.inputs else None
        if spec is not None and spec.dtypes is not None and b.dtype not in spec.dtypes:
            raise TypeError(f"{op}: input {k} has dtype {b.dtype}; expected one of "
                            f"{', '.join(str(d) for d in spec.dtypes)}")
        batches.append(b)
        host, hints = host_values(x, n) if spec is not None and spec.host_values else \
            (None, None)  # fmt: skip
        metas.append(InputMeta(b.dtype, layout, shapes, host, hints))
    return batches, metas


def convert_args(call: Call, arg_values: Sequence[Any]) -> None:
    """Convert and validate every argument into `call.values` (defaults included)."""
    for arg, value in zip(call.schema.args, arg_values, strict=False):
        convert_arg(call, arg, value)


def convert_arg(call: Call, arg: Arg, value: Any) -> None:
    """Convert and validate one argument's value (None: its default) into `call.values`."""
    op = call.schema.name
    if value is None:
        value = arg.default
        if value is REQUIRED:  # passed as None (omitting it is Python's TypeError)
            raise CallTypeError(f"{op}: argument '{arg.name}' is required; got None")
        if value is None:
            call.values[arg.name] = None
            return
    elif arg.name not in call.given:  # (a plan's call: the frozen set of its first call)
        call.given.add(arg.name)
    if arg.per_sample:
        converted = per_sample_value(op, arg, value, call.batch_size)
        call.per_sample.add(arg.name)
    else:
        converted = constant_value(op, arg, value)
    validate(op, arg, converted)
    call.values[arg.name] = converted


# Eager mode runs CPU work this small on the caller's thread (when the worker is idle): a hop
# to the executor thread costs tens of microseconds, more than the work.
