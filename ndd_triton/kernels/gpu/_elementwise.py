"""Generic elementwise Triton kernels (unary, binary, ternary), specialised by an op code.

One launch per op call for the whole ragged batch. Each program handles one tile of one output
sample (tile table rows `(sample, first)`). The sample table holds, per sample: the output
size, offset and shape (left-padded to rank 6), and per operand its offset and its strides
against the output (0 on broadcast axes). Each operand is read in one of three modes chosen on
the host for the whole batch: DENSE (same shape as the output, index = output index),
BROADCAST (output index unravelled over the output shape, dotted with the strides) and SCALAR
(a constant: a one-element array uploaded with the tables, index 0).

Operands are converted to the compute type CT (the promoted type; float32 for float16; uint8
for bool), the op is applied, and the result is converted to the output type on store.
Integer `//` and `%` use Triton's C semantics (truncation, sign of the dividend); a zero
divisor gives 0 (the GPU does not check, see ops/arithmetic.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import triton
import triton.language as tl

from ndd_triton.core.dtype import DType
from ndd_triton.kernels.gpu import _fmath as fm
from ndd_triton.kernels.gpu._common import padded_shapes
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun, tile_table
from ndd_triton.ops.schema import Call

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

# sample table columns (binary/ternary): size, output offset, output shape, then per operand
# its offset and 6 strides
SIZE: tl.constexpr = tl.constexpr(0)
OUT_OFF: tl.constexpr = tl.constexpr(1)
OUT_SHAPE: tl.constexpr = tl.constexpr(2)
OPERAND: tl.constexpr = tl.constexpr(8)  # operand k: offset at OPERAND + 7k, strides after
NCOL2: tl.constexpr = tl.constexpr(22)
NCOL3: tl.constexpr = tl.constexpr(29)
# unary sample table: size, input offset, output offset
IN_OFF_U: tl.constexpr = tl.constexpr(1)
OUT_OFF_U: tl.constexpr = tl.constexpr(2)
NCOL1: tl.constexpr = tl.constexpr(3)
DENSE, BROADCAST, SCALAR = 0, 1, 2
TILE = 1024

_TL = {"bool": tl.uint8, "u8": tl.uint8, "u16": tl.uint16, "u32": tl.uint32, "u64": tl.uint64,
       "i8": tl.int8, "i16": tl.int16, "i32": tl.int32, "i64": tl.int64, "f32": tl.float32,
       "f64": tl.float64}  # fmt: skip


@triton.jit
def _helper_src_index(row, idx, COL: tl.constexpr, MODE: tl.constexpr):
    """Element index inside one operand for flat output indices `idx`."""
    if MODE == 0:
        src = idx
    elif MODE == 2:
        src = idx * 0
    else:
        rem = idx
        src = idx * 0
        for d in tl.static_range(6):
            axis = 5 - d
            extent = tl.load(row + OUT_SHAPE + axis)
            src += (rem % extent) * tl.load(row + COL + 1 + axis)
            rem = rem // extent
    return src


@triton.jit
def _helper_int_pow(a, b, BITS: tl.constexpr):
    """a ** b by squaring in a's integer type (wraps); negative exponents give 0."""
    one = fm._helper_full_like(a, 1)
    r = one
    square = a
    e = b
    for _ in tl.static_range(BITS):
        r = tl.where((e & one) != 0, r * square, r)
        square = square * square
        e = e >> one
    return tl.where(b < 0, fm._helper_full_like(a, 0), r)


@triton.jit
def _helper_binary_op(a, b, OP: tl.constexpr, IS_INT: tl.constexpr, BITS: tl.constexpr):
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
            r = _helper_int_pow(a, b, BITS)
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
def _helper_store(dst, index, r, mask, OUT_BOOL: tl.constexpr):
    if OUT_BOOL:
        r = r != 0
    tl.store(dst + index, r.to(dst.dtype.element_ty), mask=mask)


