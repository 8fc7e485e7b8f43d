"""`ThreadPool.run` with the caller helping: every sample runs once, errors are raised, and a
caller that took every sample itself does not wait for a pool thread that never started."""

from __future__ import annotations

import threading
import time

import pytest

from ndd_triton.runtime.thread_pool import ThreadPool


def test_a_caller_that_did_all_the_work_does_not_wait_for_a_busy_pool() -> None:
    pool = ThreadPool(2)
    release = threading.Event()
    executor = pool._threads()
    busy = [executor.submit(release.wait, 30) for _ in range(2)]  # every pool thread occupied
    try:
        ran: list[tuple[int, str]] = []
        start = time.monotonic()
        pool.run(lambda i: ran.append((i, threading.current_thread().name)), 8,
                 caller_helps=True)  # fmt: skip
        assert time.monotonic() - start < 10  # (it used to wait for the busy threads: 30 s)
        me = threading.current_thread().name
        assert sorted(i for i, _ in ran) == list(range(8))
        assert all(name == me for _, name in ran)
    finally:
        release.set()
        for task in busy:
            task.result()
        pool.shutdown()


@pytest.mark.parametrize("helps", [False, True])
def test_every_sample_runs_once_and_the_lowest_error_is_raised(helps: bool) -> None:
    pool = ThreadPool(2)
    try:
        counts = [0] * 64
        lock = threading.Lock()

        def count(i: int) -> None:
            with lock:
                counts[i] += 1

        for _ in range(20):
            pool.run(count, 64, caller_helps=helps)
        assert counts == [20] * 64

        def fail(i: int) -> None:
            if i in (5, 9):
                raise ValueError(f"sample {i}")

        with pytest.raises(ValueError, match="sample 5"):
            pool.run(fail, 16, caller_helps=helps)
    finally:
        pool.shutdown()
