"""Turn what a per-batch function returns into torch tensors: pad, squeeze, trim, place.

A function may return one `Batch`/`Tensor`/`torch.Tensor`, a tuple or list of them, or a dict.
GPU batches become torch tensors with the consumer's current stream waiting on the producing
stream (an event, no host sync: `Batch.torch()`); CPU results headed for a CUDA device are
copied through pinned memory with `non_blocking=True`.
"""

from __future__ import annotations

from typing import Any

import torch

from ndd_triton.core.batch import Batch
from ndd_triton.core.tensor import Tensor


def as_outputs(result: Any, names: tuple[str, ...] | None, where: str) -> dict[Any, Any]:
    """The function's result as `{name or position: value}` in output order."""
    if isinstance(result, dict):
        if names is not None and tuple(result) != names:
            missing = [n for n in names if n not in result]
            if missing:
                raise ValueError(f"{where}: the function returned keys {list(result)}; "
                                 f"output_names asks for {list(names)}")
            return {n: result[n] for n in names}
        return dict(result)
    items = list(result) if isinstance(result, tuple | list) else [result]
    if names is not None:
        if len(names) != len(items):
            raise ValueError(f"{where}: the function returned {len(items)} outputs; "
                             f"output_names names {len(names)}: {list(names)}")
        return dict(zip(names, items, strict=True))
    return dict(enumerate(items))


def to_torch(value: Any, pad: bool, where: str, key: Any) -> torch.Tensor:
    """One output as a torch tensor (a dense view when possible)."""
    if isinstance(value, Batch):
        try:
            return value.torch(pad=pad)
        except ValueError as e:
            raise ValueError(f"{where}: output {key!r} is a ragged batch; pass pad=True to "
                             "zero-pad its samples to the largest shape") from e
    if isinstance(value, Tensor):
        return value.torch()
    if isinstance(value, torch.Tensor):
        return value
    raise TypeError(f"{where}: output {key!r} must be an ndd Batch or Tensor or a torch.Tensor; "
                    f"got {type(value).__name__}")


def finish(t: torch.Tensor, squeeze: bool, keep: int | None, device: torch.device | None,
           pin: bool) -> torch.Tensor:  # fmt: skip
    """Squeeze the trailing unit axis, keep the first `keep` samples, move to `device`."""
    if squeeze and t.dim() >= 2 and t.shape[-1] == 1:
        t = t.squeeze(-1)
    if keep is not None and keep < t.shape[0]:
        t = t[:keep]
    if device is not None and t.device != device:
        if pin and t.device.type == "cpu" and device.type == "cuda":
            t = t.pin_memory()
        t = t.to(device, non_blocking=True)
    return t
