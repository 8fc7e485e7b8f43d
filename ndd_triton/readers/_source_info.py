"""`ndd.get_property`: per-sample properties as bytes (`source_info`, `layout`).

The source paths come from the tags readers put on their output batches (`core.source_tags`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ndd_triton.core.batch import Batch
from ndd_triton.core.construct import as_batch, as_tensor
from ndd_triton.core.source_tags import source_info
from ndd_triton.core.tensor import Tensor

_KEYS = ("source_info", "layout")


def get_property(input: Any, /, *, batch_size: int | None = None, device: Any = None,
                 key: str) -> Any:  # fmt: skip
    """A sample property as u8 bytes: `key="source_info"` (reader source path) or `"layout"`.

    Samples that did not come from a reader have an empty source_info; data without a layout
    (e.g. encoded files) has an empty layout. Tensor in, Tensor out; Batch in, Batch out.
    """
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
