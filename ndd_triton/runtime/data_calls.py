"""GPU calls of ops whose output shapes come from their data: infer, then a kept run setup.

Whole-call replay (`runtime/call_replay.py`) answers a repeated GPU call from its input shapes.
An op whose `infer` reads its inputs' host values to find its output shapes
(`OpSchema.shapes_from_data`: the decoders read every image header) cannot be described so:
two batches of encoded files of the same sizes decode to images of different sizes. Its infer
runs on every call; what follows it depends only on the plan and the inferred outputs, and
`Plan.data_runs` keeps that per output description (`plans.RunSetup`: the specs, checked
against the limits, and their allocators). `data_call` is prepare's plan hit for such a call
(the plan's converted arguments, this call's host values, infer: every user error raised as
prepare raises it) followed directly by the run with the kept setup, on this thread where the
executor would run it here, else queued as an invocation: no `Prepared`, no output checks or
allocation recipe for outputs seen before, none of the generic run path's layers
(`run_gpu_now`, `run_here`, `run_gpu_call`). Outputs not seen before (a new ragged batch: every
batch of a real pipeline) pay for their setup once, as the generic path pays for the same
work on every call, and keep it for the next `plans.RUN_SETUPS` descriptions.

Deferred calls, inputs still pending and active profiling take the generic path; the
`ENABLED` switch is for tests that compare both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ndd_triton.core.batch import Batch
from ndd_triton.core.storage import BatchStorage
from ndd_triton.core.tensor import Tensor
from ndd_triton.ops.schema import OutputSpec
from ndd_triton.runtime.eval_context import EvalContext
from ndd_triton.runtime.eval_mode import EvalMode
from ndd_triton.runtime.executor import execute
from ndd_triton.runtime.gpu_run import _run_gpu
from ndd_triton.runtime.inputs import tensor_batch
from ndd_triton.runtime.invocation import Invocation, user_callsite
from ndd_triton.runtime.plans import Plan, input_metas, plan_call, run_setup
from ndd_triton.runtime.run_now import (
    OutputRef,
    as_tensors,
    computed,
    failed_results,
    is_tiny,
)
from ndd_triton.runtime.torch_compile import dynamo_running

ENABLED = True


def data_call(plan: Plan, inputs: Sequence[Any], arg_values: Sequence[Any]) -> Any:
    """The results of a GPU call of a plan with `data_runs`, or None when it takes the generic
    path (decided before anything is read: deferred mode, an input still being computed).
    Raises what prepare raises."""
    mode = EvalMode.current()
    if mode is EvalMode.deferred or not ENABLED:
        return None
    host_inputs = plan.host_inputs
    batches = [tensor_batch(x, plan.n, plan.in_dev) if type(x) is Tensor else x for x in inputs]
    for k, b in enumerate(batches):  # (host-value inputs are read, hence waited for, by infer)
        if b is not None and b._storage is None and k not in host_inputs:
            return None
    batches, metas, call = plan_call(plan, inputs, arg_values, batches,
                                     input_metas(plan, batches))  # fmt: skip
    specs = plan.schema.infer(call)
    specs = [specs] if isinstance(specs, OutputSpec) else list(specs)
    setup = run_setup(plan, call, specs)  # (checks new outputs against the limits)
    if setup is None:  # an output of unknown shapes: the kernel allocates it
        allocators = None
    else:
        specs, allocators = setup.specs, setup.allocators
    ins: list[BatchStorage | None] = [b._storage if b is not None else None for b in batches]
    ctx = EvalContext.current()
    kernel = plan.kernel.for_call(call)
    dev, n = plan.dev, call.batch_size
    eager = mode is EvalMode.eager
    if eager and not (kernel.inline and ctx._worker.idle and not dynamo_running() and
                      is_tiny(batches, metas, specs)):  # fmt: skip
        # the executor runs it, after the work queued before it
        def run(inv: Invocation) -> list[BatchStorage]:
            return _run_gpu(call, kernel, ins, specs, dev, ctx, inv.record, allocators)  # type: ignore[arg-type]

        inv = Invocation(plan.schema.name, run, ctx, user_callsite(), None)
        results = [Batch._pending(OutputRef(inv, k), spec.dtype, spec.layout, dev, n, spec.shapes)
                   for k, spec in enumerate(specs)]  # fmt: skip
        execute(inv, force_sync=plan.external)
        done = results[0] if len(results) == 1 else tuple(results)
        return done if plan.is_batch else as_tensors(done)
    try:
        outs = _run_gpu(call, kernel, ins, specs, dev, ctx, None, allocators)  # type: ignore[arg-type]
        if mode is EvalMode.sync_full and ctx.cuda_stream is not None:
            ctx.cuda_stream.synchronize()
    except Exception as error:
        if not eager:
            raise
        # kept for the read, as the executor's run would (running it again the generic way
        # would take a random op's draws a second time)
        inv = Invocation.failed_at_call(plan.schema.name, error, ctx, user_callsite(), mode)
        return failed_results(inv, len(specs), plan.is_batch)
    done = computed(outs, specs, dev, n)
    return done if plan.is_batch else as_tensors(done)

