"""Per-sample source paths of reader outputs (`get_property(key="source_info")`).

Readers tag each sample's torch tensor with the path it came from. The tag is keyed by the
tensor object, so it follows the sample through `Batch.select`, iteration and `Tensor`
wrapping (they share the tensor) and disappears with it; data copied by an operator (or moved
to another device) no longer carries it, as the property describes the reader's output.

Operators see their host inputs as NumPy views, not as the tagged tensors, so the tag is also
kept by memory: `source_of_memory(array)` names the reader sample whose bytes the array views
(the same address and size), which is how a decoder names the file it cannot decode. Empty
samples have no address and are not found this way.
"""

from __future__ import annotations

import collections
import functools
import math
import threading
import weakref
from typing import Any

import torch

from ndd_triton._storage import BatchStorage

_lock = threading.Lock()
_sources: dict[int, str] = {}
# (address, nbytes) of a tagged host sample's bytes -> {id(sample): source}. The bytes stay
# allocated while the sample lives, so an entry never outlives the memory it describes.
_by_memory: dict[tuple[int, int], dict[int, str]] = {}


# Finalizers run wherever the garbage collector does, possibly inside one of our own locked
# sections on the same thread: taking `_lock` there deadlocks, touching the dicts there breaks
# an iteration. So a dead sample is only queued (deque.append is atomic) and the queue is
# emptied under the lock before every use. A queued id cannot be reused by a live sample before
# the next drain: the finalizer runs before the memory (and so the id) is freed.
_dead: collections.deque[tuple[int, tuple[int, int] | None]] = collections.deque()
# id(sample) -> the weak reference whose callback queues the sample when it dies (a plain
# weakref with a callback: ~2x cheaper than weakref.finalize, 64 of them per reader batch)
_refs: dict[int, weakref.ref[torch.Tensor]] = {}


def _forget(key: int, memory: tuple[int, int] | None) -> None:
    _dead.append((key, memory))


def _died(key: int, memory: tuple[int, int] | None, ref: object) -> None:
    """Weakref callback of a tagged sample."""
    _forget(key, memory)


def _drain() -> None:
    """Drop the entries of dead samples (call with `_lock` held)."""
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


def _memory_key(sample: torch.Tensor) -> tuple[int, int] | None:
    if sample.device.type != "cpu" or sample.numel() == 0 or not sample.is_contiguous():
        return None
    return sample.data_ptr(), sample.numel() * sample.element_size()


def tag(samples: list[torch.Tensor], sources: list[str],
        memories: list[tuple[int, int] | None] | None = None) -> None:  # fmt: skip
    """Remember `sources[i]` as the origin of `samples[i]` (`memories`: their (address,
    nbytes) when known, see `tag_storage`)."""
    if memories is None:
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
    """`tag` the samples of a reader's output storage; the memory of each sample comes from
    the packed buffer's address and offsets in one step rather than from torch per sample."""
    samples = storage.samples
    host, offsets, rows = storage.host_buffer(), storage._offsets, storage._shape_rows
    if host is None or offsets is None or rows is None:
        tag(samples, sources)
        return
    item = host.itemsize
    sizes = [math.prod(row) * item for row in rows]
    starts = (offsets * item + host.__array_interface__["data"][0]).tolist()
    tag(samples, sources, [(a, n) if n else None for a, n in zip(starts, sizes, strict=True)])


def source_of_memory(array: Any) -> str | None:
    """The source of the reader sample whose bytes `array` (a NumPy array) views exactly, or
    None (not a reader sample, a copy, a part of one, or an empty sample)."""
    if array.size == 0 or not array.flags.c_contiguous:
        return None
    key = (array.ctypes.data, array.nbytes)
    with _lock:
        _drain()
        owners = _by_memory.get(key)
        names = set(owners.values()) if owners else set()
    return names.pop() if len(names) == 1 else None


def source_info(sample: Any) -> str | None:
    """The source path of a reader output sample (Tensor or torch tensor), or None."""
    if hasattr(sample, "_torch"):
        sample = sample._torch()
    with _lock:
        _drain()
        return _sources.get(id(sample))


_KEYS = ("source_info", "layout")


def get_property(input: Any, /, *, batch_size: int | None = None, device: Any = None,
                 key: str) -> Any:  # fmt: skip
    """A sample property as u8 bytes: `key="source_info"` (reader source path) or `"layout"`.

    Samples that did not come from a reader have an empty source_info; data without a layout
    (e.g. encoded files) has an empty layout. Tensor in, Tensor out; Batch in, Batch out.
    """
    import numpy as np

    from ndd_triton._batch import Batch
    from ndd_triton._construct import as_batch, as_tensor
    from ndd_triton._tensor import Tensor

    if key not in _KEYS:
        raise ValueError(f"get_property: argument 'key' must be one of {', '.join(_KEYS)}; got "
                         f"{key!r}")
    if device is not None and str(device) != "cpu":
        raise ValueError(f"get_property: device must be 'cpu' (properties are host data); got "
                         f"{device!r}")

    def encode(sample: Tensor) -> np.ndarray:
        text = (source_info(sample) or "") if key == "source_info" else (sample.layout or "")
        return np.frombuffer(text.encode(), np.uint8).copy()

    if isinstance(input, Batch):
        if batch_size is not None and batch_size != input.batch_size:
            raise ValueError(f"get_property: batch_size {batch_size} does not match the input "
                             f"batch size {input.batch_size}")
        return as_batch([encode(sample) for sample in input])
    if isinstance(input, Tensor):
        if batch_size is not None:
            return as_batch([encode(input)] * batch_size)
        return as_tensor(encode(input))
    raise TypeError(f"get_property: input expects a Tensor or a Batch; got "
                    f"{type(input).__name__}")
