"""Whole-call replay: a GPU call whose signature repeats skips prepare and launch building.

The launch memo (`runtime/launch_memo.py`) already replays a repeated call's launches, but the
call still pays for everything around them: argument conversion lookups, `Call` and
`InputMeta` objects, the memo's key (buffer packing, signature), `GpuBatch` wrappers, output
allocation from shapes. A call that runs on the caller's thread (`run_now.run_gpu_now`: sync
modes, tiny eager calls with an idle worker) is fully described by

* its plan (op, argument values, input dtypes/layouts/devices, batch size: the plan key),
* its input shapes (the plan's remembered `infer` result, hence its output specs),
* its inputs' packing (buffer dtype and per-sample offsets) and the context's stream,

and what it launches then is the launch memo's recorded `Replay` for that signature. Once a
call has been replayed by the memo (`launch_memo.last_replay`), `remember` keeps a `CallEntry`
under the plan's infer result; `replay_call` answers later calls with the same description
straight from it: outputs allocated from precomputed recipes, the recorded launches on the new
buffers, results wrapped. The entry holds the `Replay` weakly: when the memo evicts it, the
entry is dead and the call takes the normal path (which records again).

Inputs are keyed by their buffer's dtype and offsets, or as `contiguous` when their samples lie
back to back (`BatchStorage.contiguous`: every op output, every packed batch). An eager input
still being computed by an earlier GPU call (its `OutputRef` pending) is predicted contiguous:
the replay is queued behind its producer and checks the prediction when the input is there; an
input laid out otherwise runs the normal run of the call (`_run_normally`).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

from ndd_triton.core.batch import Batch
from ndd_triton.core.device import Device
from ndd_triton.core.storage import BatchStorage
from ndd_triton.core.tensor import Tensor
from ndd_triton.ops import limits as _limits
from ndd_triton.ops.schema import OpSchema, OutputSpec
from ndd_triton.runtime import launch_memo
from ndd_triton.runtime.draws import call_rng
from ndd_triton.runtime.eval_context import EvalContext
from ndd_triton.runtime.eval_mode import EvalMode
from ndd_triton.runtime.executor import execute
from ndd_triton.runtime.gpu_run import _run_gpu, gpu_types, on_stream
from ndd_triton.runtime.inputs import tensor_batch
from ndd_triton.runtime.invocation import Invocation, user_callsite
from ndd_triton.runtime.plans import InferResult, Plan, input_metas, known_call
from ndd_triton.runtime.run_now import OutputRef, as_tensors, computed, failed_results, run_here
from ndd_triton.runtime.torch_compile import dynamo_running

# Entries per infer result (input packings x streams); the oldest goes first
_CALLS_PER_SHAPES = 4
_CONTIGUOUS = "contiguous"


class CallEntry:
    """How to replay one call description (see the module docstring)."""

    __slots__ = ("allocators", "replay", "run", "specs")

    def __init__(self, replay: Any, specs: list[OutputSpec], device: Device) -> None:
        self.replay = weakref.ref(replay)
        self.specs = specs
        # the `GpuRun` replays launch through (no state of its own: shared by threads), made
        # again when a replay runs with another context's thread pool
        self.run: Any = None
        self.allocators: tuple[Callable[[], BatchStorage], ...] = tuple(
            BatchStorage.device_allocator(spec.shapes, spec.dtype.torch_dtype, device)  # type: ignore[arg-type]
            for spec in specs)  # fmt: skip


def _packing(storages: Sequence[BatchStorage | None],
             batches: Sequence[Any] | None = None) -> tuple[Any, ...] | None:  # fmt: skip
    """The inputs' buffer dtypes and offsets (`contiguous` for the usual back-to-back layout of
    their shapes), or None: one not packed yet, or two inputs on one buffer (the launch memo
    does not record such calls either). With `batches`, a pending input (storage None) is
    taken to be an op's output: contiguous, its batch's dtype (checked when it is computed)."""
    key: list[Any] = []
    k = 0
    for s in storages:
        if s is None:
            b = batches[k] if batches is not None else None
            key.append((b._dtype.torch_dtype, _CONTIGUOUS) if b is not None else None)
        else:
            buffer, offsets = s._buffer, s._offsets
            if buffer is None or offsets is None:
                return None
            key.append((buffer.dtype, _CONTIGUOUS if s.contiguous else offsets.tobytes()))
        k += 1
    if k > 1:
        ptrs = [s._buffer.untyped_storage().data_ptr() for s in storages if s is not None]  # type: ignore[union-attr]
        if len(set(ptrs)) != len(ptrs):
            return None
    return tuple(key)


def remember(known: InferResult, ins: list[BatchStorage | None], specs: list[OutputSpec],
             device: Device, ctx: EvalContext) -> None:  # fmt: skip
    """After a call with this infer result ran on the caller's thread: keep it for
    `replay_call` when the launch memo replayed (or recorded) what it launched."""
    replay = launch_memo.last_replay()
    if replay is None or any(spec.shapes is None for spec in specs):
        return
    packing = _packing(ins)
    if packing is None:
        return
    calls, key = known.calls, (packing, id(ctx.cuda_stream))
    kept = calls.get(key)
    if kept is not None and kept.replay() is replay:
        return  # (kept already: a call that took the normal path, e.g. in deferred mode)
    if len(calls) >= _CALLS_PER_SHAPES:
        calls.clear()
    calls[key] = CallEntry(replay, specs, device)


def remembering(run: Callable[[Any], list[BatchStorage]], known: InferResult,
                batches: list[Any], specs: list[OutputSpec], device: Device,
                ctx: EvalContext) -> Callable[[Any], list[BatchStorage]]:  # fmt: skip
    """An invocation's GPU run closure that `remember`s the call after it ran (on the
    executor's thread, where its launch-memo replay was used or recorded)."""

    def run_and_remember(inv: Any) -> list[BatchStorage]:
        outs = run(inv)
        remember(known, [b._storage if b is not None else None for b in batches], specs,
                 device, ctx)  # fmt: skip
        return outs

    return run_and_remember


