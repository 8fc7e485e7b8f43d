"""Invocations and the executor: the only code that looks at `EvalMode`.

An `Invocation` is one op call after prepare: a run closure plus the caller's location. The
eval mode decides when `run` happens: deferred (on first read), eager (on this context's single
worker thread, in call order), sync_cpu (before the call returns), sync_full (and the stream is
synchronised). A failure is stored on the invocation and re-raised where its result is read,
with the original exception as `__cause__`; the worker itself never dies.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import time
import weakref
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
                 "ctx", "mode", "name", "record", "run_fn", "sync_stream")  # fmt: skip

    def __init__(self, name: str, run_fn: Callable[[Invocation], list[Any]], ctx: Any,
                 callsite: tuple[str, int] | None) -> None:  # fmt: skip
        self.name = name
        self.run_fn = run_fn
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
        try:
            results = self.run_fn(self)
            if self.sync_stream is not None:
                self.sync_stream.synchronize()
            self._results = results
            self._state = _DONE
        except BaseException as e:
            self._error = e
            self._state = _FAILED
        finally:
            self.run_fn = _finished  # drop references to inputs and arguments
            if self.record is not None:
                self.record.run_s = time.perf_counter() - start
                self.record.run_thread = threading.current_thread().name
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

    __slots__ = ("__weakref__", "_lock", "_queue", "_thread", "finished", "submitted")

    def __init__(self) -> None:
        self._queue: SimpleQueue[Any] = SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        # One writer each (the context's owner thread / the worker), so no lock is needed.
        self.submitted = 0
        self.finished = 0
        _workers.add(self)

    @property
    def idle(self) -> bool:
        """True when everything submitted so far has run."""
        return self.finished == self.submitted

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
    queue = worker._queue
    while True:
        item = queue.get()
        if item is None:
            return
        if isinstance(item, Invocation):
            item.run()
            worker.finished += 1
        else:
            item.release()  # a drain marker
