"""Invocations and the executor: the only code that looks at `EvalMode`.

An `Invocation` is one op call after prepare: a run closure plus the caller's location. The
eval mode decides when `run` happens: deferred (on first read), eager (on this context's single
worker thread, in call order), sync_cpu (before the call returns), sync_full (and the stream is
synchronised). A failure is stored on the invocation and re-raised where its result is read,
with the original exception as `__cause__`; the worker itself never dies. In eager mode the
worker pipelines consecutive per-sample CPU invocations sample by sample (`_Chain`).
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from queue import SimpleQueue
from typing import Any

from ndd_triton import _profiling
from ndd_triton._eval_mode import EvalMode

_PENDING, _RUNNING, _DONE, _FAILED = 0, 1, 2, 3
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


_INTERNAL_CODE: dict[Any, bool] = {}  # code object -> defined inside ndd_triton


def _internal(code: Any) -> bool:
    internal = _INTERNAL_CODE.get(code)
    if internal is None:
        internal = code.co_filename.startswith((_PACKAGE_DIR, "<ndd op"))
        if len(_INTERNAL_CODE) > 8192:
            _INTERNAL_CODE.clear()
        _INTERNAL_CODE[code] = internal
    return internal


def user_callsite() -> tuple[str, int] | None:
    """(file, line) of the innermost frame outside ndd_triton: the user's call."""
    frame = sys._getframe(1)
    while frame is not None and _internal(frame.f_code):
        frame = frame.f_back  # type: ignore[assignment]
    return (frame.f_code.co_filename, frame.f_lineno) if frame is not None else None


class Invocation:
    """One op call between prepare and run; produces one storage per output."""

    __slots__ = ("__weakref__", "_done", "_error", "_lock", "_results", "_state", "callsite",
                 "ctx", "mode", "name", "record", "run_fn", "stage_fn", "sync_stream")  # fmt: skip

    def __init__(self, name: str, run_fn: Callable[[Invocation], list[Any]], ctx: Any,
                 callsite: tuple[str, int] | None,
                 stage_fn: Callable[[ChainOutputs], Stage | None] | None = None,
                 ) -> None:  # fmt: skip
        self.name = name
        self.run_fn = run_fn
        # The run as one pool call per sample, for pipelining with the next ops (`_Chain`)
        self.stage_fn = stage_fn
        self.ctx = ctx
        self.callsite = callsite
        self.mode = EvalMode.eager
        self._state = _PENDING
        self._results: list[Any] | None = None
        self._error: BaseException | None = None
        self._lock = threading.Lock()
        self._done: threading.Lock | None = None
        self.record: _profiling.Record | None = None
        self.sync_stream: Any = None

    def run(self) -> None:
        """Run once (later calls return at once); failures are stored, not raised."""
        with self._lock:
            if self._state != _PENDING:
                return
            self._state = _RUNNING
        start = time.perf_counter() if self.record is not None else 0.0
        results: list[Any] | None = None
        error: BaseException | None = None
        try:
            results = self.run_fn(self)
            if self.sync_stream is not None:
                self.sync_stream.synchronize()
        except BaseException as e:
            error = e
        self._complete(results, error, start)

    def _claim(self) -> bool:
        """Mark a pending invocation as running (False when it already started)."""
        with self._lock:
            if self._state != _PENDING:
                return False
            self._state = _RUNNING
            return True

    def _complete(self, results: list[Any] | None, error: BaseException | None,
                  start: float, thread: str | None = None) -> None:  # fmt: skip
        """Store the outcome of the run and wake the readers."""
        if error is None:
            self._results = results
            self._state = _DONE
        else:
            self._error = error
            self._state = _FAILED
        self.run_fn = _finished  # drop references to inputs and arguments
        self.stage_fn = None
        if self.record is not None:
            self.record.run_s = time.perf_counter() - start
            self.record.run_thread = thread or threading.current_thread().name
        done = self._done
        if done is not None:
            done.release()

    def _submit_to(self, worker: Worker) -> None:
        done = threading.Lock()
        done.acquire()
        self._done = done
        worker.submit(self)

    def wait(self) -> None:
        """Block until run has finished (running it here when it was deferred)."""
        if self._state >= _DONE:
            return
        done = self._done
        if done is None:
            self.run()
            return
        done.acquire()
        done.release()

    def storage(self, index: int = 0) -> Any:
        """Output `index`, waiting for the run; raises the run's error at the caller."""
        if self._state < _DONE:
            self.wait()
        if self._error is not None:
            raise surface_error(self)
        assert self._results is not None
        return self._results[index]

    @property
    def done(self) -> bool:
        """True when run has finished (successfully or not)."""
        return self._state >= _DONE

    @property
    def failed(self) -> bool:
        """True when run raised."""
        return self._state == _FAILED


