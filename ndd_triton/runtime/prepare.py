"""The prepare phase of an op call: inputs, batch size, device, arguments, output specs.

Runs on the caller's thread and raises every user error synchronously, naming the op and the
argument. It ends by handing a frozen run closure (`_dispatch.make_run`) to the executor and
returning pending Tensor/Batch results that already know their dtype, layout and shapes.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from ndd_triton.core import builders
from ndd_triton.core.batch import Batch
from ndd_triton.core.device import Device
from ndd_triton.core.errors import CallError
from ndd_triton.core.tensor import Tensor
from ndd_triton.kernels import KernelEntry, lookup
from ndd_triton.ops import limits as _limits
from ndd_triton.ops.limits import check_outputs
from ndd_triton.ops.schema import Call, InputMeta, OpSchema, OutputSpec
from ndd_triton.runtime import compiled as _compiled
from ndd_triton.runtime import profiling as _profiling
from ndd_triton.runtime.call_replay import remember, remembering, replay_call
from ndd_triton.runtime.data_calls import data_call
from ndd_triton.runtime.dispatch import make_run, make_stage
from ndd_triton.runtime.draws import take_draws
from ndd_triton.runtime.eval_context import EvalContext
from ndd_triton.runtime.eval_mode import EvalMode
from ndd_triton.runtime.executor import execute
from ndd_triton.runtime.inputs import (
    convert_args,
    input_batches,
    resolve_batch_size,
    resolve_device,
    tensor_batch,
    wrap_inputs,
)
from ndd_triton.runtime.invocation import Invocation, user_callsite
from ndd_triton.runtime.plans import (
    PLAN_LIMIT,
    PLANS,
    InferResult,
    Plan,
    RunSetup,
    input_metas,
    known_call,
    plan_call,
    plan_key,
    remember_infer,
    run_setup,
    shapes_key,
)
from ndd_triton.runtime.run_now import (
    OutputRef,
    as_tensors,
    failed_results,
    is_tiny,
    run_gpu_now,
    run_now,
)
from ndd_triton.runtime.torch_compile import dynamo_running


def call_op(schema: OpSchema, inputs: Sequence[Any], arg_values: Sequence[Any],
            batch_size: Any, device: Any) -> Any:  # fmt: skip
    """Prepare one call of `schema` and schedule its run; returns Tensor/Batch result(s).

    Errors in how the op was called (`CallError`: conversions, signature-like mistakes) raise
    here in every mode. Everything else the operator detects (argument values, layouts,
    dtypes, windows, headers, an input whose own call failed) raises here in the sync modes
    and, in eager and deferred mode, is stored on a failed invocation whose results raise it
    where they are first read (spec/core.md §2). Inside a compiled epoch the call goes to its
    session (`runtime/compiled.py`), which traces it, answers it from the program or runs it.
    """
    if _compiled.ACTIVE[0]:
        session = _compiled.current()
        if session is not None:
            return session.call(schema, inputs, arg_values, batch_size, device)
    return _call_plain(schema, inputs, arg_values, batch_size, device)


def traced_transfer(batch: Any, device: Device) -> Any:
    """`Batch.to_device` from the host to the gpu inside a compiled epoch: the `copy` op, so
    that the transfer is traced and issued ahead like the calls around it (`.gpu()` between
    a CPU decode and GPU ops). None elsewhere: the batch is copied directly."""
    session = _compiled.current() if _compiled.ACTIVE[0] else None
    if session is None or session.eager or session.iteration < 0 or \
            device.device_type != "gpu" or batch.device.device_type != "cpu":  # fmt: skip
        return None
    from ndd_triton.ops.copy import schema

    return session.call(schema, [batch], [], None, str(device))


builders.traced_transfer = traced_transfer


def _call_plain(schema: OpSchema, inputs: Sequence[Any], arg_values: Sequence[Any],
                batch_size: Any, device: Any) -> Any:  # fmt: skip
    """`call_op` without compile mode's hook."""
    try:
        return _prepare_and_execute(schema, inputs, arg_values, batch_size, device)
    except CallError:
        raise
    except Exception as error:
        mode = EvalMode.current()
        if mode is EvalMode.sync_cpu or mode is EvalMode.sync_full:
            raise
        return _failed_results(schema, error, inputs, arg_values, batch_size, mode)


