"""pad: pad the samples of a batch at the end of the selected axes (DALI `pad`).

The padded extent of an axis is the batch maximum (no `shape`, or `-1`), or `max(own extent,
shape)` per sample for a positive `shape`, then rounded up to a multiple of `align`. Data stay
at the start of each axis. `fill_value` is converted to the dtype with wrap-around, as in DALI
(`300 -> 44`, `-1 -> 255` in uint8).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ndd_triton.ops._axes import resolve_axes, uniform_vector
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec


def _per_sample_vectors(call: Call, name: str, count: int) -> list[np.ndarray] | None:
    """Per-sample int vectors of `name`, each broadcast to `count` values; None if not given."""
    values = call.values.get(name)
    if values is None:
        return None
    result = []
    for i in range(call.batch_size):
        vec = np.asarray(values[i], dtype=np.int64).reshape(-1)
        if vec.size == 1:
            vec = np.repeat(vec, count)
        if vec.size != count:
            raise call.error(f"argument '{name}' sample {i}: expected 1 or {count} values (one "
                             f"per padded axis); got {vec.size}")  # fmt: skip
        result.append(vec)
    return result


def _padded_axes(call: Call, ndim: int, layout: str | None) -> list[int]:
    axes = uniform_vector(call, "axes")
    resolved = resolve_axes(call, axes, call.axis_names, ndim, layout)
    return list(range(ndim)) if resolved is None else resolved


def wrap_fill(values: np.ndarray, dtype: np.dtype[Any], what: str) -> np.ndarray:
    """Fill values converted to `dtype` with wrap-around for integers (C-style cast)."""
    values = np.asarray(values, dtype=np.float64)
    if dtype.kind == "b":
        flags: np.ndarray = np.not_equal(values, 0)
        return flags
    if dtype.kind == "f":
        return np.asarray(values, dtype=dtype)
    if not np.all(np.abs(values) < 2.0**63):  # (False for NaN)
        raise ValueError(f"{what} must be finite for integer data and within int64; got "
                         f"{values.tolist()}")  # fmt: skip
    wrapped: np.ndarray = np.trunc(values).astype(np.int64)
    return wrapped.astype(dtype)


def _infer(call: Call) -> OutputSpec:
    inp = call.inputs[0]
    ndim = inp.ndim
    axes = _padded_axes(call, ndim, inp.layout)
    shape = _per_sample_vectors(call, "shape", len(axes))
    align = _per_sample_vectors(call, "align", len(axes))
    out = inp.shapes.copy()
    batch_max = inp.shapes.max(axis=0) if len(inp.shapes) else np.zeros(ndim, np.int64)
    for i in range(call.batch_size):
        for k, axis in enumerate(axes):
            want = -1 if shape is None else int(shape[i][k])
            if want < -1:
                raise call.error(f"argument 'shape' sample {i}: extents must be -1 (batch "
                                 f"maximum) or non-negative; got {want}")  # fmt: skip
            extent = int(batch_max[axis]) if want == -1 else max(int(inp.shapes[i, axis]), want)
            if align is not None:
                step = int(align[i][k])
                if step < 1:
                    raise call.error(f"argument 'align' sample {i}: alignment must be positive; "
                                     f"got {step}")  # fmt: skip
                extent = -(-extent // step) * step
            out[i, axis] = extent
    call.derive(
        "fill",
        wrap_fill(
            call.fill_value, inp.dtype.numpy_dtype, f"{call.schema.name}: argument 'fill_value'"
        ),
        per_sample=True,
    )
    return OutputSpec(inp.dtype, out, inp.layout)


schema = OpSchema(
    name="pad",
    doc="Pads the samples of a batch at the end of the selected axes so that they share "
    "extents (batch maximum, a minimum `shape`, and/or a multiple of `align`).",
    inputs=(Input("input", doc="Samples of any layout and dtype."),),
    args=(
        Arg(
            "axes",
            "int",
            per_sample=True,
            vector=True,
            doc="Axes to pad (negative allowed); default: all axes.",
        ),
        Arg("axis_names", "layout", doc="Axes to pad, by layout letter."),
        Arg(
            "shape",
            "int",
            per_sample=True,
            vector=True,
            doc="Minimum extent per padded axis; -1 = batch maximum; one value for all axes.",
        ),
        Arg(
            "align",
            "int",
            per_sample=True,
            vector=True,
            doc="Round padded extents up to a multiple of this (one value or one per axis).",
        ),
        Arg(
            "fill_value",
            "float",
            default=0.0,
            per_sample=True,
            doc="Padding value, converted to the dtype with wrap-around.",
        ),
    ),
    infer=_infer,
)
