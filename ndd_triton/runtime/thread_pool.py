"""CPU worker pools and the process-wide thread count (`set_num_threads`/`get_num_threads`)."""

from __future__ import annotations

import heapq
import os
import threading
import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ndd_triton.runtime import fork as _fork
from ndd_triton.runtime.torch_threads import make_this_thread_single

_lock = threading.Lock()
_explicit_threads: int | None = None
_default_pool: ThreadPool | None = None
POOL_MIN_BYTES = 1 << 16  # smaller jobs run on the calling thread (a hop costs more)
_pools: weakref.WeakSet[ThreadPool] = weakref.WeakSet()
_cancelled = False  # interpreter exit: pool threads take no further samples


def cancel_all_work() -> None:
    """At interpreter exit: pool threads finish the sample they run and take no other (the
    executor drops the queued work nobody consumed; `executor._drop_unconsumed_work`)."""
    global _cancelled
    _cancelled = True


@_fork.on_fork_child
def _reset_after_fork() -> None:
    """The parent's pool threads do not exist in a forked child: start new ones on first use."""
    for pool in list(_pools):
        pool._executor = None
        pool._lock = threading.Lock()


def _affinity_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def get_num_threads() -> int:
    """The explicit value, else DALI_NUM_THREADS, else the number of CPUs this process may use."""
    if _explicit_threads is not None:
        return _explicit_threads
    env = os.environ.get("DALI_NUM_THREADS")
    if env:
        try:
            value = int(env)
        except ValueError:
            raise ValueError(f"DALI_NUM_THREADS must be a positive integer; got {env!r}") from None
        if value > 0:
            return value
    return _affinity_count()


def set_num_threads(num_threads: int | None) -> None:
    """Set the default thread count (None resets); rebuilds the shared default pool."""
    global _explicit_threads, _default_pool
    if num_threads is not None:
        if isinstance(num_threads, bool) or not isinstance(num_threads, int):
            raise TypeError(f"The number of threads must be an integer; got "
                            f"{type(num_threads).__name__}")
        if num_threads <= 0:
            raise ValueError(f"The number of threads must be positive; got {num_threads}.")
        if num_threads > 100 * _affinity_count():
            raise ValueError("The number of threads per CPU core must not exceed 100; got "
                             f"{num_threads} for {_affinity_count()} CPUs")
    with _lock:
        _explicit_threads = num_threads
        old, _default_pool = _default_pool, None
    if old is not None:
        old.shutdown()


def default_pool() -> ThreadPool:
    """The shared pool used by contexts without an explicit thread count."""
    global _default_pool
    pool = _default_pool
    if pool is None:
        with _lock:
            if _default_pool is None:
                _default_pool = ThreadPool(get_num_threads())
            pool = _default_pool
    return pool


def torch_single_threaded() -> None:
    """Worker-thread initializer: torch ops called on this thread use one OpenMP/MKL thread
    (`runtime/torch_threads.py`). The pool is the parallelism: 2 pool threads x 2 OpenMP
    threads on 2 cores measured 7.2 CPU ms vs 2.6 for random_resized_crop of a 500x375 image.
    """
    make_this_thread_single()


class ThreadPool:
    """A pool of CPU worker threads that runs one callable per sample."""

    def __init__(self, num_threads: int | None = None, *, device_id: int | None = -1) -> None:
        if num_threads is None:
            num_threads = get_num_threads()
        if isinstance(num_threads, bool) or not isinstance(num_threads, int):
            raise TypeError("ThreadPool: num_threads must be an integer")
        if num_threads < 0:
            raise ValueError(f"ThreadPool: num_threads must be >= 0; got {num_threads}")
        self.num_threads = num_threads
        self._device_id = device_id
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        _pools.add(self)

    @property
    def device_id(self) -> int | None:
        """The GPU this pool is associated with (None for none)."""
        if self._device_id == -1:
            from ndd_triton.core.device import current_cuda_device, gpu_backend

            return current_cuda_device() if gpu_backend() else None
        return self._device_id

    def run(self, fn: Callable[[int], None], count: int, work_bytes: int = 1 << 30,
            order: Sequence[int] | None = None, caller_helps: bool = False) -> None:  # fmt: skip
        """Call fn(i) for i in range(count), in parallel when it is worth a thread hop.

        `order` (a permutation) is the order samples are started in, e.g. `largest_first`.
        Small jobs (under 64 KiB in total, or one sample, or one thread) run on the calling
        thread: a hop to the pool costs tens of microseconds, more than the work itself. Larger
        ones run on the pool's threads (the caller waits), so `num_threads` is the number of
        samples processed at once; with `caller_helps` the caller is one of those threads
        (one wake-up fewer and no wait for the last one when the caller ends last: a pool
        round trip costs ~50-70 us here; for callers whose thread may run the kernels: CPU
        runs, whose torch settings are single-threaded there).
        """
        if count <= 1 or self.num_threads <= 1 or work_bytes < POOL_MIN_BYTES:
            for i in range(count):
                fn(i)
            return
        executor = self._threads()
        # One task per thread, each pulling sample indices from a shared counter: a task per
        # sample costs a future and a wake-up each (tens of us), and pulling balances uneven
        # samples. The error of the lowest failing sample is raised (deterministic).
        next_index = iter(order if order is not None else range(count))
        take = threading.Lock()
        errors: list[tuple[int, BaseException]] = []

        def drain() -> None:
            while True:
                with take:
                    i = next(next_index, None) if not _cancelled else None
                if i is None:
                    return
                try:
                    fn(i)
                except BaseException as e:  # collected; the caller re-raises
                    errors.append((i, e))

        futures = []
        try:
            for _ in range(min(self.num_threads, count) - caller_helps):
                futures.append(executor.submit(drain))
        except RuntimeError:  # no new work after interpreter shutdown began: run it here (a
            drain()           # non-daemon thread of the user may still compute then)
        if caller_helps:
            drain()
        for f in futures:
            # a task no thread has started yet finds every sample taken: not waited for
            if not (caller_helps and f.cancel()):
                f.result()
        if errors:
            raise min(errors, key=lambda pair: pair[0])[1]
        if _cancelled and next(next_index, None) is not None:
            raise RuntimeError("The CPU thread pool stopped: the interpreter is exiting")

    def _threads(self) -> ThreadPoolExecutor:
        """The worker threads (started on first use)."""
        executor = self._executor
        if executor is None:
            with self._lock:
                if self._executor is None:
                    self._executor = ThreadPoolExecutor(
                        self.num_threads, thread_name_prefix="ndd-cpu",
                        initializer=torch_single_threaded)  # fmt: skip
                executor = self._executor
        return executor

    def shutdown(self) -> None:
        """Stop the worker threads (pending work finishes first)."""
        if self._executor is not None:
            self._executor.shutdown(wait=False)
            self._executor = None


