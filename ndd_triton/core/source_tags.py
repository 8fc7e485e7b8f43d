"""Per-sample source paths of reader outputs (`get_property(key="source_info")`), by memory.

A reader tags the storage of each output batch with the paths its samples came from (the
hint `SOURCES`): a sample taken from that batch (`Batch.select`, iteration) finds its path
through the batch. The tag is also kept by memory, so that what views a sample's bytes
exactly (a selection of the batch, the sample's torch tensor, the NumPy views operators see)
is found as well: `source_of_memory(array)` is how a decoder names the file it cannot decode.
Data copied by an operator (or moved to another device) no longer carries it, as the property
describes the reader's output.

The memory of a batch is registered once per batch, for as long as its NumPy buffer lives (its
torch views keep that buffer alive, and while it lives the memory cannot be reused): no torch
tensor or weak reference per sample (~0.4 ms per batch of 64 on the prefetch thread when they
were). Storages without such a buffer are tagged sample by sample, by tensor and by memory.
"""

from __future__ import annotations

import bisect
import collections
import functools
import threading
import weakref
from typing import Any

import numpy as np
import torch

from ndd_triton.core.storage import BatchStorage

SOURCES = "source"  # BatchStorage.hints key: the path of each sample
_lock = threading.Lock()
_sources: dict[int, str] = {}
# (address, nbytes) of a tagged host sample's bytes -> {id(sample): source}. The bytes stay
# allocated while the sample lives, so an entry never outlives the memory it describes.
_by_memory: dict[tuple[int, int], dict[int, str]] = {}
# id(buffer) -> (sample start addresses in order, their sizes in bytes, their sources): the
# batches tagged by memory, each while its buffer lives
_batches: dict[int, tuple[list[int], list[int], list[str]]] = {}
_batch_refs: dict[int, weakref.ref[np.ndarray]] = {}


# Finalizers run wherever the garbage collector does, possibly inside one of our own locked
# sections on the same thread: taking `_lock` there deadlocks, touching the dicts there breaks
# an iteration. So a dead sample or buffer is only queued (deque.append is atomic) and the
# queue is emptied under the lock before every use. A queued id cannot be reused by a live
# object before the next drain: the finalizer runs before the memory (and so the id) is freed.
_dead: collections.deque[tuple[int, tuple[int, int] | None]] = collections.deque()
_dead_batches: collections.deque[int] = collections.deque()
# id(sample) -> the weak reference whose callback queues the sample when it dies (a plain
# weakref with a callback: ~2x cheaper than weakref.finalize)
_refs: dict[int, weakref.ref[torch.Tensor]] = {}


def _forget(key: int, memory: tuple[int, int] | None) -> None:
    _dead.append((key, memory))


def _died(key: int, memory: tuple[int, int] | None, ref: object) -> None:
    """Weakref callback of a tagged sample."""
    _forget(key, memory)


def _batch_died(key: int, ref: object) -> None:
    """Weakref callback of a tagged batch buffer."""
    _dead_batches.append(key)


def _drain() -> None:
    """Drop the entries of dead samples and buffers (call with `_lock` held)."""
    while _dead:
        key, memory = _dead.popleft()
        _sources.pop(key, None)
        _refs.pop(key, None)
        if memory is not None:
            owners = _by_memory.get(memory)
            if owners is not None:
                owners.pop(key, None)
                if not owners:
                    del _by_memory[memory]
    while _dead_batches:
        key = _dead_batches.popleft()
        _batches.pop(key, None)
        _batch_refs.pop(key, None)


def _memory_key(sample: torch.Tensor) -> tuple[int, int] | None:
    if sample.device.type != "cpu" or sample.numel() == 0 or not sample.is_contiguous():
        return None
    return sample.data_ptr(), sample.numel() * sample.element_size()


def tag(samples: list[torch.Tensor], sources: list[str]) -> None:
    """Remember `sources[i]` as the origin of `samples[i]` (by tensor and by memory)."""
    memories = [_memory_key(sample) for sample in samples]
    refs = [weakref.ref(sample, functools.partial(_died, id(sample), memory))
            for sample, memory in zip(samples, memories, strict=True)]  # fmt: skip
    with _lock:
        _drain()
        for sample, source, memory, ref in zip(samples, sources, memories, refs, strict=True):
            key = id(sample)
            _sources[key] = source
            _refs[key] = ref
            if memory is not None:
                _by_memory.setdefault(memory, {})[key] = source


def tag_storage(storage: BatchStorage, sources: list[str]) -> None:
    """Tag a reader's output storage with the path of each sample (see the module doc)."""
    storage.hints = {**(storage.hints or {}), SOURCES: sources}
    buffer = storage.host_array()
    if buffer is None or storage.device.device_type != "cpu" or not buffer.flags.c_contiguous:
        tag(storage.samples, sources)
        return
    item = buffer.itemsize
    base = buffer.__array_interface__["data"][0]
    counts = storage.sample_sizes()
    if counts is not None:  # a ragged batch: elements per sample at `offsets`
        offsets = storage.offsets
        assert offsets is not None
        starts = (offsets * item + base).tolist()
        sizes = (counts * item).tolist()
    else:  # a uniform (N, ...) array
        n = len(buffer)
        size = buffer.nbytes // n if n else 0
        starts = list(range(base, base + n * size, size)) if size else [base] * n
        sizes = [size] * n
    key = id(buffer)
    ref = weakref.ref(buffer, functools.partial(_batch_died, key))
    with _lock:
        _drain()
        _batches[key] = (starts, sizes, list(sources))
        _batch_refs[key] = ref
    if 0 in sizes:  # torch gives empty tensors no address: tag those by tensor
        empty = [i for i, size in enumerate(sizes) if not size]
        samples = storage.samples
        tag([samples[i] for i in empty], [sources[i] for i in empty])


def _find(address: int, nbytes: int) -> str | None:
    """The one source of the samples tagged at exactly this memory (call with `_lock` held)."""
    names = set(_by_memory.get((address, nbytes), {}).values()) if nbytes else set()
    for starts, sizes, sources in _batches.values():
        at = bisect.bisect_left(starts, address)
        while at < len(starts) and starts[at] == address:
            if sizes[at] == nbytes:
                names.add(sources[at])
            at += 1
    return names.pop() if len(names) == 1 else None


def source_of_memory(array: Any) -> str | None:
    """The source of the reader sample whose bytes `array` (a NumPy array) views exactly, or
    None (not a reader sample, a copy, a part of one, or an empty sample)."""
    if array.size == 0 or not array.flags.c_contiguous:
        return None
    with _lock:
        _drain()
        return _find(array.__array_interface__["data"][0], array.nbytes)


def source_info(sample: Any) -> str | None:
    """The source path of a reader output sample (Tensor or torch tensor), or None."""
    batch = getattr(sample, "_source", None)
    storage = batch._storage if batch is not None else None
    if storage is not None and storage.hints and SOURCES in storage.hints:
        return storage.hints[SOURCES][sample._index]  # type: ignore[no-any-return]
    if hasattr(sample, "_torch"):
        sample = sample._torch()
    with _lock:
        _drain()
        found = _sources.get(id(sample))
        if found is not None:
            return found
        if sample.device.type != "cpu" or not sample.is_contiguous():
            return None
        return _find(sample.data_ptr(), sample.numel() * sample.element_size())
