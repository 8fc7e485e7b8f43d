"""`EvalContext`: a device, a CPU thread pool, a CUDA stream and one executor thread.

Each thread has its own default context (so eager work of different threads never shares a
queue); a context created by the user must not be active in two threads at once.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from ndd_triton.core import device as _device
from ndd_triton.runtime import fork as _fork
from ndd_triton.runtime import stream as _stream
from ndd_triton.runtime.checkpoint import Checkpoint
from ndd_triton.runtime.executor import Worker
from ndd_triton.runtime.thread_pool import ThreadPool, default_pool

_tls = threading.local()
_contexts: weakref.WeakSet[EvalContext] = weakref.WeakSet()


@_fork.on_fork_child
def _reset_after_fork() -> None:
    """In a forked child only the forking thread exists: a context's lock may be held, or the
    context marked active, by a thread that is gone."""
    me = threading.get_ident()
    for ctx in list(_contexts):
        ctx._lock = threading.Lock()
        if ctx._owner is not None and ctx._owner != me:
            ctx._owner, ctx._depth = None, 0


class EvalContext:
    """Bundles device, thread pool and stream for the ops evaluated inside it."""

    def __init__(self, *, num_threads: int | None = None, device_id: int | None = None,
                 cuda_stream: Any = None,
                 thread_pool: ThreadPool | None = None) -> None:  # fmt: skip
        if num_threads is not None and thread_pool is not None:
            raise ValueError("thread_pool and num_threads cannot be specified together.")
        if device_id is not None:
            _device.require_gpu(f"EvalContext(device_id={device_id})")
            if not 0 <= device_id < _device.gpu_count():
                raise ValueError(f"Invalid device id: {device_id}")
        elif _device.gpu_backend() is not None:
            device_id = _device.current_cuda_device()
        self._device_id = device_id
        self._own_pool = thread_pool if thread_pool is not None else (
            ThreadPool(num_threads) if num_threads is not None else None)  # fmt: skip
        self._stream_arg = cuda_stream
        self._stream: _stream.Stream | None = None
        self._stream_resolved = False
        self._owner: int | None = None
        self._depth = 0
        self._lock = threading.Lock()
        self._worker = Worker()
        self._pending: list[weakref.ref[Any]] = []
        self._checkpoint: Any = None
        weakref.finalize(self, Worker.stop, self._worker)
        _contexts.add(self)

    # ---- properties ----------------------------------------------------------------------
    @property
    def device_id(self) -> int | None:
        """GPU ordinal (None without a gpu)."""
        return self._device_id

    @property
    def thread_pool(self) -> ThreadPool:
        """The CPU pool (the shared default pool unless this context has its own)."""
        return self._own_pool if self._own_pool is not None else default_pool()

    @property
    def num_threads(self) -> int:
        """Threads of the CPU pool."""
        return self.thread_pool.num_threads

    @property
    def cuda_stream(self) -> _stream.Stream | None:
        """The stream GPU work runs on: explicit, thread's current, global default, or new."""
        if not self._stream_resolved:
            self._stream_resolved = True
            if _device.gpu_backend() is not None:
                if self._stream_arg is not None:
                    self._stream = _stream.stream(stream=self._stream_arg,
                                                  device_id=self._device_id)  # fmt: skip
                else:
                    default = _stream.get_default_stream(self._device_id)
                    self._stream = default if default is not None else _stream.Stream(
                        device_id=self._device_id)  # fmt: skip
        return self._stream

    def _set_stream(self, cuda_stream: Any) -> None:
        if cuda_stream is None:
            self._stream_arg, self._stream, self._stream_resolved = None, None, False
            return
        self._stream = _stream.stream(stream=cuda_stream, device_id=self._device_id)
        self._stream_resolved = True

    @property
    def checkpoint(self) -> Any:
        """The Checkpoint bound to this context."""
        if self._checkpoint is None:
            self._checkpoint = Checkpoint()
        return self._checkpoint

    # ---- evaluation ----------------------------------------------------------------------
    def _defer(self, invocation: Any) -> None:
        with self._lock:
            self._pending.append(weakref.ref(invocation))

    def evaluate_all(self) -> None:
        """Run every pending (deferred) invocation of this context, in call order."""
        with self._lock:
            pending, self._pending = self._pending, []
        for ref in pending:
            inv = ref()
            if inv is not None:
                inv.run()
        self._worker.drain()

    # ---- context management --------------------------------------------------------------
    def __enter__(self) -> EvalContext:
        me = threading.get_ident()
        with self._lock:
            if self._owner is not None and self._owner != me:
                raise RuntimeError("This EvalContext is already active in another thread; create "
                                   "one EvalContext per thread (or use set_num_threads)")
            self._owner = me
            self._depth += 1
        _stack().append(self)
        if self._device_id is not None:
            self._device_ctx = _device.Device("gpu", self._device_id)
            self._device_ctx.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._device_id is not None:
            self._device_ctx.__exit__(*exc)
        _stack().pop()
        with self._lock:
            self._depth -= 1
            if self._depth == 0:
                self._owner = None

    @staticmethod
    def default() -> EvalContext:
        """This thread's default context (created on first use)."""
        ctx = getattr(_tls, "default", None)
        if ctx is None:
            ctx = _tls.default = EvalContext()
        return ctx

    @staticmethod
    def current() -> EvalContext:
        """The innermost active context on this thread, else the default one."""
        stack = getattr(_tls, "stack", None)
        return stack[-1] if stack else EvalContext.default()

    def cache_results(self, invocation: Any, results: Any) -> None:
        """Reserved (DALI API placeholder)."""

    def cached_results(self, invocation: Any) -> None:
        """Reserved (DALI API placeholder)."""
        return None


def _stack() -> list[EvalContext]:
    stack = getattr(_tls, "stack", None)
    if stack is None:
        stack = _tls.stack = []
    return stack


def get_current_stream() -> _stream.Stream | None:
    """This thread's stream: the default EvalContext's stream."""
    return EvalContext.default().cuda_stream


def set_current_stream(cuda_stream: Any, /) -> None:
    """Set this thread's stream (None resets); adds no synchronisation with earlier work."""
    EvalContext.default()._set_stream(cuda_stream)
