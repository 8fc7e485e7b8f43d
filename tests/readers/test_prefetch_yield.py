"""The prefetch thread steps aside right after a take when it is ahead of the consumer."""

from __future__ import annotations

import queue
import threading
import time

from ndd_triton.readers import _prefetch


def _prefetcher(queued: int, period: float) -> _prefetch.Prefetcher:
    p = _prefetch.Prefetcher.__new__(_prefetch.Prefetcher)
    p._queue = queue.Queue()
    for _ in range(queued):
        p._queue.put(object())
    p._stop = threading.Event()
    p._period = period
    p._last_take = time.perf_counter()
    return p


def _waited(p: _prefetch.Prefetcher) -> float:
    start = time.perf_counter()
    p._yield_to_consumer()
    return time.perf_counter() - start


def test_ahead_of_a_slow_consumer_it_waits_after_the_take():
    # 15% of a 20 ms period = 3 ms after the take
    assert _waited(_prefetcher(queued=1, period=0.020)) >= 0.0025


def test_the_wait_is_capped():
    assert _waited(_prefetcher(queued=1, period=10.0)) < _prefetch._MAX_YIELD_S + 0.05


def test_no_wait_when_the_consumer_may_be_waiting_or_the_period_is_unknown():
    for p in (_prefetcher(queued=0, period=0.020), _prefetcher(queued=1, period=0.0)):
        p._last_take = time.perf_counter() + 1.0  # a wait would be long and obvious
        assert _waited(p) < 0.5


def test_stop_ends_the_wait():
    p = _prefetcher(queued=1, period=10.0)
    p._last_take = time.perf_counter() + 5.0
    p._stop.set()
    assert _waited(p) < 0.5


def test_batches_the_consumer_moved_on_from_are_freed_on_the_prefetch_thread(tmp_path):
    import weakref

    import numpy as np

    import ndd_triton as ndd

    for i in range(12):
        (tmp_path / "c").mkdir(exist_ok=True)
        (tmp_path / "c" / f"{i}.jpg").write_bytes(bytes([i]) * (100 + i))
    reader = ndd.readers.File(file_root=str(tmp_path))
    epoch = reader.next_epoch(batch_size=4)
    freed_on: list[str] = []
    jpegs, labels = next(epoch)
    first = bytes(np.asarray(jpegs.select(0)))
    weakref.finalize(jpegs._storage_or_raise().samples[0], lambda: freed_on.append(
        threading.current_thread().name))  # fmt: skip
    del jpegs, labels
    jpegs, labels = next(epoch)  # the consumer moves on; the first batch is not freed here
    deadline = time.monotonic() + 10
    while not freed_on and time.monotonic() < deadline:
        time.sleep(0.01)
    assert freed_on and freed_on[0].startswith("ndd-reader"), freed_on
    assert first == bytes([0]) * 100
    list(epoch)
