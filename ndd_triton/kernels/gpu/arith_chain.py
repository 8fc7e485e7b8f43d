"""A chain of elementwise arithmetic calls in one launch (compile mode's fusion of traced
arithmetic: `(x - 127.5) / 127.5`, `ndd.math.sqrt(x * 2.0) + 1`, ...).

Each step is one arithmetic op (`ops/arithmetic.py`, `ops/math.py`) whose other operand, if
any, is a constant: the chain's value is converted to the step's compute type, combined with
the constant by the single-op kernels' own helpers (`_elementwise_ops`), and converted to the
step's output type as their store would (bool: `!= 0` for a bool computation). The next step
converts that value on as their load would, so the chain gives the bytes of the calls run one
by one, with no intermediate batch written or read. One program per stream tile of the
output, as the unary kernel (`_elementwise._unary_kernel`); the output has the input's shape.

Step codes: 16 bits per step of one constexpr int, `MAX_STEPS` steps: the op code (6 bits),
the compute type (4 bits, `TYPE_CODES`), the output type (4 bits) and the form (2 bits:
unary, constant on the right, constant on the left).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import triton
import triton.language as tl

from ndd_triton.core.dtype import DType
from ndd_triton.kernels.gpu._elementwise import (
    NCOL1,
    TRIG_BLOCK,
    _compute_np,
    _helper_operand,
    _helper_store,
)
from ndd_triton.kernels.gpu._elementwise_ops import (
    BINARY_CODES,
    NOT,
    UNARY_CODES,
    _helper_binary_op,
    _helper_unary_op,
    compute_tl,
)
from ndd_triton.kernels.gpu._stream import (
    S_NCOL,
    _helper_stream_tile,
    block_for,
    input_view,
    plan_stream,
)
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun

MAX_STEPS = 8
TYPE_CODES = {"bool": 0, "u8": 1, "u16": 2, "u32": 3, "u64": 4, "i8": 5, "i16": 6, "i32": 7,
              "i64": 8, "f16": 9, "f32": 10, "f64": 11}  # fmt: skip
UNARY, CONST_RIGHT, CONST_LEFT = 0, 1, 2  # step forms


@triton.jit
def _helper_to(v, CODE: tl.constexpr, COMPUTE: tl.constexpr):
    """`v` converted to the type of code CODE (bool: uint8 to compute in, int1 as stored)."""
    if CODE == 0:
        if COMPUTE:  # noqa: SIM108 (a static if: Triton compiles one branch)
            r = v.to(tl.uint8)
        else:
            r = v.to(tl.int1)
    elif CODE == 1:
        r = v.to(tl.uint8)
    elif CODE == 2:
        r = v.to(tl.uint16)
    elif CODE == 3:
        r = v.to(tl.uint32)
    elif CODE == 4:
        r = v.to(tl.uint64)
    elif CODE == 5:
        r = v.to(tl.int8)
    elif CODE == 6:
        r = v.to(tl.int16)
    elif CODE == 7:
        r = v.to(tl.int32)
    elif CODE == 8:
        r = v.to(tl.int64)
    elif CODE == 9:
        r = v.to(tl.float16)
    elif CODE == 10:
        r = v.to(tl.float32)
    else:
        r = v.to(tl.float64)
    return r


@triton.jit
def _helper_step(v, const, CODE: tl.constexpr):
    """One step (see the module docstring): the value as the step's output type holds it."""
    x = _helper_to(v, (CODE >> 6) & 15, True)
    if (CODE >> 14) & 3 == 0:
        r = _helper_unary_op(x, CODE & 63)
    else:  # the constant, loaded in the compute type as the single-op kernel loads it
        k = tl.broadcast_to(_helper_to(tl.load(const), (CODE >> 6) & 15, True), x.shape)
        if (CODE >> 14) & 3 == 1:
            r = _helper_binary_op(x, k, CODE & 63, ((CODE >> 6) & 15) <= 8)
        else:
            r = _helper_binary_op(k, x, CODE & 63, ((CODE >> 6) & 15) <= 8)
    if ((CODE >> 10) & 15) == 0 and ((CODE >> 6) & 15) == 0:
        r = r != 0  # a bool computation's result (uint8) as the store makes it bool
    return _helper_to(r, (CODE >> 10) & 15, False)


@triton.jit
def _helper_steps(v, c0, c1, c2, c3, c4, c5, c6, c7, STEPS: tl.constexpr, CODES: tl.constexpr):
    """The value through every step, in order."""
    v = _helper_step(v, c0, CODES & 0xFFFF)
    if STEPS > 1:
        v = _helper_step(v, c1, (CODES >> 16) & 0xFFFF)
    if STEPS > 2:
        v = _helper_step(v, c2, (CODES >> 32) & 0xFFFF)
    if STEPS > 3:
        v = _helper_step(v, c3, (CODES >> 48) & 0xFFFF)
    if STEPS > 4:
        v = _helper_step(v, c4, (CODES >> 64) & 0xFFFF)
    if STEPS > 5:
        v = _helper_step(v, c5, (CODES >> 80) & 0xFFFF)
    if STEPS > 6:
        v = _helper_step(v, c6, (CODES >> 96) & 0xFFFF)
    if STEPS > 7:
        v = _helper_step(v, c7, (CODES >> 112) & 0xFFFF)
    return v


