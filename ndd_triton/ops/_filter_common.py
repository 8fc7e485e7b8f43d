"""Inference helpers shared by gaussian_blur, laplacian and filter (spatial axes, per-axis args)."""

from __future__ import annotations

import numpy as np

from ndd_triton.core import dtype as _dtype
from ndd_triton.core.dtype import DType
from ndd_triton.ops.schema import Call

SPATIAL = "DHW"


def spatial_span(layout: str | None, ndim: int) -> tuple[int, int]:
    """`(first, count)` of the contiguous spatial axes; layout-less samples are all spatial."""
    if not layout:
        return 0, ndim
    where = [i for i, c in enumerate(layout) if c in SPATIAL]
    if not where or where != list(range(where[0], where[0] + len(where))):
        raise ValueError(f"layout '{layout}' has no contiguous spatial (D, H, W) axes")
    return where[0], len(where)


def filter_span(call: Call) -> tuple[int, int]:
    """Spatial axes of input 0, checked: letters F, C, D, H, W only and 1..3 spatial axes."""
    inp = call.inputs[0]
    if inp.layout and (set(inp.layout) - set("FCDHW") or len(set(inp.layout)) != inp.ndim):
        raise call.error(f"input 0 has layout '{inp.layout}'; expected spatial axes (D, H, W) "
                         "with optional frames (F) and channels (C), e.g. HWC, CHW, FHWC, DHWC")
    try:
        first, count = spatial_span(inp.layout, inp.ndim)
    except ValueError as e:
        raise call.error(f"input 0: {e}") from None
    if not 1 <= count <= 3 or (not inp.layout and count < 2):
        raise call.error(f"input 0 has {inp.ndim} dimensions and no layout; expected 2-D or "
                         "3-D data, or give a layout such as HWC")
    return first, count


def per_axis(values: np.ndarray, count: int) -> np.ndarray | None:
    """One value per spatial axis from one value or `count` values (None if the size is wrong)."""
    flat = np.asarray(values).reshape(-1)
    if flat.size == 1:
        return np.repeat(flat, count)
    return flat if flat.size == count else None


def per_axis_table(call: Call, name: str, count: int, dtype: type) -> np.ndarray:
    """`[N, count]` per-axis values of a vector argument (outermost axis first), checked."""
    value = call.values[name]
    n = call.batch_size
    if isinstance(value, np.ndarray) and value.dtype != object and n and value.shape[0] == n:
        table = value.reshape(n, -1)  # one [N, k] array: no loop
        if table.shape[1] in (1, count):
            if table.shape[1] != count:
                table = np.repeat(table, count, axis=1)
            return table.astype(dtype)
    rows = []
    for i in range(call.batch_size):
        row = per_axis(value[i], count)
        if row is None:
            got = np.asarray(value[i]).size
            raise call.error(f"argument '{name}' sample {i}: expected 1 or {count} values (one "
                             f"per spatial axis); got {got}")
        rows.append(row)
    return np.array(rows, dtype=dtype).reshape(call.batch_size, count)


def float_or_input_dtype(call: Call) -> DType:
    """Output dtype of the filters: the input type (default) or float32."""
    in_dtype = call.inputs[0].dtype
    dtype = call.dtype or in_dtype
    if dtype not in (in_dtype, _dtype.float32):
        raise call.error(f"argument 'dtype' must be the input type ({in_dtype}) or float32; "
                         f"got {dtype}", TypeError)
    return dtype
