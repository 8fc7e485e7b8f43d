"""Arithmetic operators behind the Tensor/Batch dunders (`+ - * / // % ** & | ^ << >>`,
comparisons, unary `- + ~ abs()`), with DALI 2.4's type promotion and quirks.

Promotion (spec core.md 3.1, checked against `dtype_promotion.json` by the tests): a bool
operand takes the other operand's type; a float wins at its own width (`i64 + f32 -> f32`);
integers of one signedness give the wider type; mixed signedness gives a signed type wide
enough for both (`u8 + i8 -> i16`, `u32 + i32 -> i64`, `u64 + i* -> i64`). `/` gives float32
for integers. Comparisons give bool. Bitwise ops and shifts reject floats; `+ - / // % **` and
unary `-`/`abs` reject two bools.

Python and NumPy scalars become constant *arguments* of the op, not inputs (a non-ndd input
would force synchronous evaluation). A Python `int` acts as int32 (an OverflowError at the call
when it does not fit), a `float` as float32 (its value is kept in double precision, so
`f64 + 0.1` is exact), a `bool` as the other operand's type, a NumPy scalar as its dtype.

Quirks kept from DALI: same-type integer `+ - *` wrap around; integer `//` truncates toward
zero and `%` takes the dividend's sign (C); `//` on floats is a plain division and float `%`
is `fmod`; an integer `**` with a negative exponent is 0.

Deliberate differences from DALI:
* float16 operands are supported (DALI's CPU backend raises): they are computed in float32 and
  the result is rounded to float16 when float16 is the promoted type.
* Integer division by zero (`//`, `%` with integer operands) raises
  `ValueError("... Integer division by zero.")` as in DALI (an operator check: at the call in
  sync modes, where the result is consumed in eager/deferred), for a constant divisor and, on
  the CPU, for a data divisor. The GPU backend does not
  check data divisors (that would need a device synchronisation per call): there `x // 0` and
  `x % 0` give 0. Integer `/` divides in float32 (DALI 2.4 too): `x / 0` gives inf, -inf or
  NaN on both backends.
* Broadcast and type errors surface like every operator check (at the call in sync modes,
  where the result is consumed in eager/deferred). Their exception classes derive from both
  the Python-conventional type (ValueError/TypeError) and DALI's RuntimeError.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ndd_triton.core import operators
from ndd_triton.core.batch import Batch
from ndd_triton.core.construct import as_tensor
from ndd_triton.core.dtype import DType, bfloat16, bool_, float32, int16, int32, int64
from ndd_triton.core.tensor import Tensor
from ndd_triton.ops import calls
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec


class ArithmeticTypeError(TypeError, RuntimeError):
    """Unsupported operand types; a RuntimeError too, as DALI raises."""


class BroadcastError(ValueError, RuntimeError):
    """Operand shapes or layouts that cannot be broadcast; a RuntimeError too, as in DALI."""


BINARY_SYMBOLS = {
    "add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%",
    "pow": "**", "and": "&", "or": "|", "xor": "^", "lshift": "<<", "rshift": ">>",
    "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
}  # fmt: skip
UNARY_SYMBOLS = {"neg": "-", "pos": "+", "invert": "~", "abs": "abs()"}
ARITH = ("add", "sub", "mul", "floordiv", "mod", "pow")
BITWISE = ("and", "or", "xor", "lshift", "rshift")
COMPARE = ("eq", "ne", "lt", "le", "gt", "ge")
INT_DIVISION = ("floordiv", "mod")  # integer `/` divides in float: x / 0 -> inf / nan (DALI)
_SIGNED_BY_BITS = {16: int16, 32: int32, 64: int64}
_INT32 = np.iinfo(np.int32)
MAX_GPU_RANK = 6  # kernels/gpu/_common.MAX_RANK (ops do not import kernels)


@dataclass(frozen=True, slots=True)
class Constant:
    """A scalar operand: its value (full precision) and the dtype it takes part in promotion as."""

    value: bool | int | float
    dtype: DType

    def __repr__(self) -> str:
        return f"{self.value!r} ({self.dtype})"


# ---- promotion --------------------------------------------------------------------------------
def promote(a: DType, b: DType) -> DType:
    """DALI's binary type promotion of two operand types."""
    if a == b:
        return a
    if a.kind is DType.Kind.bool:
        return b
    if b.kind is DType.Kind.bool:
        return a
    if a.is_float or b.is_float:
        if a.is_float and b.is_float:
            return a if a.bits >= b.bits else b
        return a if a.is_float else b
    if a.kind is b.kind:
        return a if a.bits >= b.bits else b
    signed, unsigned = (a, b) if a.kind is DType.Kind.signed else (b, a)
    if signed.bits > unsigned.bits:
        return signed
    return _SIGNED_BY_BITS[min(64, 2 * unsigned.bits)]