def _finished(inv: Invocation) -> list[Any]:
    raise RuntimeError(f"{inv.name}: invocation already ran")


def surface_error(inv: Invocation) -> BaseException:
    """The exception to raise where a failed invocation's result is read."""
    err = inv._error
    assert err is not None
    if inv.mode in (EvalMode.sync_cpu, EvalMode.sync_full):
        return err
    kind = "asynchronous execution" if inv.mode is EvalMode.eager else "deferred evaluation"
    where = f" (called at {inv.callsite[0]}:{inv.callsite[1]})" if inv.callsite else ""
    message = f"An error happened during {kind} of '{inv.name}'{where}: {err}"
    try:
        wrapped = type(err)(message)
    except Exception:
        wrapped = RuntimeError(message)
    wrapped.__cause__ = err
    return wrapped


def execute(inv: Invocation, force_sync: bool = False, inline: Callable[[], bool] | None = None,
            independent: bool = False) -> None:
    """Schedule `inv` according to the current EvalMode (sync when inputs are external).

    `inline` (eager mode only) says whether the run costs less than a hop to the worker thread
    (tiny CPU work on ready inputs). Such a run happens here while the worker is idle, so call
    order is kept; or at once when `independent` (every input was computed before this call, so
    nothing queued can be needed: e.g. `random.coin_flip` while the worker resizes, whose values
    the next op's prepare reads). Its errors still surface where the result is read, as in eager.
    """
    mode = EvalMode.current()
    if force_sync and mode is EvalMode.eager:
        mode = EvalMode.sync_cpu
    inv.mode = mode
    if mode is EvalMode.eager:
        worker = inv.ctx._worker
        if inline is not None and (worker.idle or independent) and inline():
            inv.run()
        else:
            inv._submit_to(worker)
    elif mode is EvalMode.deferred:
        inv.ctx._defer(inv)
    else:
        if mode is EvalMode.sync_full:
            inv.sync_stream = inv.ctx.cuda_stream
        inv.run()
        if inv._error is not None:
            raise inv._error


_workers: weakref.WeakSet[Worker] = weakref.WeakSet()


class Worker:
    """A single thread that runs submitted invocations in order."""

    __slots__ = ("__weakref__", "_lock", "_queue", "_thread", "chained", "finished", "submitted")

    def __init__(self) -> None:
        self._queue: SimpleQueue[Any] = SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        # One writer each (the context's owner thread / the worker), so no lock is needed.
        self.submitted = 0
        self.finished = 0
        self.chained = 0  # invocations completed by pipelines (`_Chain`, from pool threads)
        _workers.add(self)

    @property
    def idle(self) -> bool:
        """True when everything submitted so far has run."""
        return self.finished + self.chained == self.submitted

    def submit(self, inv: Invocation) -> None:
        """Queue an invocation, starting the thread on first use."""
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(target=_loop, args=(self,),
                                                    name="ndd-executor", daemon=True)  # fmt: skip
                    self._thread.start()
        self.submitted += 1
        self._queue.put(inv)

    def drain(self) -> None:
        """Wait until everything submitted so far has run."""
        if self._thread is None:
            return
        marker = threading.Lock()
        marker.acquire()
        self._queue.put(marker)
        marker.acquire()

    @staticmethod
    def stop(worker: Worker, join: bool = False) -> None:
        """Ask the thread to exit after the queued work (called when the context dies)."""
        thread = worker._thread
        if thread is not None and thread.is_alive():
            worker._queue.put(None)
            if join and thread is not threading.current_thread():
                thread.join(timeout=10)


@atexit.register
def _stop_all_workers() -> None:
    # Executor threads must end before interpreter teardown: a thread that used torch and is
    # killed during finalisation aborts the process ("terminate called without an exception").
    for worker in list(_workers):
        Worker.stop(worker, join=True)


