"""Constant generators: zeros, ones, full and their `_like` forms (core.md §18).

`zeros`/`ones` take no input (the batch size comes from `batch_size=` or a per-sample `shape`),
default to int32 and a scalar shape. `full` takes the fill value as a positional input whose
dtype becomes the output's; it broadcasts NumPy-style to `shape`. `full_like` converts the fill
value to the dtype of `data_like` with DALI's round + saturate rule.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core.dtype import int32
from ndd_triton.ops._tensor_args import sample_rows
from ndd_triton.ops.cast import CASTABLE
from ndd_triton.ops.schema import Arg, Call, Input, InputMeta, OpSchema, OutputSpec


def _check_dtype(call: Call) -> None:
    if call.dtype is not None and call.dtype not in CASTABLE:
        raise call.error(f"argument 'dtype' is {call.dtype}; supported: "
                         f"{', '.join(str(d) for d in CASTABLE)}", TypeError)  # fmt: skip


def _requested_shapes(call: Call) -> np.ndarray | None:
    """`shape=` as `[N, ndim]` (None when not given)."""
    if call.shape is None:
        return None
    rows = sample_rows(call.shape, call.batch_size)
    if len({len(r) for r in rows}) > 1:
        raise call.error("argument 'shape' must give every sample the same number of "
                         f"dimensions; got {[len(r) for r in rows]}")  # fmt: skip
    shapes = np.array(rows, dtype=np.int64).reshape(call.batch_size, -1 if rows else 0)
    if (shapes < 0).any():
        i = int(np.flatnonzero((shapes < 0).any(axis=1))[0])
        raise call.error(f"argument 'shape' sample {i}: extents must be non-negative; got "
                         f"{tuple(int(v) for v in shapes[i])}")  # fmt: skip
    return shapes


def _layout(call: Call, ndim: int, fallback: str | None) -> str | None:
    if call.layout is None or call.layout == "":
        return fallback if fallback is not None and len(fallback) == ndim else None
    if len(call.layout) != ndim:
        raise call.error(f"argument 'layout' {call.layout!r} has {len(call.layout)} letters "
                         f"but the output has {ndim} dimensions")  # fmt: skip
    return str(call.layout)


def broadcast_strides(call: Call, fill: InputMeta, target: np.ndarray) -> np.ndarray:
    """`[N, ndim]` element strides reading the fill sample broadcast to `target` (0: repeated)."""
    n, ndim = target.shape
    strides = np.zeros((n, ndim), dtype=np.int64)
    for i in range(n):
        src = [int(v) for v in fill.shapes[i]]
        dst = [int(v) for v in target[i]]
        lead = ndim - len(src)
        if lead < 0 or any(s not in (1, d) for s, d in zip(src, dst[lead:], strict=False)):
            shown = lambda s: " x ".join(map(str, s)) or "()"
            raise call.error(f"sample {i}: Shapes {shown(dst)} and {shown(src)} can't be "
                             "broadcast (argument 'shape' and input 'fill_value')",
                             RuntimeError)  # fmt: skip
        step = 1
        for d in range(len(src) - 1, -1, -1):
            strides[i, lead + d] = step if src[d] != 1 else 0
            step *= src[d]
    return strides


def _infer_constant(call: Call) -> OutputSpec:
    _check_dtype(call)
    shapes = _requested_shapes(call)
    if shapes is None:
        shapes = np.zeros((call.batch_size, 0), dtype=np.int64)
    return OutputSpec(call.dtype or int32, shapes, _layout(call, shapes.shape[1], None))


def _infer_full(call: Call) -> OutputSpec:
    fill = call.inputs[0]
    shapes = _requested_shapes(call)
    if shapes is None:
        shapes = fill.shapes.copy()
    call.derive("fill_strides", broadcast_strides(call, fill, shapes), per_sample=True)
    return OutputSpec(fill.dtype, shapes, _layout(call, shapes.shape[1], fill.layout))


def _infer_like(call: Call) -> OutputSpec:
    _check_dtype(call)
    like = call.inputs[0]
    return OutputSpec(call.dtype or like.dtype, like.shapes.copy(), like.layout)


def _infer_full_like(call: Call) -> OutputSpec:
    like, fill = call.inputs
    call.derive("fill_strides", broadcast_strides(call, fill, like.shapes), per_sample=True)
    return OutputSpec(like.dtype, like.shapes.copy(), like.layout)


_SHAPE = Arg(
    "shape",
    "int",
    vector=True,
    per_sample=True,
    doc="Output shape (default: scalar); a Tensor or Batch gives it per sample.",
)
_LAYOUT = Arg("layout", "layout", doc="Output layout (must match the number of dimensions).")
_DTYPE = Arg("dtype", "dtype", doc="Output data type.")
_LIKE = Input("data_like", doc="Provides the shape, layout (and dtype) of the output.")
_FILL = Input("fill_value", dtypes=CASTABLE, doc="Fill value; broadcast NumPy-style.")


def _generator(name: str, doc: str) -> OpSchema:
    return OpSchema(name=name, doc=doc, inputs=(),
                    args=(_SHAPE, Arg("dtype", "dtype", default=int32, doc="Output data type."),
                          _LAYOUT),
                    infer=_infer_constant, module="constants")  # fmt: skip


zeros = _generator("zeros", "A batch (or tensor) of zeros of the given shape and dtype.")
ones = _generator("ones", "A batch (or tensor) of ones of the given shape and dtype.")
full = OpSchema(
    name="full",
    doc="Fills samples of `shape` with `fill_value` (its dtype; without `shape`, its shape).",
    inputs=(_FILL,),
    args=(_SHAPE, _LAYOUT),
    infer=_infer_full,
    module="constants",
)
zeros_like = OpSchema(
    name="zeros_like",
    doc="Zeros with the shape, layout and (unless `dtype`) dtype of the input.",
    inputs=(_LIKE,),
    args=(_DTYPE,),
    infer=_infer_like,
    module="constants",
)
ones_like = OpSchema(
    name="ones_like",
    doc="Ones with the shape, layout and (unless `dtype`) dtype of the input.",
    inputs=(_LIKE,),
    args=(_DTYPE,),
    infer=_infer_like,
    module="constants",
)
full_like = OpSchema(
    name="full_like",
    doc="Fills the shape of `data_like` with `fill_value` converted to `data_like`'s dtype "
    "(round half away from zero, saturate).",
    inputs=(_LIKE, _FILL),
    args=(),
    infer=_infer_full_like,
    module="constants",
)

schemas = [zeros, ones, full, zeros_like, ones_like, full_like]
