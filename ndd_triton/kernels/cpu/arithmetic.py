"""Arithmetic operators on the CPU: NumPy ufuncs on one sample, operands cast to the compute type.

Operands broadcast with NumPy rules (infer already checked the shapes); a constant operand is
a 0-d array. Integer `//` truncates toward zero and `%` is `fmod` (C semantics, as DALI);
integer `**` uses exponentiation by squaring with wrap-around and gives 0 for negative exponents.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops import arithmetic
from ndd_triton.ops.schema import OpSchema, SampleArgs

Fn = Callable[..., np.ndarray]


def trunc_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer division rounding toward zero (C), not NumPy's floor division."""
    q = np.floor_divide(a, b)
    if a.dtype.kind == "u":
        return q
    inexact = (np.fmod(a, b) != 0) & ((a < 0) != (b < 0))
    return q + inexact.astype(q.dtype)


def int_power(base: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """Integer power by squaring in the operands' type (wraps); negative exponents give 0."""
    base, exponent = np.broadcast_arrays(base, exponent)
    result = np.ones(base.shape, base.dtype)
    negative = exponent < 0
    e = np.where(negative, 0, exponent)
    square = base.copy()
    while np.any(e):
        result = np.where((e & 1) != 0, result * square, result)
        square = square * square
        e = e >> 1
    return np.where(negative, np.zeros((), base.dtype), result)


def _floordiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return trunc_divide(a, b) if a.dtype.kind in "iu" else np.true_divide(a, b)  # DALI quirk


def _power(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return int_power(a, b) if a.dtype.kind in "iu" else np.power(a, b)


def _shift(ufunc: Any) -> Fn:
    def shift(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if a.dtype.kind == "b":  # bool << bool: computed on 0/1 integers, then != 0
            a, b = a.astype(np.uint8), b.astype(np.uint8)
        return ufunc(a, b)  # type: ignore[no-any-return]

    return shift


def _invert(a: np.ndarray) -> np.ndarray:
    return np.logical_not(a) if a.dtype.kind == "b" else np.invert(a)


BINARY: dict[str, Fn] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
    "floordiv": _floordiv, "mod": np.fmod, "pow": _power, "and": np.bitwise_and,
    "or": np.bitwise_or, "xor": np.bitwise_xor, "lshift": _shift(np.left_shift),
    "rshift": _shift(np.right_shift), "eq": np.equal, "ne": np.not_equal, "lt": np.less,
    "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
}  # fmt: skip
UNARY: dict[str, Fn] = {"neg": np.negative, "pos": np.positive, "invert": _invert,
                        "abs": np.abs}  # fmt: skip


def operand(x: np.ndarray | None, name: str, arg: SampleArgs, compute: np.dtype[Any]
            ) -> np.ndarray:  # fmt: skip
    """One operand in the compute type: a sample, or the constant given for input `name`."""
    if x is None:
        return np.asarray(getattr(arg, f"{name}_constant").value).astype(compute)
    return x.astype(compute, copy=False)


def make_cpu_kernel(schema: OpSchema, fn: Fn) -> Callable[..., None]:
    """A per-sample CPU kernel applying `fn` to the schema's operands (inputs or constants)."""
    names = [spec.name for spec in schema.inputs]
    op = schema.name

    def kernel(out: np.ndarray, *rest: Any) -> None:
        *samples, arg = rest
        compute = arg.compute_dtype.numpy_dtype
        values = [operand(x, n, arg, compute) for x, n in zip(samples, names, strict=True)]
        if arg.check_zero_division and np.any(values[1] == 0):
            raise ValueError(f"{op}: Integer division by zero.")
        with np.errstate(all="ignore"):  # IEEE inf/nan and integer wrap-around are intended
            if isinstance(fn, np.ufunc):  # straight into the output: no temporary, no copy
                fn(*values, out=out, casting="unsafe")
            else:
                out[...] = fn(*values)

    kernel.__name__ = kernel.__qualname__ = f"{schema.module}_{schema.short_name.strip('_')}_cpu"
    return kernel


for _schema in arithmetic.schemas:
    _name = _schema.name.strip("_")
    # dense: uniform batches of equal-shape operands run as one NumPy call (elementwise).
    _fn = BINARY.get(_name) or UNARY[_name]
    register(_schema, "cpu", dense=True)(make_cpu_kernel(_schema, _fn))
