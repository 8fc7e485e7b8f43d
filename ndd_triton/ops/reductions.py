"""reductions.*: sum, mean, mean_square, rms, min, max, std_dev, variance (DALI `ndd.reductions`).

Every sample is reduced on its own over `axes` (default: all, giving a 0-D result). Result
dtypes follow DALI 2.4: `sum` widens integers to 64 bits (u64 / i64), the averages give f32,
`min`/`max` keep the input type; `dtype=` overrides the accumulation/output type (integer
accumulation wraps around). f16, f64 and bool inputs are rejected with RuntimeError as in DALI.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core import dtype as dt
from ndd_triton.ops._axes import drop_axes, resolve_axes
from ndd_triton.ops.schema import Arg, Call, Input, InputMeta, OpSchema, OutputSpec

SUPPORTED_INPUTS = (dt.int8, dt.int16, dt.int32, dt.int64, dt.uint8, dt.uint16, dt.uint32,
                    dt.uint64, dt.float32)  # fmt: skip
OUTPUT_DTYPES = (*SUPPORTED_INPUTS, dt.float64)
MEAN_DTYPES = (dt.float32, dt.float64)

# Kernel operation codes (shared with the CPU and GPU kernels).
SUM, MEAN, MEAN_SQUARE, RMS, MIN, MAX, VARIANCE, STD_DEV = range(8)
OP_CODES = {"sum": SUM, "mean": MEAN, "mean_square": MEAN_SQUARE, "rms": RMS, "min": MIN,
            "max": MAX, "variance": VARIANCE, "std_dev": STD_DEV}  # fmt: skip


def _check_input(call: Call, inp: InputMeta) -> None:
    if inp.dtype not in SUPPORTED_INPUTS:
        names = ", ".join(str(d) for d in SUPPORTED_INPUTS)
        raise call.error(f"Unsupported input type {inp.dtype} for input 0; expected one of "
                         f"{names}", RuntimeError)  # fmt: skip


def _output_dtype(call: Call, inp: InputMeta, op: int) -> dt.DType:
    given = call.values.get("dtype")
    if op in (MIN, MAX):
        return inp.dtype
    if op >= VARIANCE:
        return dt.float32
    if given is not None:
        if given not in OUTPUT_DTYPES:
            raise call.error(f"argument 'dtype' must be an integer type, float32 or float64; "
                             f"got {given}", RuntimeError)  # fmt: skip
        if inp.dtype.is_float and given.is_integer:
            raise call.error(f"argument 'dtype' {given} cannot hold a reduction of float "
                             f"input {inp.dtype}; use a float dtype", RuntimeError)  # fmt: skip
        return given  # type: ignore[no-any-return]
    if op == SUM and inp.dtype.is_integer:
        return dt.uint64 if inp.dtype.kind is dt.DType.Kind.unsigned else dt.int64
    return dt.float32


def _check_mean(call: Call, mean: InputMeta, keep: np.ndarray, squeezed: np.ndarray) -> None:
    if mean.dtype not in MEAN_DTYPES:
        raise call.error(f"input 'mean' must be float32 or float64; got {mean.dtype}",
                         RuntimeError)  # fmt: skip
    for i in range(len(keep)):
        shape = tuple(int(e) for e in mean.shapes[i])
        if int(np.prod(shape)) == 1:
            continue
        if shape not in (tuple(int(e) for e in keep[i]), tuple(int(e) for e in squeezed[i])):
            raise call.error(f"input 'mean' sample {i}: shape {shape} does not match the reduced "
                             f"shape {tuple(int(e) for e in squeezed[i])} (with or without kept "
                             "dims) and is not a scalar")  # fmt: skip


def _infer(call: Call) -> OutputSpec:
    inp = call.inputs[0]
    _check_input(call, inp)
    op = OP_CODES[call.schema.short_name]
    axes = resolve_axes(call, call.axes, call.axis_names, inp.ndim, inp.layout)
    axes = sorted(range(inp.ndim) if axes is None else axes)
    keep = inp.shapes.copy()
    keep[:, axes] = 1
    squeezed = inp.shapes[:, [a for a in range(inp.ndim) if a not in axes]]
    if op >= VARIANCE:
        _check_mean(call, call.inputs[1], keep, squeezed)
        if call.ddof < 0:
            raise call.error(f"argument 'ddof' must be non-negative; got {call.ddof}")
    call.derive("reduce_axes", tuple(axes))
    call.derive("op_code", op)
    shapes = keep if call.keep_dims else squeezed
    return OutputSpec(_output_dtype(call, inp, op), shapes.astype(np.int64),
                      drop_axes(inp.layout, axes, call.keep_dims))  # fmt: skip


_AXES = Arg("axes", "int", vector=True, doc="Axes to reduce (negative allowed); default: all.")
_AXIS_NAMES = Arg("axis_names", "layout", doc="Axes to reduce, by layout letter.")
_KEEP = Arg("keep_dims", "bool", default=False, doc="Keep reduced axes with extent 1.")
_DTYPE = Arg("dtype", "dtype", doc="Accumulation and output type (integers wrap around).")
_DDOF = Arg("ddof", "int", default=0, doc="Delta degrees of freedom: the divisor is N - ddof.")

_DOCS = {
    "sum": "Sum of the elements over `axes`; integers accumulate in 64 bits by default.",
    "mean": "Arithmetic mean over `axes` (float32 unless `dtype` says otherwise).",
    "mean_square": "Mean of the squared elements over `axes`.",
    "rms": "Root mean square over `axes`.",
    "min": "Minimum over `axes` (input dtype).",
    "max": "Maximum over `axes` (input dtype).",
    "std_dev": "Standard deviation around the given `mean` over `axes`: sqrt(ssd / (N - ddof)).",
    "variance": "Variance around the given `mean` over `axes`: ssd / (N - ddof).",
}


def _schema(name: str) -> OpSchema:
    if name in ("std_dev", "variance"):
        inputs: tuple[Input, ...] = (
            Input("data", doc="Samples to reduce."),
            Input(
                "mean",
                doc="Mean over the same axes: a scalar or the reduced shape "
                "(with or without kept dims), float.",
            ),
        )
        args: tuple[Arg, ...] = (_AXES, _AXIS_NAMES, _DDOF, _KEEP)
    else:
        inputs = (Input("input", doc="Samples to reduce."),)
        args = (_AXES, _AXIS_NAMES, _KEEP) if name in ("min", "max") else \
            (_AXES, _AXIS_NAMES, _DTYPE, _KEEP)  # fmt: skip
    return OpSchema(name=f"reductions.{name}", doc=_DOCS[name], inputs=inputs, args=args,
                    infer=_infer, module="reductions")  # fmt: skip


schemas = [_schema(name) for name in OP_CODES]
