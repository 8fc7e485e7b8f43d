"""The background thread that reads a reader's batches ahead of the consumer.

The sample order is a pure function of the stream configuration and position (`_sharding`), so
the thread simply walks the stream from its start position, epoch after epoch, and keeps up to
`prefetch_queue_depth` loaded batches in a queue. It holds no reference to the `Reader`, so a
dropped reader is collected and its finalizer stops the thread.
"""

from __future__ import annotations

import atexit
import queue
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ndd_triton._storage import BatchStorage
from ndd_triton.readers._sharding import StreamConfig, epoch_indices

Position = tuple[int, int, int]  # (epoch, ring start of the epoch, samples consumed in the epoch)
_live: weakref.WeakSet[Prefetcher] = weakref.WeakSet()
Loader = Callable[[np.ndarray], tuple[list[BatchStorage], list[str]]]


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
        try:
            while not self._stop.is_set():
                order, next_start = epoch_indices(cfg, epoch, ring_start, batch_size)
                for first in range(offset, len(order), batch_size):
                    chosen = order[first:first + batch_size]
                    outputs, sources = load(chosen)
                    last = first + batch_size >= len(order)
                    after = (epoch + 1, next_start, 0) if last else \
                        (epoch, ring_start, first + batch_size)  # fmt: skip
                    if not self._put(Item(outputs, sources, after, last)):
                        return
                epoch, ring_start, offset = epoch + 1, next_start, 0
        except Exception as e:  # delivered to the consumer, which re-raises it at its call
            self._put(e)

    def take(self) -> Item:
        """The next batch, in stream order; re-raises a loading error (and every later take)."""
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
        if isinstance(item, BaseException):
            self._failed = item
            self.stop()
            raise item
        return item

    def stop(self) -> None:
        """Ask the thread to finish (it exits at its next queue operation)."""
        self._stop.set()


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