def _loop(worker: Worker) -> None:
    """Run the queue in order. Consecutive per-sample CPU invocations are pipelined (`_Chain`):
    while a chain runs, the next invocations join it if they can, and anything else waits
    (`held`) until the chain has finished, so completion order is still call order."""
    queue = worker._queue
    held: deque[Any] = deque()
    chain: _Chain | None = None
    while True:
        if chain is None and held:
            item = held.popleft()
        else:
            item = queue.get()
            if chain is not None and chain.finished():
                chain.close()
                chain = None
            if isinstance(item, _ChainEnd):
                continue
            if chain is not None or held:  # keep call order behind the chain / held work
                if chain is not None and not held and isinstance(item, Invocation) and \
                        chain.add(item):  # fmt: skip
                    continue
                held.append(item)
                if chain is not None and chain.wake_when_finished():  # no message will come
                    chain.close()
                    chain = None
                continue
        if item is None:
            return
        if isinstance(item, Invocation):
            chain = _Chain.begin(worker, item)
            if chain is None:
                item.run()
                worker.finished += 1  # (a chain counts its invocations in worker.chained)
            else:
                while held and isinstance(held[0], Invocation) and chain.add(held[0]):
                    held.popleft()
                if held and chain.wake_when_finished():  # held work waits for a message
                    chain.close()
                    chain = None
        else:
            item.release()  # a drain marker


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


class _ChainEnd:
    """Queue message: `chain` has finished (sent only when the executor holds work behind it;
    otherwise the executor notices at its next item)."""

    __slots__ = ("chain",)

    def __init__(self, chain: _Chain) -> None:
        self.chain = chain


class _Chain:
    """Consecutive invocations run as stages of one `StagedJob`: sample i of an op starts as
    soon as sample i of the ops it reads is done, so the pool does not idle between ops. Each
    invocation completes (in call order) as soon as all its samples are through; an op reading
    a failed op fails with that op's error, as it would reading it unpipelined."""

    def __init__(self, worker: Worker, ctx: Any, n: int, order: list[int] | None) -> None:
        from ndd_triton._thread_pool import StagedJob

        self._worker = worker
        self._ctx = ctx
        self._lock = threading.Lock()
        self._invs: list[Invocation] = []
        self._stages: list[Stage] = []
        self._index: dict[int, int] = {}  # id(invocation) -> stage
        self._complete: set[int] = set()
        self._finalized = 0
        self._wake = False  # the executor waits for a _ChainEnd
        self._start = time.perf_counter()
        self._job = StagedJob(ctx.thread_pool, n, self._stage_complete, order)

    @staticmethod
    def begin(worker: Worker, inv: Invocation) -> _Chain | None:
        """A chain whose first stage is `inv`, or None when `inv` cannot be a stage."""
        stage = _stage_of(inv, lambda other: None)
        if stage is None:
            return None
        chain = _Chain(worker, inv.ctx, stage.n, stage.order() if stage.order else None)
        return chain if chain._append(inv, stage) else None

    def add(self, inv: Invocation) -> bool:
        """Append `inv` as the next stage; False when it cannot join (it then runs later)."""
        if inv.ctx is not self._ctx:
            return False
        stage = _stage_of(inv, self._outputs)
        if stage is None or stage.n != self._job.n:
            return False
        return self._append(inv, stage)

    def finished(self) -> bool:
        """True when every invocation of the chain has completed."""
        with self._lock:
            return self._finalized == len(self._invs)

    def wake_when_finished(self) -> bool:
        """Ask for a `_ChainEnd` message when the chain finishes; True (no message) when it
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
        return None if stage is None else (stage, self._stages[stage].outs)

    def _append(self, inv: Invocation, stage: Stage) -> bool:
        if not inv._claim():  # it ran already (not through this queue): the loop counts it
            return False
        with self._lock:
            self._index[id(inv)] = len(self._invs)
            self._invs.append(inv)
            self._stages.append(stage)
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
            self._worker._queue.put(_ChainEnd(self))

    def _finalize(self, s: int) -> None:
        inv, stage, job = self._invs[s], self._stages[s], self._job
        error: BaseException | None = None
        try:
            failed_dep = next((d for d in stage.deps if self._invs[d].failed), None)
            if failed_dep is not None:
                error = surface_error(self._invs[failed_dep])
            elif job.errors[s]:
                error = min(job.errors[s], key=lambda pair: pair[0])[1]
        except BaseException as e:  # never leave a reader waiting on an incomplete invocation
            error = e
        stage.one = _no_sample  # its views of the inputs go with it
        stage.order = None
        inv._complete(stage.outs if error is None else None, error, self._start, "ndd-executor")


def _no_sample(i: int) -> None:
    raise RuntimeError("internal error: a completed stage ran again")


def _stage_of(inv: Invocation, outputs: ChainOutputs) -> Stage | None:
    """`inv` as a chain stage, or None (not a per-sample CPU run, or an input not ready)."""
    stage_fn = inv.stage_fn
    if stage_fn is None or inv.mode is not EvalMode.eager or inv.sync_stream is not None:
        return None
    try:
        return stage_fn(outputs)
    except Exception:  # e.g. an input that failed: the normal run reports it
        return None