def _failed_results(schema: OpSchema, error: Exception, inputs: Sequence[Any],
                    arg_values: Sequence[Any], batch_size: Any, mode: EvalMode) -> Any:  # fmt: skip
    """Results of a call that failed in prepare: each raises `error` (wrapped) when read."""
    inv = Invocation.failed_at_call(schema.name, error, EvalContext.current(), user_callsite(),
                                    mode)  # fmt: skip
    is_batch = batch_size is not None or any(type(x) is Batch for x in inputs) or \
        any(type(v) is Batch for v in arg_values)  # fmt: skip
    count = schema.num_outputs
    if callable(count):  # the count depends on the call (random_bbox_crop's optional outputs)
        count = count(inputs, dict(zip((a.name for a in schema.args), arg_values, strict=False)))
    return failed_results(inv, count, is_batch)


class Prepared:
    """A prepared call (inputs converted, arguments checked, outputs inferred), not scheduled."""

    __slots__ = ("batches", "call", "dev", "external", "is_batch", "kernel", "known", "metas",
                 "plan", "setup", "specs")  # fmt: skip

    def __init__(self, call: Call, kernel: KernelEntry, batches: list[Any],
                 metas: list[InputMeta | None], specs: list[OutputSpec], dev: Device,
                 is_batch: bool, external: bool, plan: Plan | None,
                 known: InferResult | None = None, setup: RunSetup | None = None
                 ) -> None:  # fmt: skip
        self.call, self.kernel, self.batches, self.metas = call, kernel, batches, metas
        self.specs, self.dev, self.is_batch, self.external = specs, dev, is_batch, external
        self.plan = plan
        self.known = known  # the plan's remembered infer result this call reused
        self.setup = setup  # a `shapes_from_data` op's run setup for these outputs

    def results(self, inv: Invocation) -> Any:
        """Pending Tensor/Batch results produced by `inv`."""
        n, dev = self.call.batch_size, self.dev
        results = []
        for k, spec in enumerate(self.specs):
            out = Batch._pending(OutputRef(inv, k), spec.dtype, spec.layout, dev, n, spec.shapes)
            results.append(out if self.is_batch else Tensor._pending(out, 0))
        return results[0] if len(results) == 1 else tuple(results)


def _prepare_and_execute(schema: OpSchema, inputs: Sequence[Any], arg_values: Sequence[Any],
                         batch_size: Any, device: Any) -> Any:  # fmt: skip
    start = time.perf_counter() if _profiling.ACTIVE else 0.0
    key = plan_key(schema, inputs, arg_values, batch_size, device)
    if key is not None and not _profiling.ACTIVE:
        plan = PLANS.get(key)
        if plan is not None:
            if plan.data_runs is not None and plan.schema is schema:
                done = data_call(plan, inputs, arg_values)  # shapes from the data: infer, run
            else:
                done = replay_call(schema, inputs, plan)  # a repeated GPU call, replayed whole
            if done is not None:
                return done
    prep = prepare(schema, inputs, arg_values, batch_size, device, key)
    call, kernel, batches, metas = prep.call, prep.kernel, prep.batches, prep.metas
    specs, dev, is_batch, plan, n = prep.specs, prep.dev, prep.is_batch, prep.plan, call.batch_size
    ctx = EvalContext.current()
    if plan is not None and kernel.dense and dev.device_type == "cpu" and not _profiling.ACTIVE:
        done = run_now(call, kernel, batches, metas, specs, dev, ctx, plan.uniform)
        if done is not None:
            return done if is_batch else as_tensors(done)
    if dev.device_type == "gpu" and not _profiling.ACTIVE:
        allocators = prep.setup.allocators if prep.setup is not None else None
        done = run_gpu_now(call, kernel, batches, metas, specs, dev, ctx, allocators)
        if done is not None:
            if prep.known is not None:  # kept for a whole replay of the next such call
                remember(prep.known, [b._storage if b is not None else None for b in batches],
                         specs, dev, ctx)  # fmt: skip
            return done if is_batch else as_tensors(done)
    stage = make_stage(call, kernel, batches, list(specs), dev, ctx) \
        if dev.device_type == "cpu" else None  # fmt: skip
    run = make_run(call, kernel, batches, list(specs), dev, ctx,
                   prep.setup.allocators if prep.setup is not None else None)  # fmt: skip
    if prep.known is not None and dev.device_type == "gpu":
        run = remembering(run, prep.known, batches, specs, dev, ctx)
    inv = Invocation(schema.name, run, ctx, user_callsite(), stage)
    if _profiling.ACTIVE:
        inv.record = _profiling.new_record(schema.name, str(dev), EvalMode.current().name, n)
    results = prep.results(inv)
    if inv.record is not None:
        inv.record.prepare_start = start
        inv.record.prepare_s = time.perf_counter() - start
    inline = None
    independent = False
    if kernel.inline:
        # tiny work on ready inputs runs here when the worker is idle (its hop costs more);
        # on the GPU that is the host side of a few launches, on the context's stream as the
        # worker's would be (`_run_gpu`), so only when nothing queued can run in between
        def inline() -> bool:
            return is_tiny(batches, metas, specs) and \
                (dev.device_type == "cpu" or not dynamo_running())  # fmt: skip

        if dev.device_type == "cpu":
            independent = all(b is None or b._storage is not None or
                              (type(b._producer) is OutputRef and b._producer.inv.done)
                              for b in batches)  # fmt: skip
            # whole-batch work on one thread (packed spans below the split size, batched
            # kernels)
            form = kernel.for_call(call)
            inv.beside = independent and (form.packed is not None or form.batched)
    execute(inv, force_sync=prep.external, inline=inline, independent=independent)
    return results


