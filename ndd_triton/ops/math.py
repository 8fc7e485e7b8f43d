"""`ndd.math.*`: elementwise math functions (DALI `ndd.math`, spec ops.md 4.13).

Float functions (`sqrt`, `exp`, trig, `log*`, `floor`, `ceil`, `fabs`, `rsqrt`, `cbrt`,
`atan2`, `fpow`) give float32 for integer or bool inputs and keep float32/float64. `abs` keeps
integer types (`abs(i8 -128) == -128`). `pow`, `min`, `max` and `clamp` follow the arithmetic
promotion, with Python scalars as constants (ints as int32, floats as float32), so
`clamp(u8, 10, 200)` is int32. Domain errors give NaN or inf, never an exception.

Difference from DALI: float16 inputs are supported (computed in float32, result float16) where
DALI raises.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ndd_triton.core.dtype import DType, float32
from ndd_triton.ops.arithmetic import (
    ArithmeticTypeError,
    binary_result,
    binary_schema,
    check_supported,
    compute_type,
    elementwise,
    infer_elementwise,
    promote_all,
    unary_result,
)
from ndd_triton.ops.schema import Call, Input, OpSchema, OutputSpec

FLOAT_UNARY = (
    "fabs", "sqrt", "rsqrt", "cbrt", "exp", "log", "log2", "log10", "sin", "cos", "tan", "asin",
    "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "floor", "ceil",
)  # fmt: skip
_UNARY_DOCS = {
    "abs": "Absolute value; integer types are kept (`abs(int8(-128)) == -128`).",
    "fabs": "Absolute value as a float.", "sqrt": "Square root.", "rsqrt": "1 / sqrt(x).",
    "cbrt": "Cube root.", "exp": "e ** x.", "log": "Natural logarithm.",
    "log2": "Base-2 logarithm.", "log10": "Base-10 logarithm.", "sin": "Sine (radians).",
    "cos": "Cosine (radians).", "tan": "Tangent (radians).", "asin": "Arcsine.",
    "acos": "Arccosine.", "atan": "Arctangent.", "sinh": "Hyperbolic sine.",
    "cosh": "Hyperbolic cosine.", "tanh": "Hyperbolic tangent.",
    "asinh": "Inverse hyperbolic sine.", "acosh": "Inverse hyperbolic cosine.",
    "atanh": "Inverse hyperbolic tangent.", "floor": "Round down.", "ceil": "Round up.",
}  # fmt: skip


def float_result(op: str, dtypes: Sequence[DType]) -> tuple[DType, DType]:
    """Float functions: integers and bools give float32; floats keep their type."""
    check_supported(op, dtypes)
    promoted = promote_all(dtypes)
    result = promoted if promoted.is_float else float32
    return result, compute_type(result)


def _same_promoted(op: str, dtypes: Sequence[DType]) -> tuple[DType, DType]:
    """min / max / clamp: arithmetic promotion of all operands."""
    check_supported(op, dtypes)
    promoted = promote_all(dtypes)
    return promoted, compute_type(promoted)


def _infer_with(name: str, result: Callable[[str, Sequence[DType]], tuple[DType, DType]]
                ) -> Callable[[Call], OutputSpec]:  # fmt: skip
    def infer(call: Call) -> OutputSpec:
        call.derive("base_op", name)
        return infer_elementwise(call, result)

    return infer


def _unary_schema(name: str) -> OpSchema:
    abs_rule = lambda op, d: unary_result("abs", d[0], op)
    rule = abs_rule if name == "abs" else float_result
    return OpSchema(name=f"math.{name}", doc=_UNARY_DOCS[name], module="math",
                    inputs=(Input("input", doc="Tensor, Batch or array."),), args=(),
                    infer=_infer_with(name, rule))  # fmt: skip


def _call(name: str, *operands: Any) -> Any:
    result = elementwise(_BY_NAME[name], operands)
    if result is NotImplemented:
        given = ", ".join(type(x).__name__ for x in operands)
        raise ArithmeticTypeError(f"{name}: operands must be Tensors, Batches, arrays or "
                                  f"numbers; got {given}")
    return result


def pow(base: Any, exponent: Any, /) -> Any:  # DALI's name (shadows the builtin here)
    """`base ** exponent` with arithmetic promotion (integers stay integral; x ** -n == 0)."""
    return _call("math.pow", base, exponent)


def fpow(base: Any, exponent: Any, /) -> Any:
    """`base ** exponent` computed in floating point (integers give float32)."""
    return _call("math.fpow", base, exponent)


def min(left: Any, right: Any, /) -> Any:  # DALI's name (shadows the builtin here)
    """Elementwise minimum, arithmetic promotion (Python ints act as int32)."""
    return _call("math.min", left, right)


def max(left: Any, right: Any, /) -> Any:  # DALI's name (shadows the builtin here)
    """Elementwise maximum, arithmetic promotion (Python ints act as int32)."""
    return _call("math.max", left, right)


def atan2(x: Any, y: Any, /) -> Any:
    """Arctangent of x / y using the signs of both to pick the quadrant (float result)."""
    return _call("math.atan2", x, y)


def clamp(value: Any, lo: Any, hi: Any, /) -> Any:
    """`min(max(value, lo), hi)` with arithmetic promotion of all three operands."""
    return _call("math.clamp", value, lo, hi)


def _pow_result(op: str, d: Sequence[DType]) -> tuple[DType, DType]:
    return binary_result("pow", d[0], d[1], op)


_BINARY: list[tuple[str, Callable[..., Any], tuple[str, ...], Any]] = [
    ("pow", pow, ("base", "exponent"), _pow_result),
    ("fpow", fpow, ("base", "exponent"), float_result),
    ("min", min, ("left", "right"), _same_promoted),
    ("max", max, ("left", "right"), _same_promoted),
    ("atan2", atan2, ("x", "y"), float_result),
    ("clamp", clamp, ("value", "lo", "hi"), _same_promoted),
]

schemas = [
    *(_unary_schema(n) for n in ("abs", *FLOAT_UNARY)),
    *(binary_schema(f"math.{n}", _infer_with(n, rule), fn.__doc__ or n, inputs=names,
                    public=True, function=fn, module="math")
      for n, fn, names, rule in _BINARY),
]  # fmt: skip
_BY_NAME = {s.name: s for s in schemas}
