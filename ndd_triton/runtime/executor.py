"""The executor: the only code that looks at `EvalMode` to decide when an invocation runs.

The eval mode decides when `run` happens: deferred (on first read), eager (on this context's
single worker thread, in call order), sync_cpu (before the call returns), sync_full (and the
stream is synchronised). The worker itself never dies. In eager mode the worker pipelines
consecutive per-sample CPU invocations sample by sample (`pipeline.Chain`).

At interpreter exit, eager work nobody consumed is dropped, not run (`_drop_unconsumed_work`):
only the op running at that moment finishes (its current samples, with the pool). Before a
fork the queues are drained, and a forked child starts with new workers (`runtime/fork.py`).
"""

from __future__ import annotations

import atexit
import gc
import threading
import weakref
from collections import deque
from collections.abc import Callable
from queue import SimpleQueue
from typing import Any

from ndd_triton.runtime import fork as _fork
from ndd_triton.runtime import thread_pool as _thread_pool
from ndd_triton.runtime.eval_mode import EvalMode
from ndd_triton.runtime.gpu_run import mark_worker_thread
from ndd_triton.runtime.invocation import _DONE, Invocation
from ndd_triton.runtime.pipeline import Chain, ChainEnd


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
    inv.mode = mode
    if force_sync and (mode is EvalMode.eager or mode is EvalMode.deferred):
        # External data (the caller's NumPy/torch memory) is read before the call returns;
        # errors still surface where the result is read, as in the async modes.
        inv.run()
    elif mode is EvalMode.eager:
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
        self.chained = 0  # invocations completed by pipelines (`Chain`, from pool threads)
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

    def drain(self, timeout: float = -1) -> bool:
        """Wait until everything submitted so far has run (False: `timeout` seconds passed)."""
        if self._thread is None:
            return True
        marker = threading.Lock()
        marker.acquire()
        self._queue.put(marker)
        return marker.acquire(timeout=timeout)

    @staticmethod
    def stop(worker: Worker, join: bool = False) -> None:
        """Ask the thread to exit after the queued work (called when the context dies)."""
        thread = worker._thread
        if thread is not None and thread.is_alive():
            worker._queue.put(None)
            if join and thread is not threading.current_thread():
                thread.join(timeout=10)


_closing = False  # set at interpreter exit: queued work is dropped, not run


def _drop_unconsumed_work() -> None:
    """At exit, once the main thread is done: drop queued eager work instead of running it.

    Runs among `threading`'s exit hooks, before `concurrent.futures` joins the pool threads
    (which would otherwise finish every queued sample first). While another non-daemon thread
    of the user is alive, it may still read results, so nothing is dropped yet.
    """
    global _closing
    me = threading.current_thread()
    if any(t is not me and not t.daemon and t.is_alive() and not t.name.startswith("ndd-")
           for t in threading.enumerate()):  # fmt: skip
        return
    _closing = True
    _thread_pool.cancel_all_work()
    for worker in list(_workers):
        Worker.stop(worker)


@atexit.register
def _stop_all_workers() -> None:
    # Executor threads must end before interpreter teardown: a thread that used torch and is
    # killed during finalisation aborts the process ("terminate called without an exception").
    # Each finishes the item it is running; the rest of its queue is dropped.
    global _closing
    _closing = True
    _thread_pool.cancel_all_work()
    for worker in list(_workers):
        Worker.stop(worker, join=True)


def _register_exit_hook() -> None:
    import concurrent.futures.thread  # noqa: F401  (its exit hook must be registered first)

    register = getattr(threading, "_register_atexit", None)
    if register is not None:  # CPython >= 3.9; else the atexit hook above does it, later
        register(_drop_unconsumed_work)


_register_exit_hook()


@_fork.before_fork
def _drain_before_fork() -> None:
    """Finish queued eager work, so that the child inherits complete results and idle locks."""
    me = threading.current_thread()
    for worker in list(_workers):
        if worker._thread is not None and worker._thread is not me and not worker.idle:
            worker.drain(timeout=_fork.DRAIN_TIMEOUT_S)


@_fork.on_fork_child
def _reset_after_fork() -> None:
    """Forget the parent's executor threads (gone in the child); new ones start on first use."""
    stale = False
    for worker in list(_workers):
        stale = stale or not worker.idle
        worker._queue = SimpleQueue()
        worker._thread = None
        worker._lock = threading.Lock()
        worker.submitted = worker.finished = worker.chained = 0
    if stale:  # the drain timed out: fail what can no longer complete (rare, so a heap scan)
        error = RuntimeError("This result was still being computed when the process forked; "
                             "it is not available in the child process. Read it before forking.")
        for obj in gc.get_objects():
            if type(obj) is Invocation and obj._state < _DONE and obj._done is not None:
                obj._complete(None, error, 0.0)


def _loop(worker: Worker) -> None:
    """Run the queue in order. Consecutive per-sample CPU invocations are pipelined (`Chain`):
    while a chain runs, the next invocations join it if they can; whole-batch CPU work whose
    inputs were all computed before its call (`Invocation.beside`) runs on this thread beside
    the chain, and anything else waits (`held`) until the chain has finished."""
    mark_worker_thread()
    # whole-batch CPU kernels run here beside the busy pool: one OpenMP thread, as the pool's
    # (with torch's default intra-op threads mel/decibel batch kernels ran ~3x slower)
    _thread_pool.torch_single_threaded()
    queue = worker._queue
    held: deque[Any] = deque()
    chain: Chain | None = None
    while True:
        if _closing:  # interpreter exit: what is queued is dropped (the pool's job too)
            return
        if chain is None and held:
            item = held.popleft()
        else:
            item = queue.get()
            if _closing:
                return
            if chain is not None and chain.finished():
                chain.close()
                chain = None
            if isinstance(item, ChainEnd):
                continue
            if chain is not None or held:  # keep call order behind the chain / held work
                if chain is not None and not held and isinstance(item, Invocation) and \
                        chain.add(item):  # fmt: skip
                    continue
                if chain is not None and not held and isinstance(item, Invocation) and \
                        item.beside:  # fmt: skip
                    # reads only what was computed before it was called: nothing in the chain,
                    # so it runs here now instead of after the chain, while this thread would
                    # only wait (the detection recipe's box_encoder beside the image pipeline)
                    item.run()
                    worker.finished += 1
                    continue
                held.append(item)
                if chain is not None and chain.wake_when_finished():  # no message will come
                    chain.close()
                    chain = None
                continue
        if item is None:
            return
        if isinstance(item, Invocation):
            chain = Chain.begin(worker, item)
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