@triton.jit
def _unary_kernel(src, dst, samples, tiles, OP: tl.constexpr, CT: tl.constexpr,
                  OUT_BOOL: tl.constexpr, BLOCK: tl.constexpr):
    """out = op(in) over one tile of one sample (no broadcasting)."""
    sample = tl.load(tiles + 2 * tl.program_id(0))
    first = tl.load(tiles + 2 * tl.program_id(0) + 1)
    row = samples + sample * NCOL1
    idx = first + tl.arange(0, BLOCK).to(tl.int64)
    mask = idx < tl.load(row + SIZE)
    x = tl.load(src + tl.load(row + IN_OFF_U) + idx, mask=mask, other=0).to(CT)
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
    _helper_store(dst, tl.load(row + OUT_OFF_U) + idx, r, mask, OUT_BOOL)


@triton.jit
def _binary_kernel(a_ptr, b_ptr, dst, samples, tiles, OP: tl.constexpr, CT: tl.constexpr,
                   MODE_A: tl.constexpr, MODE_B: tl.constexpr, IS_INT: tl.constexpr,
                   BITS: tl.constexpr, OUT_BOOL: tl.constexpr, BLOCK: tl.constexpr):
    """out = a <op> b over one tile of one output sample, operands broadcast per MODE."""
    sample = tl.load(tiles + 2 * tl.program_id(0))
    first = tl.load(tiles + 2 * tl.program_id(0) + 1)
    row = samples + sample * NCOL2
    idx = first + tl.arange(0, BLOCK).to(tl.int64)
    mask = idx < tl.load(row + SIZE)
    ia = tl.load(row + OPERAND) + _helper_src_index(row, idx, OPERAND, MODE_A)
    ib = tl.load(row + OPERAND + 7) + _helper_src_index(row, idx, OPERAND + 7, MODE_B)
    a = tl.load(a_ptr + ia, mask=mask, other=0).to(CT)
    b = tl.load(b_ptr + ib, mask=mask, other=1).to(CT)
    r = _helper_binary_op(a, b, OP, IS_INT, BITS)
    _helper_store(dst, tl.load(row + OUT_OFF) + idx, r, mask, OUT_BOOL)


@triton.jit
def _clamp_kernel(v_ptr, lo_ptr, hi_ptr, dst, samples, tiles, CT: tl.constexpr,
                  MODE_V: tl.constexpr, MODE_LO: tl.constexpr, MODE_HI: tl.constexpr,
                  OUT_BOOL: tl.constexpr, BLOCK: tl.constexpr):
    """out = min(max(value, lo), hi) over one tile of one output sample."""
    sample = tl.load(tiles + 2 * tl.program_id(0))
    first = tl.load(tiles + 2 * tl.program_id(0) + 1)
    row = samples + sample * NCOL3
    idx = first + tl.arange(0, BLOCK).to(tl.int64)
    mask = idx < tl.load(row + SIZE)
    iv = tl.load(row + OPERAND) + _helper_src_index(row, idx, OPERAND, MODE_V)
    ilo = tl.load(row + OPERAND + 7) + _helper_src_index(row, idx, OPERAND + 7, MODE_LO)
    ihi = tl.load(row + OPERAND + 14) + _helper_src_index(row, idx, OPERAND + 14, MODE_HI)
    v = tl.load(v_ptr + iv, mask=mask, other=0).to(CT)
    lo = tl.load(lo_ptr + ilo, mask=mask, other=0).to(CT)
    hi = tl.load(hi_ptr + ihi, mask=mask, other=0).to(CT)
    r = _helper_binary_op(_helper_binary_op(v, lo, MAX, False, 8), hi, MIN, False, 8)
    _helper_store(dst, tl.load(row + OUT_OFF) + idx, r, mask, OUT_BOOL)


# ---- host side --------------------------------------------------------------------------------
def compute_tl(dtype: DType) -> Any:
    """Triton compute type of a compute DType (bool computes as uint8)."""
    return _TL[dtype.name]


