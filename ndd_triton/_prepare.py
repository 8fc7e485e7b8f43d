"""The prepare phase of an op call: inputs, batch size, device, arguments, output specs.

Runs on the caller's thread and raises every user error synchronously, naming the op and the
argument. It ends by handing a frozen run closure (`_dispatch.make_run`) to the executor and
returning pending Tensor/Batch results that already know their dtype, layout and shapes.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from ndd_triton import _device, _profiling
from ndd_triton._args import constant_value, per_sample_value, validate
from ndd_triton._batch import Batch
from ndd_triton._construct import as_tensor, move_storage
from ndd_triton._device import Device
from ndd_triton._dispatch import (
    _DENSE_MAX_BYTES,
    _sample_arrays,
    _uniform_value,
    make_run,
    make_stage,
    run_dense_now,
)
from ndd_triton._eval_context import EvalContext
from ndd_triton._eval_mode import EvalMode
from ndd_triton._executor import Invocation, execute, user_callsite
from ndd_triton._layout import default_layout
from ndd_triton._storage import NUMPY_DTYPES, BatchStorage
from ndd_triton._tensor import Tensor
from ndd_triton.kernels import KernelEntry, lookup
from ndd_triton.schema import REQUIRED, Call, InputMeta, OpSchema, OutputSpec


class OutputRef:
    """Producer handle of one output of an invocation (what a pending Batch waits on)."""

    __slots__ = ("index", "inv")

    def __init__(self, inv: Invocation, index: int) -> None:
        self.inv = inv
        self.index = index

    def storage(self) -> BatchStorage:
        """The output storage (waits; raises the run's error)."""
        return self.inv.storage(self.index)  # type: ignore[no-any-return]


class _Broadcast:
    """Producer that repeats one (possibly pending) Tensor as N samples on a device."""

    __slots__ = ("device", "n", "tensor")

    def __init__(self, tensor: Tensor, n: int, device: Device) -> None:
        self.tensor, self.n, self.device = tensor, n, device

    def storage(self) -> BatchStorage:
        data = self.tensor._torch()
        storage = BatchStorage([data] * self.n, self.tensor.device)
        return storage if self.tensor.device == self.device else move_storage(storage, self.device)


class _Moved:
    """Producer that copies a (possibly pending) batch to another device on first use."""

    __slots__ = ("batch", "device")

    def __init__(self, batch: Batch, device: Device) -> None:
        self.batch, self.device = batch, device

    def storage(self) -> BatchStorage:
        return move_storage(self.batch._storage_or_raise(), self.device)


def _shapes_of(b: Batch) -> np.ndarray:
    """`[N, ndim]` shapes of a batch (kept on the batch: its shapes never change)."""
    if b._shapes is not None:
        return b._shapes
    shapes = b._storage_or_raise().shapes
    ndim = len(shapes[0]) if shapes else 0
    arr = b._shapes = np.array(shapes, dtype=np.int64).reshape(len(shapes), ndim)
    return arr


def _resolve_device(schema: OpSchema, device: Any, data: list[Any]) -> Device:
    if device is not None:
        if isinstance(device, str) and device == "mixed":
            raise ValueError(f"{schema.name}: Invalid device 'mixed'; dynamic mode uses "
                             "device='gpu' for hybrid decoding")
        if isinstance(device, str) and device.startswith(("gpu", "cuda")):
            _device.require_gpu(f"{schema.name}: device='gpu'")
        dev = _device.device(device)
        assert dev is not None
    else:
        gpu = [x.device for x in data if x is not None and
               x.device.device_type == "gpu"]  # fmt: skip
        dev = gpu[0] if gpu else Device.CPU
    if dev.device_type not in schema.devices:
        raise ValueError(f"{schema.name}: device='{dev.device_type}' is not supported; this "
                         f"operator runs on {' or '.join(schema.devices)}")
    if dev.device_type == "gpu":
        _device.require_gpu(f"{schema.name}: device='gpu'")
    return dev


def _host_values(x: Tensor | Batch, n: int) -> tuple[list[np.ndarray], dict[str, Any] | None]:
    """Per-sample host copies of an argument-like input (waits for it, like DALI's CPU args),
    and its storage's producer hints when the values are that storage's own samples."""
    if isinstance(x, Tensor):
        return [np.asarray(x.cpu())] * n, None
    host = x.cpu()
    if host.dtype.torch_dtype is not None and host.dtype.torch_dtype in NUMPY_DTYPES:
        # NumPy views straight from the storage: ~8x cheaper than a Tensor object per sample
        # (decoders read 64 encoded files per batch here, before any decoding can start)
        storage = host._storage_or_raise()
        return _sample_arrays(storage, "input"), storage.hints
    return [np.asarray(t) for t in host], None


def _tensor_batch(x: Tensor, n: int, dev: Device) -> Batch:
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
        b = Batch._pending(None, x._dtype, x._layout, dev, 1, shapes)
        b._storage = storage
        return b
    return Batch._pending(_Broadcast(x, n, dev), x._dtype, x._layout, dev, n, shapes)


def _input_layout(schema: OpSchema, k: int, layout: str | None, ndim: int) -> str | None:
    spec = schema.inputs[min(k, len(schema.inputs) - 1)]
    if spec.layouts is None:
        return layout
    if layout is None:
        layout = default_layout(ndim, spec.layouts)
        if layout is None:
            raise ValueError(f"{schema.name}: input {k} has {ndim} dimensions and no layout; "
                             f"expected one of {', '.join(spec.layouts)}")
        return layout
    if layout not in spec.layouts:
        raise ValueError(f"{schema.name}: input {k} has layout '{layout}'; expected one of "
                         f"{', '.join(spec.layouts)}")
    return layout


def _wrap_inputs(schema: OpSchema, inputs: Sequence[Any]) -> tuple[list[Any], bool]:
    """Inputs as Tensor/Batch (None for absent optional ones); True if any was external data."""
    op = schema.name
    if schema.inputs and schema.inputs[-1].variadic and inputs and \
            isinstance(inputs[0], list | tuple):  # fmt: skip
        raise ValueError(f"{op}: inputs must be passed as separate positional arguments "
                         f"(op(a, b, ...)); got a {type(inputs[0]).__name__} as input 0")
    data: list[Any] = []
    external = False
    for k, x in enumerate(inputs):
        if x is not None and not isinstance(x, Tensor | Batch):
            try:
                x = as_tensor(x)
            except (TypeError, ValueError, RuntimeError) as e:
                raise type(e)(f"{op}: input {k} cannot be converted to a tensor: {e}") from e
            external = True
        data.append(x)
    return data, external


def _batch_size(schema: OpSchema, data: list[Any], arg_values: Sequence[Any],
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
        raise TypeError(f"{op}: batch_size must be an int; got {type(batch_size).__name__}")
    if batch_size < 1:  # DALI's random generators report this as a RuntimeError
        raise (RuntimeError if schema.random else ValueError)(
            f"{op}: batch_size must be positive; got {batch_size}")
    return int(batch_size), True


def _input_batches(schema: OpSchema, data: list[Any], n: int, dev: Device
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
            b = _tensor_batch(x, n, in_dev)
        elif x.device != in_dev:
            b = Batch._pending(_Moved(x, in_dev), x.dtype, x.layout, in_dev, x.batch_size,
                               _shapes_of(x))  # fmt: skip
        else:
            b = x
        shapes = _shapes_of(b)
        layout = _input_layout(schema, k, b.layout, shapes.shape[1])
        spec = schema.inputs[min(k, len(schema.inputs) - 1)] if schema.inputs else None
        if spec is not None and spec.dtypes is not None and b.dtype not in spec.dtypes:
            raise TypeError(f"{op}: input {k} has dtype {b.dtype}; expected one of "
                            f"{', '.join(str(d) for d in spec.dtypes)}")
        batches.append(b)
        host, hints = _host_values(x, n) if spec is not None and spec.host_values else \
            (None, None)  # fmt: skip
        metas.append(InputMeta(b.dtype, layout, shapes, host, hints))
    return batches, metas


def _convert_args(call: Call, arg_values: Sequence[Any]) -> None:
    """Convert and validate every argument into `call.values` (defaults included)."""
    op = call.schema.name
    for arg, value in zip(call.schema.args, arg_values, strict=False):
        if value is None:
            value = arg.default
            if value is None or value is REQUIRED:
                call.values[arg.name] = None
                continue
        else:
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
_INLINE_MAX_BYTES = 1 << 16


def _is_tiny(batches: list[Any], metas: list[InputMeta | None], specs: list[OutputSpec]
             ) -> bool:  # fmt: skip
    """Inputs already computed and at most _INLINE_MAX_BYTES read and written."""
    total = 0
    for b, meta in zip(batches, metas, strict=True):
        if b is None or meta is None:
            continue
        if b._storage is None:
            producer = b._producer
            if type(producer) is not OutputRef or not producer.inv.done:
                return False
        total += sum(map(math.prod, meta.shapes.tolist())) * meta.dtype.bytes
    for spec in specs:
        if spec.shapes is None:
            return False
        total += sum(map(math.prod, spec.shapes.tolist())) * spec.dtype.bytes
    return total <= _INLINE_MAX_BYTES


def _run_now(call: Call, kernel: KernelEntry, batches: list[Any], metas: list[InputMeta | None],
             specs: list[OutputSpec], dev: Device, ctx: EvalContext,
             known_uniform: dict[str, Any]) -> Any:  # fmt: skip
    """Results of a tiny dense CPU call run on the spot, or None to take the normal path.

    Applies in sync_cpu, and in eager when the worker is idle and the work is tiny (where the
    executor would run it inline anyway). Eager failures go the normal path, which runs the
    (pure) kernel again and keeps the error for the read, as eager mode requires.
    """
    mode = EvalMode.current()
    if mode is EvalMode.eager:
        if not ctx._worker.idle:
            return None
    elif mode is not EvalMode.sync_cpu and (mode is not EvalMode.sync_full or
                                            ctx.cuda_stream is not None):  # fmt: skip
        return None  # (sync_full with a CUDA stream: the normal path synchronises it)
    ins = []
    for b in batches:
        if b is None:
            ins.append(None)
            continue
        storage = b._storage
        if storage is None:
            return None
        ins.append(storage)
    try:
        outs = run_dense_now(call, kernel, ins, specs, dev, known_uniform,
                             _INLINE_MAX_BYTES if mode is EvalMode.eager else _DENSE_MAX_BYTES)
    except Exception:
        if mode is EvalMode.eager:
            return None
        raise
    if outs is None:
        return None
    results = []
    for storage, spec in zip(outs, specs, strict=True):
        out = Batch._pending(None, spec.dtype, spec.layout, dev, call.batch_size, spec.shapes)
        out._storage = storage
        results.append(out)
    return results[0] if len(results) == 1 else tuple(results)


def _as_tensors(done: Any) -> Any:
    if isinstance(done, tuple):
        return tuple(Tensor._pending(b, 0) for b in done)
    return Tensor._pending(done, 0)


class _Plan:
    """What prepare derived from one call signature, reused by calls with the same signature.

    The signature is the op, the argument values (and their types), `batch_size`, `device` and
    each input's dtype, layout, device, batch size and rank: everything argument conversion,
    validation, device resolution and kernel lookup depend on. Shapes are not part of it, so
    `infer` still runs on every call (random ops draw their parameters there).
    """

    __slots__ = ("dev", "given", "host_inputs", "in_dev", "is_batch", "kernel", "layouts", "n",
                 "per_sample", "schema", "uniform", "values")  # fmt: skip

    def __init__(self, call: Call, dev: Device, in_dev: Device, is_batch: bool,
                 kernel: KernelEntry, layouts: list[str | None],
                 host_inputs: tuple[int, ...] = ()) -> None:  # fmt: skip
        self.dev, self.in_dev, self.is_batch, self.kernel = dev, in_dev, is_batch, kernel
        self.layouts = layouts
        self.host_inputs = host_inputs  # argument-like inputs (host values read per call)
        self.schema = call.schema  # keys hold id(schema): a hit must be this very schema
        self.n = call.batch_size
        self.values = dict(call.values)
        self.given = frozenset(call.given)
        self.per_sample = frozenset(call.per_sample)
        # Per-sample values that are one constant broadcast (no check needed per call while
        # the call still holds that very object).
        self.uniform = {name: call.values[name] for name in call.per_sample
                        if _uniform_value(call.values[name])}  # fmt: skip


_PLANS: dict[tuple[Any, ...], _Plan] = {}
_PLAN_LIMIT = 4096


def _plan_key(schema: OpSchema, inputs: Sequence[Any], arg_values: Sequence[Any],
              batch_size: Any, device: Any) -> tuple[Any, ...] | None:  # fmt: skip
    """The plan-cache key of a call, or None when the call cannot reuse a plan.

    Not cacheable: external-data inputs, batches or tensors of unknown rank, Tensor/Batch or
    list argument values (unhashable), and an explicit device other than cpu (a "gpu" string
    resolves against the thread's current device). Argument-like (`host_values`) inputs are:
    their values are read again on every call.
    """
    if device is not None and not (type(device) is str and device == "cpu"):
        return None
    values = tuple(arg_values)
    key: list[Any] = [id(schema), batch_size, device, values, tuple(map(type, values))]
    for x in inputs:
        if type(x) is Batch:
            shapes = x._shapes
            if shapes is None:
                if x._storage is None:  # pending with data-dependent shapes
                    return None
                shapes = _shapes_of(x)
            dev = x._device
            key.append((x._dtype, x._layout, dev.device_type, dev.device_id, x._batch_size,
                        shapes.shape[1]))  # fmt: skip
        elif type(x) is Tensor:
            shape = x._shape
            if shape is None:
                return None
            dev = x._device
            key.append((Tensor, x._dtype, x._layout, dev.device_type, dev.device_id, len(shape)))
        elif x is None:
            key.append(None)
        else:
            return None
    out = tuple(key)
    try:
        hash(out)
    except TypeError:  # list-valued arguments (size=[224, 224]): key them by their items
        try:
            key[3] = tuple((list, tuple(v)) if type(v) is list else v for v in values)
            out = tuple(key)
            hash(out)
        except TypeError:
            return None
    return out


def call_op(schema: OpSchema, inputs: Sequence[Any], arg_values: Sequence[Any],
            batch_size: Any, device: Any) -> Any:  # fmt: skip
    """Prepare one call of `schema` and schedule its run; returns Tensor/Batch result(s)."""
    start = time.perf_counter() if _profiling.ACTIVE else 0.0
    key = _plan_key(schema, inputs, arg_values, batch_size, device)
    plan = _PLANS.get(key) if key is not None else None
    if plan is not None and plan.schema is schema:
        # Fast path: only the shapes are new; conversion, checks and lookup are reused.
        n, dev, is_batch, kernel, external = plan.n, plan.dev, plan.is_batch, plan.kernel, False
        batches = [_tensor_batch(x, n, plan.in_dev) if type(x) is Tensor else x for x in inputs]
        metas = [InputMeta(b._dtype, layout, b._shapes) if b is not None else None
                 for b, layout in zip(batches, plan.layouts, strict=True)]  # fmt: skip
        for k in plan.host_inputs:  # argument-like inputs: their values are new every call
            meta = metas[k]
            assert meta is not None
            meta.values, meta.hints = _host_values(inputs[k], n)
        call = Call(schema, n, dev.device_type, metas, dict(plan.values), set(plan.per_sample),
                    plan.given)  # type: ignore[arg-type]  # read-only after conversion
    else:
        data, external = _wrap_inputs(schema, inputs)
        n, is_batch = _batch_size(schema, data, arg_values, batch_size)
        dev = _resolve_device(schema, device, data)
        batches, metas = _input_batches(schema, data, n, dev)
        call = Call(schema, n, dev.device_type, metas, {})
        _convert_args(call, arg_values)
        kernel = lookup(schema, dev.device_type)
        in_dev = Device.CPU if schema.cpu_inputs else dev
        if key is not None and all(b is x or (type(x) is Tensor and x._device == in_dev)
                                   for b, x in zip(batches, inputs, strict=True)):  # fmt: skip
            if len(_PLANS) >= _PLAN_LIMIT:
                _PLANS.clear()
            _PLANS[key] = _Plan(call, dev, in_dev, is_batch, kernel,
                                [m.layout if m is not None else None for m in metas],
                                tuple(k for k, m in enumerate(metas)
                                      if m is not None and m.values is not None))  # fmt: skip
    specs = schema.infer(call)
    if isinstance(specs, OutputSpec):
        specs = [specs]
    ctx = EvalContext.current()
    if plan is not None and kernel.dense and dev.device_type == "cpu" and not _profiling.ACTIVE:
        done = _run_now(call, kernel, batches, metas, specs, dev, ctx, plan.uniform)
        if done is not None:
            return done if is_batch else _as_tensors(done)
    stage = make_stage(call, kernel, batches, list(specs), dev, ctx) \
        if dev.device_type == "cpu" else None  # fmt: skip
    inv = Invocation(schema.name, make_run(call, kernel, batches, list(specs), dev, ctx), ctx,
                     user_callsite(), stage)  # fmt: skip
    if _profiling.ACTIVE:
        inv.record = _profiling.new_record(schema.name, str(dev), EvalMode.current().name, n)
    results = []
    for k, spec in enumerate(specs):
        out = Batch._pending(OutputRef(inv, k), spec.dtype, spec.layout, dev, n, spec.shapes)
        results.append(out if is_batch else Tensor._pending(out, 0))
    if inv.record is not None:
        inv.record.prepare_s = time.perf_counter() - start
    inline = None
    independent = False
    if dev.device_type == "cpu" and kernel.inline:
        def inline() -> bool:
            return _is_tiny(batches, metas, specs)

        independent = all(b is None or b._storage is not None for b in batches)
    execute(inv, force_sync=external, inline=inline, independent=independent)
    return results[0] if len(results) == 1 else tuple(results)