def promote_all(dtypes: Sequence[DType]) -> DType:
    """Promotion folded over several operands (clamp)."""
    result = dtypes[0]
    for d in dtypes[1:]:
        result = promote(result, d)
    return result


def compute_type(dtype: DType) -> DType:
    """The type kernels compute in: float16 is computed in float32."""
    return float32 if dtype.is_float and dtype.bits < 32 else dtype


def check_supported(op: str, dtypes: Sequence[DType]) -> None:
    """Reject enum pseudo-types and bfloat16 (no NumPy type, no fp32-free kernels)."""
    for d in dtypes:
        if d.kind is DType.Kind.enum or d == bfloat16:
            raise ArithmeticTypeError(f"{op}: data type {d} is not supported by arithmetic "
                                      "operators; cast it first (e.g. to float32)")


@functools.lru_cache(maxsize=4096)  # pure in its hashable arguments; errors are not cached
def binary_result(name: str, a: DType, b: DType, op: str = "") -> tuple[DType, DType]:
    """(result dtype, compute dtype) of `a <name> b`; raises ArithmeticTypeError if DALI does.

    `name` is the operator (add, ..., ge); `op` the schema name used in messages.
    """
    op = op or name
    what = f"{op}: operator {BINARY_SYMBOLS.get(name, name)}"
    check_supported(op, (a, b))
    both_bool = a.kind is DType.Kind.bool and b.kind is DType.Kind.bool
    promoted = promote(a, b)
    if name in COMPARE:
        return bool_, compute_type(promoted)
    if name in BITWISE:
        if a.is_float or b.is_float:
            raise ArithmeticTypeError(f"{what} expects integer or bool operands; got {a} and {b}")
        return promoted, promoted
    if both_bool and name != "mul":
        raise ArithmeticTypeError(f"{what} does not accept two bool operands (booleans are not "
                                  "allowed in arithmetic; use *, &, | or ^)")
    if name == "truediv":
        result = promoted if promoted.is_float else float32
        return result, compute_type(result)
    return promoted, compute_type(promoted)


@functools.lru_cache(maxsize=1024)
def unary_result(name: str, a: DType, op: str = "") -> tuple[DType, DType]:
    """(result dtype, compute dtype) of a unary operator (neg, pos, invert, abs)."""
    op = op or name
    check_supported(op, (a,))
    symbol = UNARY_SYMBOLS.get(name, name)
    if a.kind is DType.Kind.bool and name in ("neg", "abs"):
        raise ArithmeticTypeError(f"{op}: operator {symbol} does not accept a bool operand")
    if a.is_float and name == "invert":
        raise ArithmeticTypeError(f"{op}: operator ~ expects an integer or bool operand; got {a}")
    return a, compute_type(a)


# ---- operands -----------------------------------------------------------------------------------
def is_scalar(x: Any) -> bool:
    """Python bool/int/float or a NumPy scalar: becomes a Constant argument."""
    return isinstance(x, bool | int | float | np.bool_ | np.integer | np.floating)


def _operand_dtype(x: Any) -> DType | None:
    """The dtype a non-scalar operand will have, without waiting for or converting its data."""
    dtype = getattr(x, "dtype", None)
    if isinstance(dtype, DType):
        return dtype
    try:
        return DType.from_fw_type(dtype) if dtype is not None else None
    except TypeError:
        return None


def make_constant(name: str, value: Any, other: DType | None) -> Constant:
    """A scalar operand as a Constant with DALI's dtype rule (`other`: the data operands' type)."""
    if isinstance(value, np.generic):
        return Constant(value.item(), DType.from_fw_type(value.dtype))
    if isinstance(value, bool):
        return Constant(value, other if other is not None else bool_)
    if isinstance(value, int):
        if not _INT32.min <= value <= _INT32.max:
            raise OverflowError(f"{name}: the Python int constant {value} does not fit in int32 "
                                "(constants act as int32); pass a tensor with an explicit dtype, "
                                "e.g. ndd.tensor(value, dtype=ndd.int64)")
        return Constant(value, int32)
    return Constant(float(value), float32)


