"""Op codes and the per-element arithmetic of the elementwise kernels (`_elementwise.py`).

Operands arrive in the compute type CT (the promoted type; float32 for float16; uint8 for
bool). Integer `//` and `%` use Triton's C semantics (truncation, sign of the dividend); a zero
divisor gives 0 (the GPU does not check, see ops/arithmetic.py).
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

from ndd_triton.core.dtype import DType
from ndd_triton.kernels.gpu import _fmath as fm

# op codes (binary)
ADD, SUB, MUL, TRUEDIV, FLOORDIV, MOD, POW = (tl.constexpr(i) for i in range(7))
AND, OR, XOR, LSHIFT, RSHIFT = (tl.constexpr(i) for i in range(7, 12))
EQ, NE, LT, LE, GT, GE = (tl.constexpr(i) for i in range(12, 18))
MIN, MAX, ATAN2, FPOW = (tl.constexpr(i) for i in range(18, 22))
# op codes (unary)
NEG, POS, INVERT, NOT, ABS, SQRT, RSQRT, CBRT, EXP, LOG, LOG2, LOG10 = (
    tl.constexpr(i) for i in range(30, 42))  # fmt: skip
SIN, COS, TAN, ASIN, ACOS, ATAN, SINH, COSH, TANH, ASINH, ACOSH, ATANH, FLOOR, CEIL = (
    tl.constexpr(i) for i in range(42, 56))  # fmt: skip
CLAMP: tl.constexpr = tl.constexpr(60)

BINARY_CODES = {
    "add": ADD, "sub": SUB, "mul": MUL, "truediv": TRUEDIV, "floordiv": FLOORDIV, "mod": MOD,
    "pow": POW, "and": AND, "or": OR, "xor": XOR, "lshift": LSHIFT, "rshift": RSHIFT, "eq": EQ,
    "ne": NE, "lt": LT, "le": LE, "gt": GT, "ge": GE, "min": MIN, "max": MAX, "atan2": ATAN2,
    "fpow": FPOW,
}  # fmt: skip
UNARY_CODES = {
    "neg": NEG, "pos": POS, "invert": INVERT, "abs": ABS, "fabs": ABS, "sqrt": SQRT,
    "rsqrt": RSQRT, "cbrt": CBRT, "exp": EXP, "log": LOG, "log2": LOG2, "log10": LOG10,
    "sin": SIN, "cos": COS, "tan": TAN, "asin": ASIN, "acos": ACOS, "atan": ATAN, "sinh": SINH,
    "cosh": COSH, "tanh": TANH, "asinh": ASINH, "acosh": ACOSH, "atanh": ATANH, "floor": FLOOR,
    "ceil": CEIL,
}  # fmt: skip

_TL = {"bool": tl.uint8, "u8": tl.uint8, "u16": tl.uint16, "u32": tl.uint32, "u64": tl.uint64,
       "i8": tl.int8, "i16": tl.int16, "i32": tl.int32, "i64": tl.int64, "f32": tl.float32,
       "f64": tl.float64}  # fmt: skip


def compute_tl(dtype: DType) -> Any:
    """Triton compute type of a compute DType (bool computes as uint8)."""
    return _TL[dtype.name]


@triton.jit
def _helper_int_pow(a, b):
    """a ** b by squaring in a's integer type (wraps); negative exponents give 0.

    A runtime loop over the bits of the block's largest exponent (one reduction): small
    exponents take a few steps, and only one step's values are live (unrolled over every bit of
    the type, 64-bit pow kept 255 registers and spilled)."""
    zero = fm._helper_full_like(a, 0)
    one = fm._helper_full_like(a, 1)
    e = tl.where(b < 0, zero, b)
    r = one
    square = a
    bits = tl.max(e, axis=0)
    while bits != 0:
        r = tl.where((e & one) != 0, r * square, r)
        square = square * square
        e = e >> one
        bits = bits >> 1
    return tl.where(b < 0, zero, r)


@triton.jit
def _helper_binary_op(a, b, OP: tl.constexpr, IS_INT: tl.constexpr):
    """One binary op on operands already in the compute type."""
    if OP == ADD:
        r = a + b
    elif OP == SUB:
        r = a - b
    elif OP == MUL:
        r = a * b
    elif OP == TRUEDIV:
        r = a / b
    elif OP == FLOORDIV or OP == MOD:  # noqa: SIM109 (constexpr comparisons)
        if IS_INT:
            zero = b == 0
            safe = tl.where(zero, fm._helper_full_like(b, 1), b)
            if OP == FLOORDIV:  # noqa: SIM108 (a static if: Triton compiles one branch)
                q = a // safe
            else:
                q = a % safe
            r = tl.where(zero, fm._helper_full_like(a, 0), q)
        elif OP == FLOORDIV:
            r = a / b  # DALI: // on floats is a plain division
        else:
            r = a % b  # fmod
    elif OP == POW:
        if IS_INT:  # noqa: SIM108 (a static if: Triton compiles one branch)
            r = _helper_int_pow(a, b)
        else:
            r = fm._helper_fpow(a, b)
    elif OP == FPOW:
        r = fm._helper_fpow(a, b)
    elif OP == AND:
        r = a & b
    elif OP == OR:
        r = a | b
    elif OP == XOR:
        r = a ^ b
    elif OP == LSHIFT:
        r = a << b
    elif OP == RSHIFT:
        r = a >> b
    elif OP == EQ:
        r = a == b
    elif OP == NE:
        r = a != b
    elif OP == LT:
        r = a < b
    elif OP == LE:
        r = a <= b
    elif OP == GT:
        r = a > b
    elif OP == GE:
        r = a >= b
    elif OP == MIN:
        r = tl.where((a < b) | (a != a), a, b)  # NaN propagates, as np.minimum
    elif OP == MAX:
        r = tl.where((a > b) | (a != a), a, b)
    else:
        r = fm._helper_atan2(a, b)
    return r


@triton.jit
def _helper_unary_math(x, OP: tl.constexpr):
    """Float functions of ndd.math."""
    if OP == SQRT:
        r = tl.sqrt(x)
    elif OP == RSQRT:
        # DALI 2.4's float32 rsqrt is an approximation that gives NaN at +-0 (float64: +-inf)
        zero = x == 0
        r = fm._helper_full_like(x, 1.0) / tl.sqrt(tl.where(zero, 1.0, x).to(x.dtype))
        if x.dtype == tl.float32:
            r = tl.where(zero, float("nan"), r)
        else:
            r = tl.where(zero, tl.where(x.to(tl.int64, bitcast=True) < 0, float("-inf"),
                                        float("inf")), r)  # fmt: skip
    elif OP == CBRT:
        r = fm._helper_cbrt(x)
    elif OP == EXP:
        r = tl.exp(x)
    elif OP == LOG:
        r = tl.log(x)
    elif OP == LOG2:
        r = tl.log2(x)
    elif OP == LOG10:
        r = fm._helper_log10(x)
    elif OP == SIN:
        r = tl.sin(x)
    elif OP == COS:
        r = tl.cos(x)
    elif OP == TAN:
        r = fm._helper_tan(x)
    elif OP == ASIN:
        r = fm._helper_asin(x)
    elif OP == ACOS:
        r = fm._helper_acos(x)
    elif OP == ATAN:
        r = fm._helper_atan(x)
    elif OP == SINH:
        r = fm._helper_sinh(x)
    elif OP == COSH:
        r = fm._helper_cosh(x)
    elif OP == TANH:
        r = fm._helper_tanh(x)
    elif OP == ASINH:
        r = fm._helper_asinh(x)
    elif OP == ACOSH:
        r = fm._helper_acosh(x)
    elif OP == ATANH:
        r = fm._helper_atanh(x)
    elif OP == FLOOR:
        r = tl.floor(x)
    else:
        r = tl.ceil(x)
    return r


@triton.jit
def _helper_unary_op(x, OP: tl.constexpr):
    """One unary op on an operand already in the compute type."""
    if OP == NEG:
        r = fm._helper_full_like(x, 0) - x  # wraps for unsigned types, as DALI
    elif OP == POS:
        r = x
    elif OP == INVERT:
        r = ~x
    elif OP == NOT:
        r = x == 0
    elif OP == ABS:
        r = tl.abs(x)
    else:
        r = _helper_unary_math(x, OP)
    return r
