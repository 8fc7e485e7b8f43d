"""Calls run on the caller's thread without an invocation, where the executor would run them
there anyway: tiny dense CPU calls (`run_now`) and GPU calls in the sync modes or tiny eager ones
with an idle worker (`run_gpu_now`). Results hold storage computed already."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from ndd_triton.core.batch import Batch
from ndd_triton.core.device import Device
from ndd_triton.core.storage import BatchStorage
from ndd_triton.core.tensor import Tensor
from ndd_triton.kernels import KernelEntry
from ndd_triton.ops.schema import Call, InputMeta, OutputSpec
from ndd_triton.runtime.dispatch import _DENSE_MAX_BYTES, run_dense_now
from ndd_triton.runtime.eval_context import EvalContext
from ndd_triton.runtime.eval_mode import EvalMode
from ndd_triton.runtime.gpu_run import run_gpu_call
from ndd_triton.runtime.invocation import Invocation
from ndd_triton.runtime.torch_compile import dynamo_running


class OutputRef:
    """Producer handle of one output of an invocation (what a pending Batch waits on)."""

    __slots__ = ("index", "inv")

    def __init__(self, inv: Invocation, index: int) -> None:
        self.inv = inv
        self.index = index

    def storage(self) -> BatchStorage:
        """The output storage (waits; raises the run's error)."""
        return self.inv.storage(self.index)  # type: ignore[no-any-return]

    @property
    def deferred(self) -> bool:
        """True while the invocation is deferred and has not run (reading `.shape` runs it)."""
        return self.inv.deferred  # type: ignore[no-any-return]


_INLINE_MAX_BYTES = 1 << 16


def _bytes_over(shapes: Any, item: int, budget: int) -> int:
    """Bytes of samples `shapes` (`[N, ndim]`) of `item`-byte elements, or `budget + 1` once
    they exceed `budget` (per sample in Python for a few samples, one NumPy pass for more: the
    loop cost ~0.3 us a sample; a first sample over the budget alone answers without the pass,
    ~3 us less on a batch of large images)."""
    if len(shapes) <= 8:
        return sum(map(math.prod, shapes.tolist())) * item  # type: ignore[no-any-return]
    if len(shapes) and math.prod(shapes[0].tolist()) * item > budget:
        return budget + 1
    return int(shapes.prod(axis=1).sum()) * item


def is_tiny(batches: list[Any], metas: list[InputMeta | None], specs: list[OutputSpec]
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
        total += _bytes_over(meta.shapes, meta.dtype.bytes, _INLINE_MAX_BYTES - total)
        if total > _INLINE_MAX_BYTES:
            return False
    for spec in specs:
        if spec.shapes is None:
            return False
        total += _bytes_over(spec.shapes, spec.dtype.bytes, _INLINE_MAX_BYTES - total)
        if total > _INLINE_MAX_BYTES:
            return False
    return True


def run_now(call: Call, kernel: KernelEntry, batches: list[Any], metas: list[InputMeta | None],
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
    ins = computed_inputs(batches)
    if ins is None:
        return None
    try:
        outs = run_dense_now(
            call,
            kernel,
            ins,
            specs,
            dev,
            known_uniform,
            _INLINE_MAX_BYTES if mode is EvalMode.eager else _DENSE_MAX_BYTES,
        )
    except Exception:
        if mode is EvalMode.eager:
            return None
        raise
    if outs is None:
        return None
    return computed(outs, specs, dev, call.batch_size)


def computed_inputs(batches: list[Any]) -> list[BatchStorage | None] | None:
    """The inputs' storage, or None while one is pending (the normal path orders it)."""
    ins = []
    for b in batches:
        storage = b._storage if b is not None else None
        if storage is None and b is not None:
            return None
        ins.append(storage)
    return ins


def computed(outs: list[BatchStorage], specs: list[OutputSpec], dev: Device, n: int) -> Any:
    """Batch results holding storage computed already (no invocation behind them)."""
    results = []
    for storage, spec in zip(outs, specs, strict=True):
        out = Batch._pending(None, spec.dtype, spec.layout, dev, n, spec.shapes)
        out._storage = storage
        results.append(out)
    return results[0] if len(results) == 1 else tuple(results)


def run_gpu_now(call: Call, kernel: KernelEntry, batches: list[Any],
                metas: list[InputMeta | None], specs: list[OutputSpec], dev: Device,
                ctx: EvalContext, allocators: Sequence[Callable[[], BatchStorage]] | None = None
                ) -> Any:  # fmt: skip
    """Results of a GPU call launched right here, or None to take the normal path.

    Where the executor would run the call on this thread anyway (sync modes; eager with an
    idle worker and tiny work, `execute`'s inline runs), the same run without the invocation,
    its run closure, call site and result handles. Eager failures go the normal path, which
    runs the call again and keeps the error for the read, as eager mode requires.
    `allocators`: the outputs' (`plans.RunSetup`), when kept.
    """
    mode = EvalMode.current()
    eager = mode is EvalMode.eager
    if mode is EvalMode.deferred:
        return None
    if eager and not (kernel.inline and ctx._worker.idle and not dynamo_running() and
                      is_tiny(batches, metas, specs)):  # fmt: skip
        return None
    ins = computed_inputs(batches)
    if ins is None:
        return None
    outs = run_here(ctx, mode, lambda: run_gpu_call(call, kernel.for_call(call), ins, specs, dev,
                                                    ctx, allocators))  # fmt: skip
    return computed(outs, specs, dev, call.batch_size) if outs is not None else None


def run_here(ctx: EvalContext, mode: EvalMode,
             run: Callable[[], list[BatchStorage]]) -> list[BatchStorage] | None:  # fmt: skip
    """A GPU run on this thread, as the executor would have made it: sync_full waits for the
    context's stream; an eager failure gives None (the normal path runs the call again and
    keeps the error for the read), other modes raise it."""
    try:
        outs = run()
        if mode is EvalMode.sync_full and ctx.cuda_stream is not None:
            ctx.cuda_stream.synchronize()
    except Exception:
        if mode is EvalMode.eager:
            return None
        raise
    return outs


def failed_results(inv: Any, count: int, is_batch: bool) -> Any:
    """The `count` results of a failed invocation `inv`: each raises its error when read."""
    results = [Batch._failed(OutputRef(inv, k)) for k in range(count)]
    done = results[0] if count == 1 else tuple(results)
    return done if is_batch else as_tensors(done)


def as_tensors(done: Any) -> Any:
    if isinstance(done, tuple):
        return tuple(Tensor._pending(b, 0) for b in done)
    return Tensor._pending(done, 0)
