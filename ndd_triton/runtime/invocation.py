"""`Invocation`: one op call between prepare and run, and how its errors surface.

An invocation is a run closure plus the caller's location. A failure is stored on it and
re-raised where its result is read (`surface_error`), with the original as `__cause__`.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ndd_triton.runtime import profiling as _profiling
from ndd_triton.runtime.eval_mode import EvalMode

if TYPE_CHECKING:
    from ndd_triton.runtime.executor import Worker
    from ndd_triton.runtime.pipeline import ChainOutputs, Stage

_PENDING, _RUNNING, _DONE, _FAILED = 0, 1, 2, 3
# ndd_triton's own files: frames there are not the user's call site
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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

    __slots__ = ("__weakref__", "_done", "_error", "_lock", "_results", "_state", "beside",
                 "callsite", "ctx", "mode", "name", "record", "run_fn", "stage_fn",
                 "sync_stream")  # fmt: skip

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
        # eager: may run on the worker thread while a pipeline runs on the pool (its inputs
        # were computed before the call and it runs on one thread: `executor._loop`)
        self.beside = False

    @staticmethod
    def failed_at_call(name: str, error: BaseException, ctx: Any,
                       callsite: tuple[str, int] | None, mode: EvalMode) -> Invocation:  # fmt: skip
        """An invocation whose call failed in prepare (eager/deferred: the error surfaces where
        its result is read, like a failure of the run)."""
        inv = Invocation(name, _finished, ctx, callsite)
        inv.mode = mode
        inv._state = _FAILED
        inv._error = error
        return inv

    @property
    def deferred(self) -> bool:
        """True while this is a deferred call that has not run yet."""
        return self.mode is EvalMode.deferred and self._state == _PENDING

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
            self.record.run_start = start
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
    wrapped = _same_class(err, message)
    wrapped.__cause__ = err
    return wrapped


def _same_class(err: BaseException, message: str) -> BaseException:
    """`message` as an exception of err's class, or of its nearest base class that takes a
    message alone (NumPy's `_ArrayMemoryError(shape, dtype)` becomes a `MemoryError`): the
    wrapped error keeps the class callers catch (spec/core.md §2)."""
    for cls in type(err).__mro__:
        if cls is BaseException or cls is object:
            break
        try:
            wrapped = cls(message)
        except Exception:
            continue
        if isinstance(wrapped, BaseException):
            return wrapped
    return RuntimeError(message)
