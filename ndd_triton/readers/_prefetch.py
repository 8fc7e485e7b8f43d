"""The background thread that reads a reader's batches ahead of the consumer.

The sample order is a pure function of the stream configuration and position (`_sharding`), so
the thread simply walks the stream from its start position, epoch after epoch, and keeps up to
`prefetch_queue_depth` loaded batches in a queue. It holds no reference to the `Reader`, so a
dropped reader is collected and its finalizer stops the thread.

Loading holds the GIL for part of its time (the Python around each file read). Right after the
consumer takes a batch it runs its own serial Python (wrapping the batch, preparing the next
decode) while the worker pool is idle, so a load started then delays the whole pipeline. When
the thread is ahead (a loaded batch is still queued), it therefore waits a little after each
take (a fraction of the consumer's period between takes, at most `_MAX_YIELD_S`) before
loading: that batch is not needed before the queued one has been consumed.

For the same reason the batches the consumer has moved on from are released here: `take` keeps
the previous batch, and the thread drops it after its wait, so whatever releasing it costs is
not paid by the consumer between batches; a batch the caller still uses lives on as usual.

Image headers are parsed here (`annotate`), each file's once: later epochs recognise the same
header bytes in a `HeaderCache` per output.
"""

from __future__ import annotations

import atexit
import collections
import queue
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ndd_triton.core.storage import BatchStorage
from ndd_triton.decoders._header_hints import HeaderCache, annotate
from ndd_triton.readers._sharding import StreamConfig, epoch_indices
from ndd_triton.runtime import fork as _fork
from ndd_triton.runtime import profiling as _profiling

Position = tuple[int, int, int]  # (epoch, ring start of the epoch, samples consumed in the epoch)
_live: weakref.WeakSet[Prefetcher] = weakref.WeakSet()
Loader = Callable[[np.ndarray], tuple[list[BatchStorage], list[str]]]
_MAX_YIELD_S = 0.005
_YIELD_FRACTION = 0.15  # of the consumer's period between takes


@dataclass(slots=True)
class Item:
    """One loaded batch: per-output storages, per-sample source paths and the position after it."""

    outputs: list[BatchStorage]
    sources: list[str]
    after: Position
    last_in_epoch: bool


class Prefetcher:
    """Loads batches of `batch_size` samples on a daemon thread, `depth` batches ahead."""

    def __init__(self, cfg: StreamConfig, load: Loader, batch_size: int, start: Position,
                 depth: int, name: str) -> None:  # fmt: skip
        self._queue: queue.Queue[Item | BaseException] = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._failed: BaseException | None = None
        self._last_take = 0.0
        self._handed: Item | None = None  # the batch taken last (the consumer may still use it)
        self._released: collections.deque[Item] = collections.deque()  # dropped by the thread
        self._period = 0.0  # the consumer's recent time between takes (0: unknown)
        self._name = name
        self._generation = _fork.generation()  # the thread exists in this process only
        args = (cfg, load, batch_size, start)
        self._thread = threading.Thread(target=self._run, args=args, daemon=True,
                                        name=f"ndd-reader-{name}")  # fmt: skip
        self._thread.start()
        _live.add(self)

    def _put(self, item: Item | BaseException) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def _run(self, cfg: StreamConfig, load: Loader, batch_size: int, start: Position) -> None:
        epoch, ring_start, offset = start
        headers: dict[int, HeaderCache] = {}  # per output: the same samples every epoch
        try:
            while not self._stop.is_set():
                order, next_start = epoch_indices(cfg, epoch, ring_start, batch_size)
                for first in range(offset, len(order), batch_size):
                    chosen = order[first:first + batch_size]
                    self._yield_to_consumer()
                    self._released.clear()  # the last reference, often: freed on this thread
                    started = time.perf_counter() if _profiling.ACTIVE else 0.0
                    outputs, sources = load(chosen)
                    if started:
                        _profiling.record_io(f"readers.{self._name}", len(chosen), started)
                    for k, storage in enumerate(outputs):
                        cache = headers.get(k)
                        if cache is None:
                            cache = headers[k] = HeaderCache(cfg.dataset_size)
                        annotate(storage, chosen, cache)  # image headers here, not in decoders
                    last = first + batch_size >= len(order)
                    after = (epoch + 1, next_start, 0) if last else \
                        (epoch, ring_start, first + batch_size)  # fmt: skip
                    if not self._put(Item(outputs, sources, after, last)):
                        return
                epoch, ring_start, offset = epoch + 1, next_start, 0
        except Exception as e:  # delivered to the consumer, which re-raises it at its call
            self._put(e)

    def _yield_to_consumer(self) -> None:
        """Wait a short while after a take when a loaded batch is still queued (module doc)."""
        if self._queue.empty() or self._period <= 0.0:
            return
        delay = self._last_take + min(_MAX_YIELD_S, _YIELD_FRACTION * self._period) - \
            time.perf_counter()  # fmt: skip
        if delay > 0.0:
            self._stop.wait(delay)

    @property
    def forked(self) -> bool:
        """True in a forked child: the thread (and the queue's state) belong to the parent."""
        return self._generation != _fork.generation()

    def take(self) -> Item:
        """The next batch, in stream order; re-raises a loading error (and every later take:
        the reader replaces a failed prefetcher by a new one)."""
        if self._failed is not None:
            raise self._failed
        while True:
            try:
                item = self._queue.get(timeout=0.1)
                break
            except queue.Empty:
                if not self._thread.is_alive() and self._queue.empty():
                    self._failed = RuntimeError("The reader's prefetch thread has stopped; "
                                                "create a new reader")
                    raise self._failed from None
        now = time.perf_counter()
        if self._last_take:
            gap = now - self._last_take
            self._period = gap if not self._period else 0.7 * self._period + 0.3 * gap
        self._last_take = now
        if self._handed is not None:
            self._released.append(self._handed)
        self._handed = item if not isinstance(item, BaseException) else None
        if isinstance(item, BaseException):
            self._failed = item
            self.stop()
            raise item
        return item

    def stop(self) -> None:
        """Ask the thread to finish (it exits at its next queue operation)."""
        if not self.forked:  # (in a child, the event's lock may be held by no thread)
            self._stop.set()


@_fork.on_fork_child
def _forget_parent_threads() -> None:
    _live.clear()


@atexit.register
def _stop_all() -> None:
    """Stop and join every prefetch thread before the interpreter tears torch down."""
    prefetchers = list(_live)
    for prefetcher in prefetchers:
        prefetcher.stop()
    for prefetcher in prefetchers:
        prefetcher._thread.join(timeout=2.0)


def stop_prefetcher(holder: dict[str, Any]) -> None:
    """Finalizer helper: stop the prefetcher stored in `holder`, if any."""
    prefetcher = holder.get("prefetcher")
    if prefetcher is not None:
        prefetcher.stop()
