"""Axis selection shared by pad, slice, normalize and the reductions (`axes` / `axis_names`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ndd_triton.ops.schema import Call


def resolve_axes(call: Call, axes: Sequence[int] | None, axis_names: str | None, ndim: int,
                 layout: str | None) -> list[int] | None:  # fmt: skip
    """Axis indices in `[0, ndim)` from `axes` or `axis_names`; None when neither is given.

    Both given -> RuntimeError (DALI: mutually exclusive); an index outside `[-ndim, ndim-1]` ->
    IndexError with DALI's wording; a letter missing from the layout -> ValueError.
    """
    if axes is not None and axis_names is not None:
        raise call.error("arguments 'axes' and 'axis_names' are mutually exclusive; pass one",
                         RuntimeError)  # fmt: skip
    if axis_names is not None:
        if not layout:
            raise call.error(f"argument 'axis_names' ({axis_names!r}) needs an input layout; "
                             "input 0 has none (use 'axes')")  # fmt: skip
        result = []
        for name in axis_names:
            if name not in layout:
                raise call.error(f"argument 'axis_names': axis '{name}' is not present in the "
                                 f"input layout '{layout}'")  # fmt: skip
            result.append(layout.index(name))
        return _unique(call, "axis_names", result)
    if axes is None:
        return None
    result = []
    for axis in axes:
        if not -ndim <= axis < ndim:
            raise call.error(f"argument 'axes': Axis index out of range: {axis} not in range "
                             f"[{-ndim},{ndim - 1}]", IndexError)  # fmt: skip
        result.append(int(axis) % ndim)
    return _unique(call, "axes", result)


def _unique(call: Call, name: str, axes: list[int]) -> list[int]:
    if len(set(axes)) != len(axes):
        raise call.error(f"argument '{name}' lists an axis twice; got {axes}")
    return axes


def drop_axes(layout: str | None, axes: Sequence[int], keep_dims: bool) -> str | None:
    """The layout after reducing `axes` (letters removed unless `keep_dims`); '' -> None."""
    if not layout or keep_dims:
        return layout or None
    kept = "".join(c for i, c in enumerate(layout) if i not in set(axes))
    return kept or None


def uniform_vector(call: Call, name: str) -> list[int] | None:
    """A per-sample int vector argument that must be the same for every sample (e.g. `axes`)."""
    values = call.values.get(name)
    if values is None:
        return None
    per_sample = [tuple(int(a) for a in np.asarray(v).reshape(-1)) for v in values]
    for p in per_sample[1:]:
        if p != per_sample[0]:
            raise call.error(f"argument '{name}' must be the same for every sample; got "
                             f"{list(per_sample[0])} and {list(p)}")  # fmt: skip
    return list(per_sample[0]) if per_sample else []
