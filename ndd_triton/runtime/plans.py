"""The per-call-signature plan cache of prepare (a cheap op call costs ~15 µs with a hit).

A plan keeps what prepare derived from one call signature (device, batch size, kernel,
converted arguments) so that calls differing only in shapes skip conversion and validation.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Sequence
from typing import Any, NamedTuple

from ndd_triton.core import device as _device
from ndd_triton.core.batch import Batch
from ndd_triton.core.device import Device
from ndd_triton.core.storage import BatchStorage
from ndd_triton.core.tensor import Tensor
from ndd_triton.kernels import KernelEntry
from ndd_triton.ops import limits as _limits
from ndd_triton.ops.limits import check_outputs
from ndd_triton.ops.schema import Call, InputMeta, OpSchema, OutputSpec
from ndd_triton.runtime.dispatch import (
    _uniform_value,
)
from ndd_triton.runtime.inputs import convert_arg, host_values, shapes_of, tensor_batch


class Plan:
    """What prepare derived from one call signature, reused by calls with the same signature.

    The signature is the op, the argument values (and their types), `batch_size`, `device` and
    each input's dtype, layout, device, batch size, rank and whether it views the caller's
    memory (external data is read at the call): everything argument conversion,
    validation, device resolution and kernel lookup depend on. Shapes are not part of it:
    `infer` runs for new input shapes, and on every call of ops that draw random numbers or
    read host values of their inputs there; other plans remember its result per shapes.
    """

    __slots__ = ("batch_args", "data_runs", "dev", "external", "given", "host_inputs", "in_dev",
                 "infer_memo", "is_batch", "kernel", "layouts", "n", "per_sample", "schema",
                 "uniform", "values")  # fmt: skip

    def __init__(self, call: Call, dev: Device, in_dev: Device, is_batch: bool,
                 kernel: KernelEntry, layouts: list[str | None],
                 host_inputs: tuple[int, ...] = (), external: bool = False,
                 batch_args: tuple[int, ...] = ()) -> None:  # fmt: skip
        self.dev, self.in_dev, self.is_batch, self.kernel = dev, in_dev, is_batch, kernel
        self.external = external  # an input views the caller's memory (part of the key)
        self.layouts = layouts
        self.host_inputs = host_inputs  # argument-like inputs (host values read per call)
        # per-sample arguments given as batches (another op's results): converted per call
        self.batch_args = batch_args
        self.schema = call.schema  # keys hold id(schema): a hit must be this very schema
        self.n = call.batch_size
        self.values = dict(call.values)
        self.given = frozenset(call.given)
        self.per_sample = frozenset(call.per_sample)
        # Per-sample values that are one constant broadcast (no check needed per call while
        # the call still holds that very object).
        fresh = {call.schema.args[k].name for k in batch_args}
        self.uniform = {name: call.values[name] for name in call.per_sample
                        if name not in fresh and _uniform_value(call.values[name])}  # fmt: skip
        # `infer`'s results by input shapes (`remember_infer`); None when infer draws random
        # numbers or reads host values of its inputs: it must then run on every call
        schema = call.schema
        deterministic = schema.draws is not None or (not schema.random and
                                                     schema.rng_arg is None)
        self.infer_memo: dict[tuple[Any, ...], InferResult] | None = \
            {} if deterministic and not host_inputs and not batch_args else None  # fmt: skip
        # GPU calls of an op whose shapes come from its data: their run's setup per inferred
        # outputs (`runtime/data_calls.py`)
        self.data_runs: dict[tuple[Any, ...], Any] | None = \
            {} if schema.shapes_from_data and dev.device_type == "gpu" and \
            schema.draws is None and not batch_args else None  # fmt: skip


def input_metas(plan: Plan, batches: Sequence[Any]) -> list[InputMeta | None]:
    """The `InputMeta` of a plan's call on these input batches (their dtypes and layouts are
    the plan's; their shapes are the call's)."""
    return [InputMeta(b._dtype, layout, b._shapes) if b is not None else None
            for b, layout in zip(batches, plan.layouts, strict=True)]  # fmt: skip


def plan_call(plan: Plan, inputs: Sequence[Any], arg_values: Sequence[Any],
              batches: list[Any] | None = None, metas: list[InputMeta | None] | None = None
              ) -> tuple[list[Any], list[InputMeta | None], Call]:  # fmt: skip
    """The input batches, their `InputMeta`s (made here unless given) and the `Call` (the
    plan's converted values, this call's per-sample batch arguments and host values) of a call
    that hit `plan`."""
    n = plan.n
    if batches is None or metas is None:
        batches = [tensor_batch(x, n, plan.in_dev) if type(x) is Tensor else x for x in inputs]
        metas = input_metas(plan, batches)
    for k in plan.host_inputs:  # argument-like inputs: their values are new every call
        meta = metas[k]
        assert meta is not None
        meta.values, meta.hints = host_values(inputs[k], n)
    call = Call(plan.schema, n, plan.dev.device_type, metas, dict(plan.values),  # type: ignore[arg-type]
                set(plan.per_sample), plan.given)  # fmt: skip
    for k in plan.batch_args:  # per-sample values of another op's batch: read now
        convert_arg(call, plan.schema.args[k], arg_values[k])
    return batches, metas, call


def known_call(plan: Plan, known: InferResult, metas: list[InputMeta | None]) -> Call:
    """The `Call` of a plan's call whose input shapes have a kept infer result: its values,
    per-sample names and signature, no conversion or infer run again."""
    return Call(plan.schema, plan.n, plan.dev.device_type, metas, dict(known.values),  # type: ignore[arg-type]
                set(known.per_sample), plan.given, known.signature)  # fmt: skip


class InferResult(NamedTuple):
    """`infer`'s outcome for one input-shape signature of a plan."""

    values: dict[str, Any]  # the call's values after infer (derived ones included)
    per_sample: frozenset[str]
    specs: list[Any]
    signature: int  # unique per result: equal signatures mean equal values
    generation: int  # `ndd.set_limits` generation it was checked under
    # GPU calls of this signature replayed whole, by input packing and stream
    # (`runtime/call_replay.py`)
    calls: dict[tuple[Any, ...], Any]
    draws: int = 0  # RNG draws each call reserves (`OpSchema.draws`, `runtime/draws.py`)