def _compute_np(dtype: DType) -> np.dtype[Any]:
    return np.dtype(np.uint8) if dtype.name == "bool" else dtype.numpy_dtype


def _contiguous_strides(shapes: np.ndarray) -> np.ndarray:
    strides = np.ones_like(shapes)
    strides[:, :-1] = np.cumprod(shapes[:, :0:-1], axis=1)[:, ::-1]
    return np.where(shapes == 1, 0, strides)


def _operand_columns(x: GpuBatch | None, out_shapes: np.ndarray) -> tuple[np.ndarray, int]:
    """Offset + 6 strides per sample, and the operand's read mode."""
    n = len(out_shapes)
    if x is None:
        return np.zeros((n, 7), np.int64), SCALAR
    shapes = padded_shapes(x.shapes)
    mode = DENSE if np.array_equal(shapes, out_shapes) else BROADCAST
    return np.concatenate([x.offsets[:, None], _contiguous_strides(shapes)], axis=1), mode


def operand_pointer(x: GpuBatch | None, name: str, call: Call, compute: DType) -> Any:
    """The data buffer of an operand, or its constant as a one-element host array."""
    if x is not None:
        return x.data
    const = call.values[f"{name}_constant"]
    return np.array([const.value]).astype(_compute_np(compute))


def launch_elementwise(run: GpuRun, out: GpuBatch, operands: list[GpuBatch | None], call: Call,
                       op: str) -> None:  # fmt: skip
    """Build the tables and launch the unary, binary or clamp kernel once for the batch."""
    # The Triton interpreter evaluates kernels with NumPy: IEEE inf/nan results, integer
    # wrap-around and masked-off lanes must not turn into (error-level) warnings.
    with np.errstate(all="ignore"):
        _launch(run, out, operands, call, op)


def _launch(run: GpuRun, out: GpuBatch, operands: list[GpuBatch | None], call: Call, op: str
            ) -> None:  # fmt: skip
    compute: DType = call.compute_dtype
    ct = compute_tl(compute)
    out_bool = out.dtype.name == "bool" and compute.name == "bool"
    tiles = tile_table(out.sizes, TILE)
    names = [spec.name for spec in call.schema.inputs]
    if len(operands) == 1:
        (x,) = operands
        assert x is not None
        samples = np.stack([out.sizes, x.offsets, out.offsets], axis=1)
        code = NOT if op == "invert" and compute.name == "bool" else UNARY_CODES[op]
        code = code.value  # launch meta-arguments are plain values
        run.launch(_unary_kernel, (len(tiles),), x.data, out.data, samples, tiles, OP=code,
                   CT=ct, OUT_BOOL=out_bool, BLOCK=TILE)  # fmt: skip
        return
    out_shapes = padded_shapes(out.shapes)
    columns, modes = [], []
    for x in operands:
        cols, mode = _operand_columns(x, out_shapes)
        columns.append(cols)
        modes.append(mode)
    samples = np.concatenate([out.sizes[:, None], out.offsets[:, None], out_shapes, *columns],
                             axis=1)  # fmt: skip
    pointers = [operand_pointer(x, n, call, compute) for x, n in zip(operands, names, strict=True)]
    if op == "clamp":
        run.launch(_clamp_kernel, (len(tiles),), *pointers, out.data, samples, tiles, CT=ct,
                   MODE_V=modes[0], MODE_LO=modes[1], MODE_HI=modes[2], OUT_BOOL=out_bool,
                   BLOCK=TILE)  # fmt: skip
        return
    is_int = compute.is_integer or compute.name == "bool"
    run.launch(_binary_kernel, (len(tiles),), *pointers, out.data, samples, tiles,
               OP=BINARY_CODES[op].value, CT=ct, MODE_A=modes[0], MODE_B=modes[1], IS_INT=is_int,
               BITS=max(compute.bits, 8), OUT_BOOL=out_bool, BLOCK=TILE)  # fmt: skip
