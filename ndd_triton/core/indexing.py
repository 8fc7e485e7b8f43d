"""NumPy-style basic indexing for `Tensor[...]` and per-sample `Batch.slice[...]`.

Turns an index expression into a torch basic index plus the output layout (integer indices drop
the axis letter, slices keep it, `None` inserts an unnamed axis), raising DALI's error classes.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np


def _as_int(value: Any, what: str) -> int:
    if hasattr(value, "shape") and hasattr(value, "item") and not isinstance(value, np.generic):
        # ndd Tensors, NumPy arrays, torch tensors: a 0-D one is its value
        if len(value.shape) != 0:
            raise RuntimeError(f"{what}: Array indices must be scalar (0D); got a "
                               f"{type(value).__name__} of shape {tuple(value.shape)}")
        value = value.item()
    if isinstance(value, bool | np.bool_):
        return int(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return int(value)  # DALI truncates float indices
    if isinstance(value, str | bytes):
        raise ValueError(f"{what}: invalid index {value!r}; expected an int, a slice or ...")
    if isinstance(value, list | tuple | np.ndarray):
        raise RuntimeError(f"{what}: Array indices must be scalar (0D); fancy indexing with "
                           f"{type(value).__name__} is not supported")
    raise TypeError(f"{what}: unsupported index type {type(value).__name__}")


def _slice_part(value: Any, what: str) -> int | None:
    return None if value is None else _as_int(value, what)


def basic_index(key: Any, shape: tuple[int, ...], layout: str | None, what: str = "Tensor"
                ) -> tuple[tuple[Any, ...], str | None]:  # fmt: skip
    """Validate `key` for `shape`; return a torch index tuple and the resulting layout."""
    items = key if isinstance(key, tuple) else (key,)
    ndim = len(shape)
    consumed = sum(1 for k in items if k is not None and k is not Ellipsis)
    if sum(1 for k in items if k is Ellipsis) > 1:
        raise ValueError(f"{what}: an index can only have a single ellipsis ('...')")
    if consumed > ndim:
        raise ValueError(f"{what}: Number of ranges ({consumed}) is greater than the number of "
                         f"dimensions ({ndim})")
    torch_key: list[Any] = []
    letters: list[str | None] = []
    axis = 0
    names = list(layout) if layout else [None] * ndim
    for item in items:
        if item is Ellipsis:
            skip = ndim - consumed
            torch_key.append(Ellipsis)
            letters.extend(names[axis:axis + skip])
            axis += skip
        elif item is None:
            torch_key.append(None)
            letters.append("?")
        elif isinstance(item, slice):
            torch_key.append(slice(_slice_part(item.start, what), _slice_part(item.stop, what),
                                   _slice_part(item.step, what)))  # fmt: skip
            if torch_key[-1].step == 0:
                raise ValueError(f"{what}: slice step cannot be zero")
            letters.append(names[axis])
            axis += 1
        else:
            index = _as_int(item, what)
            if not -shape[axis] <= index < shape[axis]:
                raise RuntimeError(f"{what}: Index {index} is out of range for axis {axis} of "
                                   f"length {shape[axis]}")
            torch_key.append(index)
            axis += 1
    letters.extend(names[axis:])
    out_layout = None if not layout or "?" in letters else "".join(x for x in letters if x) or None
    return tuple(torch_key), out_layout


def apply_index(data: Any, torch_key: tuple[Any, ...]) -> Any:
    """Apply a validated basic index to a torch tensor; negative steps copy (torch has none)."""
    import torch

    plain: list[Any] = []
    flips: list[int] = []
    in_dim = out_dim = 0
    ellipsis_dims = data.dim() - sum(1 for k in torch_key if k is not None and k is not Ellipsis)
    for k in torch_key:
        if k is Ellipsis:
            plain.append(k)
            in_dim += ellipsis_dims
            out_dim += ellipsis_dims
        elif k is None:
            plain.append(k)
            out_dim += 1
        elif isinstance(k, int):
            plain.append(k)
            in_dim += 1
        else:
            if k.step is not None and k.step < 0:
                start, stop, step = k.indices(data.shape[in_dim])
                count = len(range(start, stop, step))
                last = start + (count - 1) * step
                k = slice(last, start + 1, -step) if count else slice(0, 0)
                flips.append(out_dim)
            plain.append(k)
            in_dim += 1
            out_dim += 1
    result = data[tuple(plain)]
    if flips:
        result = torch.flip(result, flips)
    return result.contiguous()
