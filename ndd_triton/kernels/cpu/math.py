"""`ndd.math.*` on the CPU: NumPy functions on one sample in the compute type (fp32 or fp64)."""

from __future__ import annotations

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.kernels.cpu.arithmetic import Fn, int_power, make_cpu_kernel
from ndd_triton.ops import math


def _rsqrt(x: np.ndarray) -> np.ndarray:
    """1 / sqrt(x); DALI 2.4's float32 version (an approximation) gives NaN at +-0."""
    r = np.reciprocal(np.sqrt(x))
    return np.where(x == 0, np.float32(np.nan), r) if x.dtype == np.float32 else r


def _pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return int_power(a, b) if a.dtype.kind in "iu" else np.power(a, b)


def _clamp(value: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.minimum(np.maximum(value, lo), hi)


FUNCTIONS: dict[str, Fn] = {
    "abs": np.abs, "fabs": np.abs, "sqrt": np.sqrt, "rsqrt": _rsqrt, "cbrt": np.cbrt,
    "exp": np.exp, "log": np.log, "log2": np.log2, "log10": np.log10, "sin": np.sin,
    "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "floor": np.floor, "ceil": np.ceil,
    "pow": _pow, "fpow": np.power, "min": np.minimum, "max": np.maximum,
    "atan2": np.arctan2, "clamp": _clamp,
}  # fmt: skip

for _schema in math.schemas:
    register(_schema, "cpu")(make_cpu_kernel(_schema, FUNCTIONS[_schema.short_name]))
