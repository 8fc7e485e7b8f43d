"""A chain of elementwise arithmetic calls in one launch (compile mode's fusion of traced
arithmetic: `(x - 127.5) / 127.5`, `(x / 255.0 - mean) / std` with NumPy arrays `mean` and
`std`, `ndd.math.sqrt(x * 2.0) + 1`, ...).

The chain's value enters as the first step's input and has the output's shape throughout.
Each step is one arithmetic op (`ops/arithmetic.py`, `ops/math.py`) whose other operand, if
any, is a constant, a batch of the output's shape (DENSE) or one that broadcasts to it
(BROADCAST: an array constant such as a per-channel mean): the value is converted to the
step's compute type, combined with the other operand (loaded and converted as the single-op
kernel loads it) by the single-op kernels' own helpers (`_elementwise_ops`), and converted to
the step's output type as their store would (bool: `!= 0` for a bool computation); a `cast`
is a step too (the cast kernel's conversion: `x.to(DST)` to a float type, else DALI's rounding
and saturation, `_helper_cast`), and `clamp` is two (`max` with `lo`, then `min` with `hi`, in
the clamp's compute type, as its kernel evaluates it). The next
step converts that value on as their load would, so the chain gives the bytes of the calls run
one by one, with no intermediate batch written or read. One program per stream tile of the
output, as the elementwise kernels (`_elementwise.py`).

A chain may take a second chain as a step's other operand (`x * a + y * b`: `y * b` is the
*sub-chain* of the step `+`): a START step keeps the value so far in a second register and
loads its operand (the sub-chain's input) as the new value, the sub-chain's steps follow, and
the step that reads the sub-chain (REG) takes the kept value as its chain side and the current
value as its other operand, each converted to the step's compute type as a load of the stored
value would be. So the tree gives the bytes of its calls run one by one too.

Sample table (`_elementwise.operand_geometry`, the chain's input as operand 0 and step s's
operand as operand s + 1): the stream's columns, the chain input's delta (column 2), each
step's operand delta or sample offset (column 3 + s), then the collapsed output extents, their
division multipliers and shifts, and 6 strides per operand. Step codes: 24 bits per step of
one constexpr int, `MAX_STEPS` steps: the op code (6 bits), the compute type (4 bits,
`TYPE_CODES`), the output type (4 bits), the form (2 bits: unary, operand on the right, operand
on the left, cast), the operand's read mode (2 bits: DENSE, BROADCAST, SCALAR), whether a DENSE
operand is packed like the output (1 bit), REG (1 bit: the other operand is the kept value)
and START (1 bit).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import triton
import triton.language as tl

from ndd_triton.core.dtype import DType
from ndd_triton.kernels.gpu._broadcast import _helper_axis_step
from ndd_triton.kernels.gpu._elementwise import (
    BROADCAST,
    SCALAR,
    TRIG_BLOCK,
    _compute_np,
    _helper_operand,
    _helper_store,
    operand_geometry,
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
    _helper_stream_tile,
    block_for,
    plan_stream,
)
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.kernels.gpu._tensor_copy import _helper_dali_convert, _helper_to_float

MAX_STEPS = 8
TYPE_CODES = {"bool": 0, "u8": 1, "u16": 2, "u32": 3, "u64": 4, "i8": 5, "i16": 6, "i32": 7,
              "i64": 8, "f16": 9, "f32": 10, "f64": 11}  # fmt: skip
UNARY, OTHER_RIGHT, OTHER_LEFT, CAST = 0, 1, 2, 3  # step forms (CAST: the cast op)
START = 4  # host-side form: keep the value, load the step's operand as the new value
OPND: tl.constexpr = tl.constexpr(3)  # sample table: step s's operand column is OPND + s


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
def _helper_cast(v, CODE: tl.constexpr):
    """`v` (as the step before stored it) converted as the cast kernel converts it to the type
    of code CODE: `x.to(DST)` to a float type, else `_helper_dali_convert` (round half away,
    saturate; NaN to NANV) with `_tensor_copy.convert_meta`'s constants for that source type
    (`tests/core/test_compile_arith_casts.py` checks them at every edge)."""
    F64: tl.constexpr = v.dtype.is_fp64()
    FLOAT: tl.constexpr = v.dtype.is_floating()
    if CODE == 9:
        r = v.to(tl.float16)
    elif CODE == 10:
        r = _helper_to_float(v, tl.float32)
    elif CODE == 11:
        r = _helper_to_float(v, tl.float64)
    elif CODE == 0:
        r = _helper_dali_convert(v, tl.int1, 0, 0, 0, 0.0, 0.0)
    elif CODE == 1:
        r = _helper_dali_convert(v, tl.uint8, 0, 255, 0, 0.0, 255.0)
    elif CODE == 2:
        r = _helper_dali_convert(v, tl.uint16, 0, 65535, 0, 0.0, 65535.0)
    elif CODE == 3:
        if F64:  # (float32(2**32 - 1) rounds up to 2**32)
            r = _helper_dali_convert(v, tl.uint32, 0, 4294967295, 0, 0.0, 4294967295.0)
        else:
            r = _helper_dali_convert(v, tl.uint32, 0, 4294967295, 0, 0.0, 4294967296.0)
    elif CODE == 4:
        if v.dtype.is_uint64():  # (the cast kernel copies a same-type cast)
            r = v
        elif FLOAT:  # (an integer source is clipped to INT64_MAX first, as convert_meta says)
            r = _helper_dali_convert(v, tl.uint64, 0, 18446744073709551615, 0, 0.0,
                                     18446744073709551616.0)  # fmt: skip
        else:
            r = _helper_dali_convert(v, tl.uint64, 0, 9223372036854775807, 0, 0.0,
                                     18446744073709551616.0)  # fmt: skip
    elif CODE == 5:
        r = _helper_dali_convert(v, tl.int8, -128, 127, 0, -128.0, 127.0)
    elif CODE == 6:
        r = _helper_dali_convert(v, tl.int16, -32768, 32767, 0, -32768.0, 32767.0)
    elif CODE == 7:
        if F64:
            r = _helper_dali_convert(v, tl.int32, -2147483648, 2147483647, -2147483648,
                                     -2147483648.0, 2147483647.0)  # fmt: skip
        else:
            r = _helper_dali_convert(v, tl.int32, -2147483648, 2147483647, -2147483648,
                                     -2147483648.0, 2147483648.0)  # fmt: skip
    else:
        r = _helper_dali_convert(v, tl.int64, -9223372036854775808, 9223372036854775807,
                                 -9223372036854775808, -9223372036854775808.0,
                                 9223372036854775808.0)  # fmt: skip
    return r


@triton.jit
def _helper_bcast_index(row, start, offs, R: tl.constexpr, EXT: tl.constexpr,
                        STR: tl.constexpr, WIDE: tl.constexpr):  # fmt: skip
    """Element index in a BROADCAST operand (strides at column STR) of the sample elements
    `start - S_START + offs` (`_elementwise._helper_broadcast_indices` for one operand)."""
    first = start - tl.load(row)
    if WIDE:
        e = tl.maximum(first + offs.to(tl.int64), 0)
    else:
        e = tl.maximum(first.to(tl.int32) + offs, 0)  # lanes before the sample are masked
    index = e * 0
    rem = e
    for d in tl.static_range(R):  # collapsed axes, innermost first; the outermost: the rest
        axis = 5 - d
        if d == R - 1:
            coord = rem
        else:
            coord, rem = _helper_axis_step(row, rem, axis, EXT, EXT + 6, EXT + 12, WIDE)
        index += coord * tl.load(row + STR + axis).to(e.dtype)
    return index


@triton.jit
def _helper_step(v, kept, o, row, start, offs, mask, S: tl.constexpr, CODE: tl.constexpr,
                 EXT: tl.constexpr, R: tl.constexpr, WIDE: tl.constexpr,
                 MASKED: tl.constexpr):  # fmt: skip
    """Step S (see the module docstring): the value as the step's output type holds it, and
    the kept value (a START step keeps `v` and loads its operand, as stored, as the value)."""
    if (CODE >> 16) & 3 == 1:
        bidx = _helper_bcast_index(row, start, offs, R, EXT, EXT + 24 + 6 * S, WIDE)
    else:
        bidx = offs
    # (static branches, no early return: the compiler also builds what follows a return)
    if (CODE >> 20) & 1:  # START: a sub-chain begins at its input, operand S
        value = _helper_operand(o, row, S + 1, start, offs, bidx, mask, 1, o.dtype.element_ty,
                                (CODE >> 16) & 3, (CODE >> 18) & 1, MASKED)  # fmt: skip
        keep = v
    elif (CODE >> 14) & 3 == 3:  # the cast op: its kernel's conversion
        value = _helper_cast(v, (CODE >> 10) & 15)
        keep = kept
    else:
        if (CODE >> 19) & 1:  # REG: the chain side is the kept value, the sub-chain's is `v`
            x = _helper_to(kept, (CODE >> 6) & 15, True)
        else:
            x = _helper_to(v, (CODE >> 6) & 15, True)
        if (CODE >> 14) & 3 == 0:
            r = _helper_unary_op(x, CODE & 63)
        else:  # the other operand, loaded in the compute type as the single-op kernel loads it
            if (CODE >> 19) & 1:
                k = _helper_to(v, (CODE >> 6) & 15, True)
            else:
                y = _helper_operand(o, row, S + 1, start, offs, bidx, mask, 1,
                                    o.dtype.element_ty, (CODE >> 16) & 3, (CODE >> 18) & 1,
                                    MASKED)  # fmt: skip
                k = _helper_to(y, (CODE >> 6) & 15, True)
            if (CODE >> 14) & 3 == 1:
                r = _helper_binary_op(x, k, CODE & 63, ((CODE >> 6) & 15) <= 8)
            else:
                r = _helper_binary_op(k, x, CODE & 63, ((CODE >> 6) & 15) <= 8)
        if ((CODE >> 10) & 15) == 0 and ((CODE >> 6) & 15) == 0:
            r = r != 0  # a bool computation's result (uint8) as the store makes it bool
        value = _helper_to(r, (CODE >> 10) & 15, False)
        keep = kept
    return value, keep


@triton.jit
def _helper_steps(v, o0, o1, o2, o3, o4, o5, o6, o7, row, start, offs, mask,
                  STEPS: tl.constexpr, CODES: tl.constexpr, EXT: tl.constexpr, R: tl.constexpr,
                  WIDE: tl.constexpr, MASKED: tl.constexpr):  # fmt: skip
    """The value through every step, in order."""
    v, kept = _helper_step(v, v, o0, row, start, offs, mask, 0, CODES & 0xFFFFFF, EXT, R, WIDE,
                           MASKED)  # fmt: skip
    if STEPS > 1:
        v, kept = _helper_step(v, kept, o1, row, start, offs, mask, 1, (CODES >> 24) & 0xFFFFFF,
                               EXT, R, WIDE, MASKED)  # fmt: skip
    if STEPS > 2:
        v, kept = _helper_step(v, kept, o2, row, start, offs, mask, 2, (CODES >> 48) & 0xFFFFFF,
                               EXT, R, WIDE, MASKED)  # fmt: skip
    if STEPS > 3:
        v, kept = _helper_step(v, kept, o3, row, start, offs, mask, 3, (CODES >> 72) & 0xFFFFFF,
                               EXT, R, WIDE, MASKED)  # fmt: skip
    if STEPS > 4:
        v, kept = _helper_step(v, kept, o4, row, start, offs, mask, 4, (CODES >> 96) & 0xFFFFFF,
                               EXT, R, WIDE, MASKED)  # fmt: skip
    if STEPS > 5:
        v, kept = _helper_step(v, kept, o5, row, start, offs, mask, 5,
                               (CODES >> 120) & 0xFFFFFF, EXT, R, WIDE, MASKED)  # fmt: skip
    if STEPS > 6:
        v, kept = _helper_step(v, kept, o6, row, start, offs, mask, 6,
                               (CODES >> 144) & 0xFFFFFF, EXT, R, WIDE, MASKED)  # fmt: skip
    if STEPS > 7:
        v, kept = _helper_step(v, kept, o7, row, start, offs, mask, 7,
                               (CODES >> 168) & 0xFFFFFF, EXT, R, WIDE, MASKED)  # fmt: skip
    return v


@triton.jit
def _arith_chain_kernel(src, dst, samples, tiles, total, o0, o1, o2, o3, o4, o5, o6, o7,
                        STEPS: tl.constexpr, CODES: tl.constexpr, CT0: tl.constexpr,
                        R: tl.constexpr, WIDE: tl.constexpr, BLOCK: tl.constexpr,
                        GLOBAL: tl.constexpr, SAME: tl.constexpr):  # fmt: skip
    """out = step_STEPS(... step_1(in)) over one stream tile (`o<s>`: step s's operand)."""
    EXT: tl.constexpr = OPND + STEPS  # the sample table's geometry columns (module docstring)
    NCOL: tl.constexpr = EXT + 24 + 6 * STEPS
    _, row, start, lo, hi = _helper_stream_tile(tiles, samples, total, NCOL, BLOCK, GLOBAL)
    offs = tl.arange(0, BLOCK)
    if hi - lo == BLOCK:  # a full tile: unmasked, vectorised
        x = _helper_operand(src, row, 0, start, offs, offs, offs, 0, CT0, 0, SAME, False)
        r = _helper_steps(x, o0, o1, o2, o3, o4, o5, o6, o7, row, start, offs, offs, STEPS,
                          CODES, EXT, R, WIDE, False)  # fmt: skip
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
            r = _helper_steps(x, o0, o1, o2, o3, o4, o5, o6, o7, row, start + c, parts, mask,
                              STEPS, CODES, EXT, R, WIDE, True)  # fmt: skip
            _helper_store(dst, start + c + parts, r, mask, False, True)


class Step:
    """One step on the host: the op (`add`, `sqrt`, ...), its form, compute and output types
    and its other operand: a `Constant`, a `GpuBatch` (at launch) or None (a unary step, or
    `reg`: the kept value, a sub-chain's result). A START step (`form`) loads its operand,
    the sub-chain's input, as the value (`compute` and `out`: its dtype)."""

    __slots__ = ("compute", "form", "op", "other", "out", "reg")

    def __init__(self, op: str, form: int, compute: DType, out: DType, other: Any,
                 reg: bool = False) -> None:  # fmt: skip
        self.op, self.form, self.compute, self.out, self.other = op, form, compute, out, other
        self.reg = reg

    def code(self, mode: int = SCALAR, same: bool = True) -> int | None:
        """The step's 24-bit code, or None when the kernel has no such op or type."""
        if self.form == START:
            return mode << 16 | same << 18 | 1 << 20
        if self.form == CAST:
            out = TYPE_CODES.get(self.out.name)
            return out << 10 | CAST << 14 if out is not None else None
        if self.form == UNARY:
            op = NOT if self.op == "invert" and self.compute.name == "bool" else \
                UNARY_CODES.get(self.op)  # fmt: skip
        else:
            op = BINARY_CODES.get(self.op)
        ct, out = TYPE_CODES.get(self.compute.name), TYPE_CODES.get(self.out.name)
        if op is None or ct is None or out is None or ct == TYPE_CODES["f16"]:
            return None
        if self.reg and self.form not in (OTHER_RIGHT, OTHER_LEFT):
            return None
        return int(op.value) | ct << 6 | out << 10 | self.form << 14 | mode << 16 | \
            same << 18 | self.reg << 19  # fmt: skip


def supported(steps: list[Step]) -> bool:
    """Whether the chain can run as one launch (2 to MAX_STEPS steps the kernel has)."""
    return 2 <= len(steps) <= MAX_STEPS and all(s.code() is not None for s in steps)


def launch_arith_chain(run: GpuRun, out: GpuBatch, inp: GpuBatch, steps: list[Step],
                       others: list[GpuBatch | None]) -> None:  # fmt: skip
    """One launch taking every sample of `inp` through the steps into `out` (same shapes);
    `others[s]`: step s's data operand (None: a constant or a unary step)."""
    with np.errstate(all="ignore"):  # the interpreter evaluates with NumPy (see _elementwise)
        _launch(run, out, inp, steps, others)


def _launch(run: GpuRun, out: GpuBatch, inp: GpuBatch, steps: list[Step],
            others: list[GpuBatch | None]) -> None:  # fmt: skip
    count = len(steps)
    # operand slot 0: the chain's input (the output's shape); slot s + 1: step s's operand
    read = [inp, *(x if s.form not in (UNARY, CAST) and not s.reg else None
                   for s, x in zip(steps, others, strict=True))]  # fmt: skip
    modes, views, same, geometry, rank, wide = operand_geometry(out, read, count + 1)
    pointers: list[Any] = []
    codes = 0
    for s, step in enumerate(steps):
        mode, view = modes[s + 1], views[s + 1]
        if step.form in (UNARY, CAST) or step.reg:
            pointers.append(views[0])  # (not read)
        elif mode == SCALAR:
            pointers.append(np.array([step.other.value]).astype(_compute_np(step.compute)))
        else:
            pointers.append(view if view is not None else others[s].data)  # type: ignore[union-attr]
        codes |= step.code(mode, same[s + 1]) << (24 * s)  # type: ignore[operator]
    types = [_compute_np(s.compute) for s in steps] + [_compute_np(s.out) for s in steps]
    block = min(block_for(inp.data.dtype, out.data.dtype, *types),
                *(TRIG_BLOCK.get((s.op, s.compute.name), 1 << 20) for s in steps))  # fmt: skip
    plan = plan_stream(out, block, global_ok=BROADCAST not in modes and all(same))
    samples, tiles = plan.tables(geometry)
    pointers += [views[0]] * (MAX_STEPS - count)
    # the first load's type: the first step's compute type, or the input's own before a cast
    first = steps[0].compute if steps[0].form != CAST else inp.dtype
    ct0 = tl.float16 if first.name == "f16" else compute_tl(first)
    run.launch(_arith_chain_kernel, (plan.grid,), views[0], plan.out, samples, tiles,
               plan.total, *pointers, STEPS=count, CODES=codes, CT0=ct0, R=rank, WIDE=wide,
               BLOCK=block, GLOBAL=plan.is_global, SAME=same[0])  # fmt: skip