_NO_KEY: Any = object()


def prepare(schema: OpSchema, inputs: Sequence[Any], arg_values: Sequence[Any],
            batch_size: Any, device: Any, key: Any = _NO_KEY) -> Prepared:  # fmt: skip
    """The prepare phase of one call (raises what the call's checks and infer raise); `key`:
    its plan key when the caller computed it already."""
    if key is _NO_KEY:
        key = plan_key(schema, inputs, arg_values, batch_size, device)
    plan = PLANS.get(key) if key is not None else None
    created: Plan | None = None
    shapes: tuple[Any, ...] = ()
    if plan is not None and plan.schema is schema:
        # Fast path: only the shapes are new; conversion, checks and lookup are reused.
        dev, is_batch, kernel, external = plan.dev, plan.is_batch, plan.kernel, plan.external
        memo = plan.infer_memo
        if memo is not None:
            batches = [tensor_batch(x, plan.n, plan.in_dev) if type(x) is Tensor else x
                       for x in inputs]  # fmt: skip
            metas = input_metas(plan, batches)
            shapes = shapes_key(metas)
            known = memo.get(shapes)
            if known is not None and known.generation == _limits.GENERATION:
                # input shapes (and limits) seen before: infer's result, already checked
                # against the limits, is reused
                call = known_call(plan, known, metas)
                if known.draws:
                    take_draws(call, known.draws)
                return Prepared(call, kernel, batches, metas, known.specs, dev, is_batch,
                                external, plan, known)  # fmt: skip
            batches, metas, call = plan_call(plan, inputs, arg_values, batches, metas)
        else:
            batches, metas, call = plan_call(plan, inputs, arg_values)
    else:
        data, external = wrap_inputs(schema, inputs)
        n, is_batch = resolve_batch_size(schema, data, arg_values, batch_size)
        dev = resolve_device(schema, device, data)
        batches, metas = input_batches(schema, data, n, dev)
        call = Call(schema, n, dev.device_type, metas, {})
        convert_args(call, arg_values)
        kernel = lookup(schema, dev.device_type)
        in_dev = Device.CPU if schema.cpu_inputs else dev
        if key is not None and all(b is x or (type(x) is Tensor and x._device == in_dev)
                                   for b, x in zip(batches, inputs, strict=True)):  # fmt: skip
            if len(PLANS) >= PLAN_LIMIT:
                PLANS.clear()
            created = Plan(call, dev, in_dev, is_batch, kernel,
                           [m.layout if m is not None else None for m in metas],
                           tuple(k for k, m in enumerate(metas)
                                 if m is not None and m.values is not None),
                           external,
                           tuple(k for k, (a, v) in enumerate(zip(schema.args, arg_values,
                                                                  strict=False))
                                 if type(v) is Batch and a.per_sample))  # fmt: skip
            PLANS[key] = created
    specs = schema.infer(call)
    specs = [specs] if isinstance(specs, OutputSpec) else list(specs)
    setup = None
    if plan is not None and plan.data_runs is not None and plan.schema is schema:
        setup = run_setup(plan, call, specs)  # (checks new outputs against the limits)
        if setup is not None:
            specs = setup.specs
    else:
        check_outputs(call, specs)
    target = plan if plan is not None and plan.schema is schema else created
    if target is not None and target.infer_memo is not None:
        remember_infer(target.infer_memo, shapes if target is plan else shapes_key(metas), call,
                       specs)  # fmt: skip
    if schema.draws is not None:
        take_draws(call, schema.draws(call))
    return Prepared(call, kernel, batches, metas, specs, dev, is_batch, external, plan,
                    setup=setup)  # fmt: skip


_compiled.PLAIN_CALL.append(_call_plain)
_compiled.PREPARE.append(prepare)