def _accepted(x: Any) -> bool:
    if isinstance(x, Tensor | Batch | np.ndarray | list | tuple) or is_scalar(x):
        return True
    return type(x).__module__.split(".")[0] == "torch" or hasattr(x, "__dlpack__")


def elementwise(schema: OpSchema, operands: Sequence[Any]) -> Any:
    """Call an elementwise schema: scalars become `<input>_constant` args, the rest inputs.

    Returns NotImplemented when an operand is of a type arithmetic does not accept, so Python
    can try the reflected operator or raise its usual TypeError.
    """
    if not all(_accepted(x) for x in operands):
        return NotImplemented
    data = [x for x in operands if not is_scalar(x)]
    if not data:  # only scalars (math functions): the first becomes a tensor input
        data = [operands[0]]
        operands = [_as_input(operands[0]), *operands[1:]]
    known = [d for d in (_operand_dtype(x) for x in data) if d is not None]
    other = promote_all(known) if known else None
    inputs: list[Any] = []
    constants: dict[str, Constant] = {}
    for spec, x in zip(schema.inputs, operands, strict=True):
        if is_scalar(x):
            inputs.append(None)
            constants[f"{spec.name}_constant"] = make_constant(schema.name, x, other)
        else:
            inputs.append(x)
    arg_values = [constants.get(a.name) for a in schema.args]
    return calls.call_op(schema, inputs, arg_values, None, None)


def _as_input(x: Any) -> Any:
    return as_tensor(x)


# ---- inference ----------------------------------------------------------------------------------
def operand_metas(call: Call) -> list[tuple[DType, np.ndarray, str | None, Constant | None]]:
    """(dtype, shapes [N, ndim], layout, constant) of every operand, constants as 0-d."""
    result = []
    for spec, meta in zip(call.schema.inputs, call.inputs, strict=True):
        if meta is not None:
            result.append((meta.dtype, meta.shapes, meta.layout or None, None))
        else:
            const = call.values.get(f"{spec.name}_constant")
            if const is None:
                raise call.error(f"operand '{spec.name}' is missing", TypeError)
            shapes = np.zeros((call.batch_size, 0), dtype=np.int64)
            result.append((const.dtype, shapes, None, const))
    return result


def broadcast_shapes(op: str, shapes: Sequence[np.ndarray]) -> np.ndarray:
    """Per-sample NumPy broadcasting of `[N, ndim_k]` shape arrays; BroadcastError names them."""
    n = shapes[0].shape[0]
    rank = max(s.shape[1] for s in shapes)
    first, same = None, True
    for s in shapes:  # common case: equal shapes plus 0-d constants, no per-element work
        if s.shape[1] == 0:
            continue
        if first is None:
            first = s
        elif s is not first and (s.shape != first.shape or s.tobytes() != first.tobytes()):
            same = False
            break
    if same and first is not None and first.shape[1] == rank:
        return first.copy()
    padded = []
    for s in shapes:
        p = np.ones((n, rank), dtype=np.int64)
        if s.shape[1]:
            p[:, rank - s.shape[1]:] = s
        padded.append(p)
    out = np.ones((n, rank), dtype=np.int64)
    for k, p in enumerate(padded):
        bad = ~((p == out) | (p == 1) | (out == 1))
        if bad.any():
            i = int(np.argwhere(bad.any(axis=1))[0][0])
            given = ", ".join(str(tuple(int(v) for v in s[i])) for s in shapes[:k + 1])
            raise BroadcastError(f"{op}: Can't broadcast shapes {given} (sample {i}); extents "
                                 "must match or be 1 (NumPy broadcasting)")
        out = np.where(out == 1, p, out)
    return out


@functools.lru_cache(maxsize=1024)
def _result_layout(op: str, layouts: tuple[str | None, ...], ndim: int) -> str | None:
    return result_layout(op, layouts, ndim)