def replay_call(schema: OpSchema, inputs: Sequence[Any], plan: Plan) -> Any:
    """The results of a GPU call of `plan` (its plan key's) answered from its `CallEntry`, or
    None (the normal path)."""
    if plan.schema is not schema or plan.infer_memo is None or not launch_memo.ENABLED:
        return None
    n = plan.n
    batches = [tensor_batch(x, n, plan.in_dev) if type(x) is Tensor else x for x in inputs]
    shapes = []
    ins: list[BatchStorage | None] = []
    pending = False
    for b in batches:
        if b is None:
            shapes.append(None)
            ins.append(None)
            continue
        s = b._shapes
        storage = b._storage
        if s is None:
            return None
        if storage is None:
            # an earlier op's result still queued (eager mode): replayed on the executor
            # after it, if its storage is laid out as predicted
            if type(b._producer) is not OutputRef or b._device.device_type != "gpu":
                return None
            pending = True
        shapes.append((s.shape, s.tobytes()))
        ins.append(storage)
    known = plan.infer_memo.get(tuple(shapes))
    if known is None or not known.calls or known.generation != _limits.GENERATION:
        return None
    packing = _packing(ins, batches)
    ctx = EvalContext.current()
    entry = known.calls.get((packing, id(ctx.cuda_stream)))
    if entry is None:
        return None
    replay = entry.replay()
    if replay is None:  # evicted from the launch memo
        known.calls.pop((packing, id(ctx.cuda_stream)), None)
        return None
    mode = EvalMode.current()
    eager = mode is EvalMode.eager
    if mode is EvalMode.deferred or (pending and not eager):
        return None
    dev = plan.dev
    launch_memo.stats["hits"] += 1
    # a random op drawing on the device reserves its draws here, where prepare would have
    draw_at = call_rng(plan.values, schema.rng_arg).take_position(known.draws) \
        if known.draws else None  # fmt: skip
    if pending or (eager and not (ctx._worker.idle and not dynamo_running())):
        # the executor runs it after the work queued before it
        def run(inv: Invocation) -> list[BatchStorage]:
            computed = [b._storage_or_raise() if b is not None else None for b in batches]
            if pending and _packing(computed) != packing:
                return _run_normally(plan, known, batches, computed, ctx, inv, draw_at)
            return on_stream(ctx, computed, lambda _: _launch(entry, replay, computed, dev, ctx,
                                                              draw_at))  # fmt: skip

        inv = Invocation(schema.name, run, ctx, user_callsite(), None)
        results = [Batch._pending(OutputRef(inv, k), spec.dtype, spec.layout, dev, n, spec.shapes)
                   for k, spec in enumerate(entry.specs)]  # fmt: skip
        execute(inv, force_sync=plan.external)
    else:
        def launch() -> list[BatchStorage]:
            return on_stream(ctx, ins, lambda _: _launch(entry, replay, ins, dev, ctx, draw_at))

        if eager:
            # a failure keeps its error for the read, as the executor's run would (going the
            # normal path instead would take a random op's draws a second time)
            try:
                outs = launch()
            except Exception as error:
                inv = Invocation.failed_at_call(schema.name, error, ctx, user_callsite(), mode)
                return failed_results(inv, len(entry.specs), plan.is_batch)
        else:
            outs = run_here(ctx, mode, launch)  # type: ignore[assignment]  # (raises)
        done = computed(outs, entry.specs, dev, n)
        return done if plan.is_batch else as_tensors(done)
    done = results[0] if len(results) == 1 else tuple(results)
    return done if plan.is_batch else as_tensors(done)


def _run_normally(plan: Plan, known: InferResult, batches: list[Any],
                  ins: list[BatchStorage | None], ctx: EvalContext, inv: Invocation,
                  draw_at: tuple[int, int] | None) -> list[BatchStorage]:  # fmt: skip
    """The call's normal run, for an input computed with another layout than predicted: the
    `Call` prepare's fast path would have made (the plan's values, the remembered infer
    result, the draws reserved for it)."""
    call = known_call(plan, known, input_metas(plan, batches))
    call.draw_at = draw_at
    return _run_gpu(call, plan.kernel.for_call(call), ins, known.specs, plan.dev, ctx,  # type: ignore[arg-type]
                    inv.record)  # fmt: skip


def _launch(entry: CallEntry, replay: Any, ins: list[BatchStorage | None], dev: Device,
            ctx: EvalContext, draw_at: tuple[int, int] | None) -> list[BatchStorage]:  # fmt: skip
    outs = [allocate() for allocate in entry.allocators]
    run = entry.run
    if run is None or run.pool is not ctx.thread_pool:
        run = entry.run = gpu_types()[1](dev.torch_device, None, ctx.thread_pool)
    replay.replay(run, [s._buffer if s is not None else None for s in ins],
                  [s._buffer for s in outs], draw_at)  # fmt: skip
    return outs