def shapes_key(metas: Sequence[Any]) -> tuple[Any, ...]:
    """The input shapes of a call (the part of an infer signature a plan does not fix)."""
    return tuple((m.shapes.shape, m.shapes.tobytes()) if m is not None else None for m in metas)


def remember_infer(memo: dict[tuple[Any, ...], InferResult], key: tuple[Any, ...], call: Call,
                   specs: list[Any]) -> None:  # fmt: skip
    """Keep `infer`'s derived values and output specs for calls with these input shapes (the
    call gets the memo's serial as its signature). Later calls share the arrays: values and
    shapes are read-only after infer by convention (kernels never write them; not enforced
    with NumPy's flag, which torch.from_numpy warns about)."""
    call.signature = next(_serials)
    if len(memo) >= INFER_MEMO_SHAPES:
        # (another thread may change it meanwhile: then nothing is dropped now)
        with contextlib.suppress(KeyError, RuntimeError, StopIteration):
            del memo[next(iter(memo))]  # the oldest
    draws = call.schema.draws
    memo[key] = InferResult(dict(call.values), frozenset(call.per_sample), specs,
                            call.signature, _limits.GENERATION, {},
                            draws(call) if draws is not None else 0)  # fmt: skip


class RunSetup:
    """The run's setup of one inferred output description of a `shapes_from_data` op's GPU
    calls (`Plan.data_runs`): the output specs, checked against the limits of `generation`,
    and their allocators (`BatchStorage.device_allocator`: the packing worked out once)."""

    __slots__ = ("allocators", "generation", "specs")

    def __init__(self, specs: list[OutputSpec], device: Device) -> None:
        self.specs = specs
        self.generation = _limits.GENERATION
        self.allocators = tuple(
            BatchStorage.device_allocator(spec.shapes, spec.dtype.torch_dtype, device)  # type: ignore[arg-type]
            for spec in specs)  # fmt: skip


# Output descriptions kept per plan (a few recurring batches of image sizes); the oldest goes
RUN_SETUPS = 8