def result_layout(op: str, layouts: Sequence[str | None], ndim: int) -> str | None:
    """The longest layout when every other one is equal to it or a suffix of it."""
    given = [lay for lay in layouts if lay]
    if not given:
        return None
    longest = max(given, key=len)
    for lay in given:
        if not longest.endswith(lay):
            raise BroadcastError(f"{op}: operand layouts '{lay}' and '{longest}' are "
                                 "incompatible; they must be equal or one a suffix of the other")
    if len(longest) != ndim:
        raise BroadcastError(f"{op}: layout '{longest}' does not fit the {ndim}-D result of "
                             "broadcasting; broadcast operands must not add leading dimensions "
                             "to a layout")
    return longest


ResultFn = Callable[[str, Sequence[DType]], tuple[DType, DType]]


def infer_elementwise(call: Call, result: ResultFn) -> OutputSpec:
    """Shared inference: result/compute dtype, broadcast shapes, layout, division checks."""
    op = call.schema.name
    operands = operand_metas(call)
    out_dtype, compute = result(op, [m[0] for m in operands])
    shapes = broadcast_shapes(op, [m[1] for m in operands])
    if call.device == "gpu" and len(operands) > 1 and shapes.shape[1] > MAX_GPU_RANK:
        raise call.error(f"the GPU kernels broadcast samples of up to {MAX_GPU_RANK} "
                         f"dimensions; got {shapes.shape[1]}. Reshape the operands or use "
                         "device='cpu'")
    layout = _result_layout(op, tuple(m[2] for m in operands), shapes.shape[1])
    base = call.values.get("base_op", op)
    check = base in INT_DIVISION and not promote_all([m[0] for m in operands]).is_float
    divisor = operands[1][3] if check else None
    if divisor is not None and divisor.value == 0:
        raise call.error("Integer division by zero.")
    call.derive("check_zero_division", check)
    call.derive("compute_dtype", compute)
    return OutputSpec(out_dtype, shapes, layout)


def _binary_infer(name: str) -> Callable[[Call], OutputSpec]:
    def infer(call: Call) -> OutputSpec:
        call.derive("base_op", name)
        return infer_elementwise(call, lambda op, d: binary_result(name, d[0], d[1], op))

    return infer


def _unary_infer(name: str) -> Callable[[Call], OutputSpec]:
    def infer(call: Call) -> OutputSpec:
        call.derive("base_op", name)
        return infer_elementwise(call, lambda op, d: unary_result(name, d[0], op))

    return infer


def binary_schema(name: str, infer: Callable[[Call], OutputSpec], doc: str,
                  inputs: tuple[str, ...] = ("left", "right"), public: bool = False,
                  function: Callable[..., Any] | None = None, module: str = "arithmetic"
                  ) -> OpSchema:  # fmt: skip
    """An elementwise schema whose operands may each be data or a scalar constant."""
    return OpSchema(
        name=name, doc=doc, module=module, public=public, function=function,
        inputs=tuple(Input(n, optional=True, doc="Tensor, Batch, array or scalar.")
                     for n in inputs),
        args=tuple(Arg(f"{n}_constant", "any", doc=f"Scalar given for '{n}' (internal).")
                   for n in inputs),
        infer=infer,
    )  # fmt: skip


schemas = [
    *(binary_schema(f"__{n}__", _binary_infer(n), f"`left {s} right`, elementwise.")
      for n, s in BINARY_SYMBOLS.items()),
    *(OpSchema(name=f"__{n}__", doc=f"`{s}` of each element.", module="arithmetic",
               public=False, inputs=(Input("input"),), args=(), infer=_unary_infer(n))
      for n, s in UNARY_SYMBOLS.items()),
]  # fmt: skip
_BY_NAME = {s.name: s for s in schemas}
_DUNDERS = {s.name.strip("_"): s for s in schemas}


def binary(name: str, left: Any, right: Any) -> Any:
    """`left <op> right` for the dunders (`name`: add, sub, ..., ge)."""
    schema = _DUNDERS[name]
    if type(left) is type(right) is Batch:  # the common case, without the sorting
        return calls.call_op(schema, (left, right), (None, None), None, None)
    return elementwise(schema, (left, right))


def unary(name: str, value: Any) -> Any:
    """`<op> value` for the dunders (`name`: neg, pos, invert, abs)."""
    return calls.call_op(_BY_NAME[f"__{name}__"], (value,), (), None, None)


operators.connect(binary, unary)
