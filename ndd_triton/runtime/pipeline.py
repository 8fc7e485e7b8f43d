"""Eager-mode pipelining: consecutive per-sample CPU invocations run as one staged pool job.

Sample i of an op may start as soon as sample i of the ops it reads is done, so the pool does
not idle between ops; invocations still complete in call order (see docs/concepts.md).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ndd_triton.runtime.eval_mode import EvalMode
from ndd_triton.runtime.invocation import Invocation, surface_error
from ndd_triton.runtime.thread_pool import StagedJob

if TYPE_CHECKING:
    from ndd_triton.runtime.executor import Worker


# What a stage function gets to find its inputs among the outputs of the chain's invocations:
# the chain stage and output storages of an invocation in the chain, or None.
ChainOutputs = Callable[[Invocation], tuple[int, list[Any]] | None]


class Stage:
    """An invocation's run as one call per sample into preallocated outputs (`stage_fn`)."""

    __slots__ = ("deps", "n", "one", "order", "outs")

    def __init__(self, n: int, one: Callable[[int], None], outs: list[Any],
                 deps: tuple[int, ...],
                 order: Callable[[], list[int] | None] | None = None) -> None:  # fmt: skip
        self.n, self.one, self.outs, self.deps = n, one, outs, deps
        # the order to start samples in, asked only of a stage that starts a chain
        self.order = order


class ChainEnd:
    """Queue message: `chain` has finished (sent only when the executor holds work behind it;
    otherwise the executor notices at its next item)."""

    __slots__ = ("chain",)

    def __init__(self, chain: Chain) -> None:
        self.chain = chain


class Chain:
    """Consecutive invocations run as stages of one `StagedJob`: sample i of an op starts as
    soon as sample i of the ops it reads is done, so the pool does not idle between ops. Each
    invocation completes (in call order) as soon as all its samples are through; an op reading
    a failed op fails with that op's error, as it would reading it unpipelined."""

    def __init__(self, worker: Worker, ctx: Any, n: int, order: list[int] | None) -> None:
        self._worker = worker
        self._ctx = ctx
        self._lock = threading.Lock()
        # a finalized stage's entries become None: a chain fed without a pause (compile mode
        # issuing ahead) would otherwise hold every batch it ever made (3.4x the CPU per image
        # of a 2-batch RN50 epoch, measured: no buffer was free for reuse)
        self._invs: list[Invocation | None] = []
        self._stages: list[Stage | None] = []
        self._failed: list[bool] = []
        self._errors: dict[int, BaseException] = {}
        self._index: dict[int, int] = {}  # id(invocation) -> stage
        self._complete: set[int] = set()
        self._finalized = 0
        self._wake = False  # the executor waits for a ChainEnd
        self._start = time.perf_counter()
        self._job = StagedJob(ctx.thread_pool, n, self._stage_complete, order)

    @staticmethod
    def begin(worker: Worker, inv: Invocation) -> Chain | None:
        """A chain whose first stage is `inv`, or None when `inv` cannot be a stage."""
        stage = stage_of(inv, lambda other: None)
        if stage is None:
            return None
        chain = Chain(worker, inv.ctx, stage.n, stage.order() if stage.order else None)
        return chain if chain._append(inv, stage) else None

    def add(self, inv: Invocation) -> bool:
        """Append `inv` as the next stage; False when it cannot join (it then runs later)."""
        if inv.ctx is not self._ctx:
            return False
        stage = stage_of(inv, self._outputs)
        if stage is None or stage.n != self._job.n:
            return False
        return self._append(inv, stage)

    def finished(self) -> bool:
        """True when every invocation of the chain has completed."""
        with self._lock:
            return self._finalized == len(self._invs)

    def wake_when_finished(self) -> bool:
        """Ask for a `ChainEnd` message when the chain finishes; True (no message) when it
        already has."""
        with self._lock:
            if self._finalized == len(self._invs):
                return True
            self._wake = True
            return False

    def close(self) -> None:
        """Drop the job and the stages (the job's callback refers back to this chain: without
        this the cycle would keep the batches' buffers from being recycled until a GC pass)."""
        self._job = None  # type: ignore[assignment]
        self._invs.clear()
        self._stages.clear()
        self._index.clear()

    def _outputs(self, other: Invocation) -> tuple[int, list[Any]] | None:
        stage = self._index.get(id(other))
        found = self._stages[stage] if stage is not None else None  # (None: finalized)
        return None if found is None else (stage, found.outs)  # type: ignore[return-value]

    def _append(self, inv: Invocation, stage: Stage) -> bool:
        if not inv._claim():  # it ran already (not through this queue): the loop counts it
            return False
        with self._lock:
            self._index[id(inv)] = len(self._invs)
            self._invs.append(inv)
            self._stages.append(stage)
            self._failed.append(False)
        self._job.add(stage.one, stage.deps)
        return True

    def _stage_complete(self, stage: int) -> None:
        # Completion in call order: a stage's dependencies complete first (their errors are
        # needed), and readers see ops finish in the order they were called.
        with self._lock:
            self._complete.add(stage)
            ready = []
            while self._finalized in self._complete:
                ready.append(self._finalized)
                self._finalized += 1
            for s in ready:
                self._finalize(s)
            # chains never overlap in time, and this lock orders their counts: one writer
            self._worker.chained += len(ready)
            wake = self._wake and self._finalized == len(self._invs)
            if wake:
                self._wake = False
        if wake:
            self._worker._queue.put(ChainEnd(self))

    def _finalize(self, s: int) -> None:
        inv, stage, job = self._invs[s], self._stages[s], self._job
        assert inv is not None
        assert stage is not None
        error: BaseException | None = None
        try:
            failed_dep = next((d for d in stage.deps if self._failed[d]), None)
            if failed_dep is not None:
                error = self._errors[failed_dep]
            elif job.errors[s]:
                error = min(job.errors[s], key=lambda pair: pair[0])[1]
        except BaseException as e:  # never leave a reader waiting on an incomplete invocation
            error = e
        stage.one = _no_sample  # its views of the inputs go with it
        stage.order = None
        inv._complete(stage.outs if error is None else None, error, self._start, "ndd-executor")
        if inv.failed:  # what a stage reading this one raises
            self._failed[s] = True
            self._errors[s] = surface_error(inv)
        self._invs[s] = self._stages[s] = None
        self._index.pop(id(inv), None)
        job.errors[s] = []


def _no_sample(i: int) -> None:
    raise RuntimeError("internal error: a completed stage ran again")


def stage_of(inv: Invocation, outputs: ChainOutputs) -> Stage | None:
    """`inv` as a chain stage, or None (not a per-sample CPU run, or an input not ready)."""
    stage_fn = inv.stage_fn
    if stage_fn is None or inv.mode is not EvalMode.eager or inv.sync_stream is not None:
        return None
    try:
        return stage_fn(outputs)
    except Exception:  # e.g. an input that failed: the normal run reports it
        return None
