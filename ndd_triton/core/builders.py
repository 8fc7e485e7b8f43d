"""Construction entry points that Tensor, Batch and DType call but that live above them.

`core.construct` imports Tensor and Batch to build them, so `Tensor(data)`, `Batch(samples)`,
`Batch.broadcast` and `ndd.float32(data)` reach it through these slots, which `core.construct`
fills when it is imported (`core/__init__` imports it, so they are filled before any use).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _unset(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("ndd_triton.core.construct was not imported")


to_torch: Callable[..., Any] = _unset
"""`to_torch(data, dtype, device, copy, what) -> (torch.Tensor, Device, layout, external)`."""
build_batch: Callable[..., Any] = _unset
"""`build_batch(tensors, dtype=, device=, layout=, copy=) -> Batch`."""
tensor: Callable[..., Any] = _unset
"""`tensor(data, dtype=, ...) -> Tensor` (a copy)."""
as_tensor: Callable[..., Any] = _unset
"""`as_tensor(data, dtype=, device=, ...) -> Tensor` (zero-copy where possible)."""
traced_transfer: Callable[..., Any] = lambda batch, device: None
"""`traced_transfer(batch, device) -> Batch | None`: inside a compiled epoch, `Batch.to_device`
as a traced op call (`runtime/compiled.py`); None elsewhere."""
