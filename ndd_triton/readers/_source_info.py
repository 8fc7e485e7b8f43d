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
        for sample, source in zip(samples, sources, strict=True):
            _sources[id(sample)] = source
    for sample in samples:
        weakref.finalize(sample, _forget, id(sample))


def source_info(sample: Any) -> str | None:
    """The source path of a reader output sample (Tensor or torch tensor), or None."""
    if hasattr(sample, "_torch"):
        sample = sample._torch()
    with _lock:
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