def run_setup(plan: Plan, call: Call, specs: list[OutputSpec]) -> RunSetup | None:
    """`specs`' kept `RunSetup` (made now, after `check_outputs`, when they are new), or None
    when an output's shapes are unknown (checked, nothing kept). A `shapes_from_data` op's
    infer runs on every call; what follows depends only on the plan and its outputs."""
    key: list[Any] = []
    for spec in specs:
        shapes = spec.shapes
        if shapes is None:
            check_outputs(call, specs)
            return None
        key.append((spec.dtype, spec.layout, shapes.shape, shapes.tobytes()))
    runs = plan.data_runs
    assert runs is not None
    frozen = tuple(key)
    setup = runs.get(frozen)
    if setup is not None and setup.generation == _limits.GENERATION:
        return setup  # type: ignore[no-any-return]
    check_outputs(call, specs)
    if len(runs) >= RUN_SETUPS:
        with contextlib.suppress(KeyError, RuntimeError, StopIteration):
            del runs[next(iter(runs))]  # the oldest (another thread may change it meanwhile)
    setup = runs[frozen] = RunSetup(specs, plan.dev)
    return setup  # type: ignore[no-any-return]


# Input shapes remembered per plan: a few recurring batch shapes (e.g. the sizes of a dataset's
# images in turn) keep their infer results and their launch-memo signatures
INFER_MEMO_SHAPES = 8


_serials = itertools.count(1)


PLANS: dict[tuple[Any, ...], Plan] = {}
PLAN_LIMIT = 4096


def _known_shapes(b: Batch) -> Any:
    """A batch's `[N, ndim]` shapes when known without waiting (None: pending and data-
    dependent)."""
    shapes = b._shapes
    if shapes is None and b._storage is not None:
        shapes = shapes_of(b)
    return shapes


def _batch_arg_key(b: Batch) -> tuple[Any, ...] | None:
    """A batch-valued argument's part of a plan key: its metadata (None: shapes unknown)."""
    shapes, dev = _known_shapes(b), b._device
    if shapes is None or dev is None:
        return None
    return (Batch, b._dtype, b._batch_size, dev.device_type, dev.device_id, shapes.shape[1])


def plan_key(schema: OpSchema, inputs: Sequence[Any], arg_values: Sequence[Any],
              batch_size: Any, device: Any) -> tuple[Any, ...] | None:  # fmt: skip
    """The plan-cache key of a call, or None when the call cannot reuse a plan.

    Not cacheable: external-data inputs, batches or tensors of unknown rank, Tensor argument
    values and unhashable ones (lists of lists), batch argument values of unknown shapes
    (the others are keyed by their metadata and converted on every call), and an explicit
    device other than the strings "cpu", "gpu" and "cuda" (the last two resolve against the
    thread's current device, so they are keyed with that device's id). Argument-like
    (`host_values`) inputs are: their values are read again on every call.
    """
    if device is not None and not (type(device) is str and device == "cpu"):
        if type(device) is not str or device not in ("gpu", "cuda") or \
                _device.gpu_backend() is None:  # fmt: skip
            return None
        # "gpu" is the thread's current device: keyed by that device's id
        device = (device, _device.current_cuda_device())
    values = tuple(arg_values)
    types = tuple(map(type, values))
    if list in types:  # list-valued arguments (size=[224, 224]): keyed by their items
        values = tuple([(list, tuple(v)) if type(v) is list else v for v in values])
    if Batch in types:  # per-sample values from another op: keyed by what they are, read per call
        keyed = [_batch_arg_key(v) if t is Batch else v for v, t in zip(values, types,
                                                                          strict=True)]
        if any(k is None and t is Batch for k, t in zip(keyed, types, strict=True)):
            return None
        values = tuple(keyed)
    try:
        hash(values)  # (the rest of the key is hashable)
    except TypeError:
        return None
    key: list[Any] = [id(schema), batch_size, device, values, types]
    for x in inputs:
        if type(x) is Batch:
            shapes = _known_shapes(x)
            if shapes is None:  # pending with data-dependent shapes
                return None
            dev = x._device
            storage = x._storage
            key.append((x._dtype, x._layout, dev.device_type, dev.device_id, x._batch_size,
                        shapes.shape[1], storage is not None and storage.external))  # fmt: skip
        elif type(x) is Tensor:
            shape = x._shape
            if shape is None:
                return None
            dev = x._device
            key.append((Tensor, x._dtype, x._layout, dev.device_type, dev.device_id, len(shape),
                        x._external))  # fmt: skip
        elif x is None:
            key.append(None)
        else:
            return None
    return tuple(key)