class StagedJob:
    """Per-sample stages of consecutive ops on a pool, pipelined sample by sample.

    Sample i of stage s may run once sample i is through the stages before it, so the pool
    does not wait for a whole op to end before starting the next: no op has a tail of its own
    and no thread idles between ops. Threads take the earliest stage with work first (stage 0's
    samples in order, then finished samples into the next stage), which keeps ops in call
    order as far as the data allows; measured, running a sample through every stage at once
    instead was no faster (the later ops' Python then competes for the GIL with the caller's
    prepare of those ops). Stages may be added while earlier ones run. A sample that fails in a
    stage is skipped by the later stages that read that stage. `on_complete(stage)` is called
    once per stage, from the thread that finished its last sample.
    """

    def __init__(self, pool: ThreadPool, n: int, on_complete: Callable[[int], None],
                 order: Sequence[int] | None = None) -> None:  # fmt: skip
        self.n = n
        self._order = order  # the order stage 0 starts samples in (None: 0, 1, ...)
        self._pool = pool
        self._on_complete = on_complete
        self._lock = threading.Lock()
        self._fns: list[Callable[[int], None]] = []
        self._deps: list[tuple[int, ...]] = []
        self._remaining: list[int] = []
        self.errors: list[list[tuple[int, BaseException]]] = []
        self.skipped: list[bool] = []
        self._bad = [0] * n  # per sample: bit s set when stage s failed or skipped it
        self._next_fresh = 0  # next sample to start at stage 0
        self._ready: list[tuple[int, int]] = []  # heap of (stage, sample) that may run now
        self._waiting: list[int] = []  # samples through every stage added so far
        self._drains = 0

    def add(self, fn: Callable[[int], None], deps: tuple[int, ...]) -> int:
        """Append a stage (`deps`: earlier stages it reads); returns its index."""
        with self._lock:
            stage = len(self._fns)
            self._fns.append(fn)
            self._deps.append(deps)
            self._remaining.append(self.n)
            self.errors.append([])
            self.skipped.append(False)
            for i in self._waiting:
                heapq.heappush(self._ready, (stage, i))
            self._waiting.clear()
            claimable = len(self._ready) + (self.n - self._next_fresh)
            spawn = max(min(claimable, self._pool.num_threads - self._drains), 0)
            self._drains += spawn
        executor = self._pool._threads()
        for _ in range(spawn):
            try:
                executor.submit(self._drain)
            except RuntimeError:  # the pool was shut down meanwhile (set_num_threads): here
                self._drain()
        return stage

    def _claim(self) -> tuple[int, int] | None:
        if _cancelled:  # interpreter exit: the rest of the job is dropped
            return None
        if self._next_fresh < self.n and self._fns:
            k = self._next_fresh
            self._next_fresh += 1
            return 0, (k if self._order is None else self._order[k])
        if self._ready:
            return heapq.heappop(self._ready)
        return None

    def _drain(self) -> None:
        while True:
            with self._lock:
                item = self._claim()
                if item is None:
                    self._drains -= 1
                    return
            stage, i = item
            self._run_one(stage, i)
            with self._lock:
                self._remaining[stage] -= 1
                complete = self._remaining[stage] == 0
                if complete:  # drop the stage's views of its buffers (recycled when free)
                    self._fns[stage] = _spent
                if stage + 1 < len(self._fns):
                    heapq.heappush(self._ready, (stage + 1, i))
                else:
                    self._waiting.append(i)
            if complete:
                self._on_complete(stage)

    def _run_one(self, stage: int, i: int) -> None:
        bad = self._bad[i]
        if bad and any(bad >> d & 1 for d in self._deps[stage]):
            self._bad[i] = bad | 1 << stage
            self.skipped[stage] = True
            return
        try:
            self._fns[stage](i)
        except BaseException as e:  # reported by the stage's completion
            self.errors[stage].append((i, e))
            self._bad[i] |= 1 << stage


def largest_first(costs: Sequence[int] | np.ndarray, num_threads: int) -> list[int] | None:
    """Sample order for a pool: costliest first, so that the last samples to start are the
    cheapest and the threads finish together (longest-processing-time scheduling; a batch of
    JPEGs of mixed sizes in index order leaves one thread idle ~0.3 ms per batch waiting for
    the other's last image). Equal costs keep their order. None when it makes no difference
    (equal costs, a thread per sample)."""
    costs = np.asarray(costs)
    if num_threads <= 1 or len(costs) <= num_threads or costs.min() == costs.max():
        return None
    return np.argsort(-costs, kind="stable").tolist()  # type: ignore[no-any-return]


def _spent(i: int) -> None:
    raise RuntimeError("internal error: a finished stage ran again")
