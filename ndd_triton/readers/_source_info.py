"""Per-sample source paths of reader outputs (`get_property(key="source_info")`).

Readers tag each sample's torch tensor with the path it came from. The tag is keyed by the
tensor object, so it follows the sample through `Batch.select`, iteration and `Tensor`
wrapping (they share the tensor) and disappears with it; data copied by an operator (or moved
to another device) no longer carries it, as the property describes the reader's output.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

import torch

_lock = threading.Lock()
_sources: dict[int, str] = {}


def _forget(key: int) -> None:
    with _lock:
        _sources.pop(key, None)


def tag(samples: list[torch.Tensor], sources: list[str]) -> None:
    """Remember `sources[i]` as the origin of `samples[i]`."""
    with _lock:
        for sample, source in zip(samples, sources):
            _sources[id(sample)] = source
    for sample in samples:
        weakref.finalize(sample, _forget, id(sample))


def source_info(sample: Any) -> str | None:
    """The source path of a reader output sample (Tensor or torch tensor), or None."""
    if hasattr(sample, "_torch"):
        sample = sample._torch()
    with _lock:
        return _sources.get(id(sample))