@triton.jit
def _arith_chain_kernel(src, dst, samples, tiles, total, c0, c1, c2, c3, c4, c5, c6, c7,
                        STEPS: tl.constexpr, CODES: tl.constexpr, CT0: tl.constexpr,
                        BLOCK: tl.constexpr, GLOBAL: tl.constexpr,
                        SAME: tl.constexpr):  # fmt: skip
    """out = step_STEPS(... step_1(in)) over one stream tile (`c<k>`: step k's constant)."""
    _, row, start, lo, hi = _helper_stream_tile(tiles, samples, total, NCOL1, BLOCK, GLOBAL)
    offs = tl.arange(0, BLOCK)
    if hi - lo == BLOCK:  # a full tile: unmasked, vectorised
        x = _helper_operand(src, row, 0, start, offs, offs, offs, 0, CT0, 0, SAME, False)
        r = _helper_steps(x, c0, c1, c2, c3, c4, c5, c6, c7, STEPS, CODES)
        _helper_store(dst, start + offs, r, offs, False, False)
    else:  # a partial tile: its chunks that hold [lo, hi) in turn (as the unary kernel)
        PART: tl.constexpr = BLOCK // 4 if BLOCK >= 512 else min(BLOCK, 128)
        parts = tl.arange(0, PART)
        first = (lo - start).to(tl.int32)
        last = (hi - start).to(tl.int32)
        for c in range(first // PART * PART, last, PART):
            o = c + parts
            mask = (o >= first) & (o < last)
            x = _helper_operand(src, row, 0, start + c, parts, parts, mask, 0, CT0, 0, SAME, True)
            r = _helper_steps(x, c0, c1, c2, c3, c4, c5, c6, c7, STEPS, CODES)
            _helper_store(dst, start + c + parts, r, mask, False, True)


class Step:
    """One step on the host: the op (`add`, `sqrt`, ...), its form, compute and output types
    and its constant (None for a unary step)."""

    __slots__ = ("compute", "const", "form", "op", "out")

    def __init__(self, op: str, form: int, compute: DType, out: DType, const: Any) -> None:
        self.op, self.form, self.compute, self.out, self.const = op, form, compute, out, const

    def code(self) -> int | None:
        """The step's 16-bit code, or None when the kernel has no such op or type."""
        if self.form == UNARY:
            op = NOT if self.op == "invert" and self.compute.name == "bool" else \
                UNARY_CODES.get(self.op)  # fmt: skip
        else:
            op = BINARY_CODES.get(self.op)
        ct, out = TYPE_CODES.get(self.compute.name), TYPE_CODES.get(self.out.name)
        if op is None or ct is None or out is None or ct == TYPE_CODES["f16"]:
            return None
        return int(op.value) | ct << 6 | out << 10 | self.form << 14


def chain_codes(steps: list[Step]) -> int | None:
    """The constexpr codes of a chain, or None when it cannot run as one launch."""
    if not 2 <= len(steps) <= MAX_STEPS:
        return None
    codes = 0
    for s, step in enumerate(steps):
        code = step.code()
        if code is None:
            return None
        codes |= code << (16 * s)
    return codes


def launch_arith_chain(run: GpuRun, out: GpuBatch, inp: GpuBatch, steps: list[Step],
                       codes: int) -> None:  # fmt: skip
    """One launch taking every sample of `inp` through the steps into `out` (same shapes)."""
    with np.errstate(all="ignore"):  # the interpreter evaluates with NumPy (see _elementwise)
        _launch(run, out, inp, steps, codes)


def _launch(run: GpuRun, out: GpuBatch, inp: GpuBatch, steps: list[Step], codes: int) -> None:
    types = [_compute_np(s.compute) for s in steps] + [_compute_np(s.out) for s in steps]
    block = min(block_for(inp.data.dtype, out.data.dtype, *types),
                *(TRIG_BLOCK.get((s.op, s.compute.name), 1 << 20) for s in steps))  # fmt: skip
    view, delta, same = input_view(inp, out)
    plan = plan_stream(out, block, global_ok=same)
    samples, tiles = plan.tables(delta.reshape(-1, NCOL1 - S_NCOL))
    consts = [np.array([s.const.value]).astype(_compute_np(s.compute)) if s.form != UNARY
              else view for s in steps]  # fmt: skip
    consts += [view] * (MAX_STEPS - len(steps))
    run.launch(_arith_chain_kernel, (plan.grid,), view, plan.out, samples, tiles, plan.total,
               *consts, STEPS=len(steps), CODES=codes, CT0=compute_tl(steps[0].compute),
               BLOCK=block, GLOBAL=plan.is_global, SAME=same)  # fmt: skip
