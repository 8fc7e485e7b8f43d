"""Generic elementwise Triton kernels (unary, binary, ternary), specialised by an op code.

One launch per op call for the whole ragged batch. The output is a flat stream cut into
BLOCK-aligned tiles (`_stream.py`): full tiles run unmasked with 16-byte loads and stores, a
64-bit block base plus int32 lane offsets, nothing unravelled. Each operand is read in one of
three modes chosen on the host for the whole batch: DENSE (same shape as the output: the same
stream index, plus a per-sample delta when it is packed differently), BROADCAST (coordinates
over the sample's collapsed axes, `_broadcast.py`: R - 1 int32 multiply-shift divisions per
element, dotted with the operand's strides) and SCALAR (a constant: a one-element array
uploaded with the tables, loaded once per program).

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
from ndd_triton.kernels.gpu._broadcast import (
    INT32_LIMIT,
    _helper_axis_step,
    collapse,
    contiguous_strides,
    magic_numbers,
)
from ndd_triton.kernels.gpu._common import padded_shapes
from ndd_triton.kernels.gpu._elementwise_ops import (
    BINARY_CODES,
    MAX,
    MIN,
    NOT,
    UNARY_CODES,
    _helper_binary_op,
    _helper_unary_op,
    compute_tl,
)
from ndd_triton.kernels.gpu._stream import (
    S_NCOL,
    S_START,
    _helper_stream_tile,
    block_for,
    input_view,
    plan_stream,
)
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.ops.schema import Call

# sample table columns after the stream's S_START, S_END: per operand k (up to 3) at B_OPND + k
# its per-sample delta (DENSE packed differently) or sample offset (BROADCAST); then the
# collapsed output extents, their division multipliers and shifts, and 6 strides per operand
B_OPND: tl.constexpr = tl.constexpr(2)
B_EXT: tl.constexpr = tl.constexpr(5)
B_MUL: tl.constexpr = tl.constexpr(11)
B_SHIFT: tl.constexpr = tl.constexpr(17)
B_STR: tl.constexpr = tl.constexpr(23)  # operand k: B_STR + 6k .. B_STR + 6k + 5
NCOL: tl.constexpr = tl.constexpr(41)
NCOL1: tl.constexpr = tl.constexpr(3)  # unary: S_START, S_END, the input's delta
DENSE, BROADCAST, SCALAR = 0, 1, 2  # operand read modes
# Tile sizes of float32 trig, whose libdevice reductions (inlined per element) have slow paths
# around which ptxas spills (sm_90) when a thread holds many elements: sin and cos from 16 per
# thread (4 warps) on, tan (sin / cos: two reductions) from 4
TRIG_BLOCK = {("sin", "f32"): 1024, ("cos", "f32"): 1024, ("tan", "f32"): 256}


@triton.jit
def _helper_store(dst, index, r, mask, OUT_BOOL: tl.constexpr, MASKED: tl.constexpr):
    if OUT_BOOL:
        r = r != 0
    if MASKED:
        tl.store(dst + index, r.to(dst.dtype.element_ty), mask=mask)
    else:
        tl.store(dst + index, r.to(dst.dtype.element_ty))


@triton.jit
def _helper_operand(ptr, row, K: tl.constexpr, start, offs, bidx, mask, other, CT: tl.constexpr,
                    MODE: tl.constexpr, SAME: tl.constexpr, MASKED: tl.constexpr):  # fmt: skip
    """Operand K at stream block `start` + offs, in the compute type (see module doc)."""
    if MODE == 2:  # SCALAR: the constant, one load per program
        x = tl.broadcast_to(tl.load(ptr).to(CT), offs.shape)
    else:
        if MODE == 1:  # BROADCAST: the sample's offset + collapsed-axis index
            p = ptr + tl.load(row + B_OPND + K) + bidx
        elif SAME:  # DENSE, packed like the output: the same stream index
            p = ptr + start + offs
        else:  # DENSE elsewhere: stream index + the sample's delta
            p = ptr + (tl.load(row + B_OPND + K) + start) + offs
        if MASKED:  # noqa: SIM108 (a static if: Triton compiles one branch)
            x = tl.load(p, mask=mask, other=other).to(CT)
        else:
            x = tl.load(p).to(CT)
    return x


@triton.jit
def _helper_broadcast_indices(row, start, offs, R: tl.constexpr, MODE_A: tl.constexpr,
                              MODE_B: tl.constexpr, MODE_C: tl.constexpr,
                              WIDE: tl.constexpr):  # fmt: skip
    """Element index of each BROADCAST operand for sample elements start - S_START + offs."""
    if R == 0:  # no BROADCAST operand
        ia = offs
        ib = offs
        ic = offs
    else:
        first = start - tl.load(row + S_START)
        if WIDE:
            e = tl.maximum(first + offs.to(tl.int64), 0)
        else:
            e = tl.maximum(first.to(tl.int32) + offs, 0)  # lanes before the sample are masked
        ia = e * 0
        ib = e * 0
        ic = e * 0
        rem = e
        for d in tl.static_range(R):  # collapsed axes, innermost first; the outermost: the rest
            axis = 5 - d
            if d == R - 1:
                coord = rem
            else:
                coord, rem = _helper_axis_step(row, rem, axis, B_EXT, B_MUL, B_SHIFT, WIDE)
            if MODE_A == 1:
                ia += coord * tl.load(row + B_STR + axis).to(e.dtype)
            if MODE_B == 1:
                ib += coord * tl.load(row + B_STR + 6 + axis).to(e.dtype)
            if MODE_C == 1:
                ic += coord * tl.load(row + B_STR + 12 + axis).to(e.dtype)
    return ia, ib, ic


@triton.jit
def _unary_kernel(src, dst, samples, tiles, total, OP: tl.constexpr, CT: tl.constexpr,
                  OUT_BOOL: tl.constexpr, BLOCK: tl.constexpr, GLOBAL: tl.constexpr,
                  SAME: tl.constexpr):  # fmt: skip
    """out = op(in) over one stream tile (element g of the tile: stream index start + g)."""
    _, row, start, lo, hi = _helper_stream_tile(tiles, samples, total, NCOL1, BLOCK, GLOBAL)
    offs = tl.arange(0, BLOCK)
    if hi - lo == BLOCK:  # a full tile: unmasked, vectorised
        x = _helper_operand(src, row, 0, start, offs, offs, offs, 0, CT, 0, SAME, False)
        _helper_store(dst, start + offs, _helper_unary_op(x, OP), offs, OUT_BOOL, False)
    else:  # a partial tile: its chunks (of BLOCK // 4, at least 128) that hold [lo, hi) in turn
        PART: tl.constexpr = BLOCK // 4 if BLOCK >= 512 else min(BLOCK, 128)
        parts = tl.arange(0, PART)
        first = (lo - start).to(tl.int32)
        last = (hi - start).to(tl.int32)
        for c in range(first // PART * PART, last, PART):
            o = c + parts
            mask = (o >= first) & (o < last)
            x = _helper_operand(src, row, 0, start + c, parts, parts, mask, 0, CT, 0, SAME, True)
            _helper_store(dst, start + c + parts, _helper_unary_op(x, OP), mask, OUT_BOOL, True)


@triton.jit
def _binary_kernel(a_ptr, b_ptr, dst, samples, tiles, total, OP: tl.constexpr, CT: tl.constexpr,
                   MODE_A: tl.constexpr, MODE_B: tl.constexpr, SAME_A: tl.constexpr,
                   SAME_B: tl.constexpr, IS_INT: tl.constexpr, OUT_BOOL: tl.constexpr,
                   BLOCK: tl.constexpr, GLOBAL: tl.constexpr, R: tl.constexpr,
                   WIDE: tl.constexpr):  # fmt: skip
    """out = a <op> b over one stream tile of one output sample, operands read per MODE."""
    _, row, start, lo, hi = _helper_stream_tile(tiles, samples, total, NCOL, BLOCK, GLOBAL)
    offs = tl.arange(0, BLOCK)
    ia, ib, _ = _helper_broadcast_indices(row, start, offs, R, MODE_A, MODE_B, 2, WIDE)
    if hi - lo == BLOCK:
        a = _helper_operand(a_ptr, row, 0, start, offs, ia, offs, 0, CT, MODE_A, SAME_A, False)
        b = _helper_operand(b_ptr, row, 1, start, offs, ib, offs, 1, CT, MODE_B, SAME_B, False)
        r = _helper_binary_op(a, b, OP, IS_INT)
        _helper_store(dst, start + offs, r, offs, OUT_BOOL, False)
    else:
        mask = (offs >= (lo - start).to(tl.int32)) & (offs < (hi - start).to(tl.int32))
        a = _helper_operand(a_ptr, row, 0, start, offs, ia, mask, 0, CT, MODE_A, SAME_A, True)
        b = _helper_operand(b_ptr, row, 1, start, offs, ib, mask, 1, CT, MODE_B, SAME_B, True)
        r = _helper_binary_op(a, b, OP, IS_INT)
        _helper_store(dst, start + offs, r, mask, OUT_BOOL, True)


@triton.jit
def _helper_clamp(v_ptr, lo_ptr, hi_ptr, row, start, offs, iv, ilo, ihi, mask, CT: tl.constexpr,
                  MODE_V: tl.constexpr, MODE_LO: tl.constexpr, MODE_HI: tl.constexpr,
                  SAME_V: tl.constexpr, SAME_LO: tl.constexpr, SAME_HI: tl.constexpr,
                  MASKED: tl.constexpr):  # fmt: skip
    v = _helper_operand(v_ptr, row, 0, start, offs, iv, mask, 0, CT, MODE_V, SAME_V, MASKED)
    lo = _helper_operand(lo_ptr, row, 1, start, offs, ilo, mask, 0, CT, MODE_LO, SAME_LO, MASKED)
    hi = _helper_operand(hi_ptr, row, 2, start, offs, ihi, mask, 0, CT, MODE_HI, SAME_HI, MASKED)
    return _helper_binary_op(_helper_binary_op(v, lo, MAX, False), hi, MIN, False)


@triton.jit
def _clamp_kernel(v_ptr, lo_ptr, hi_ptr, dst, samples, tiles, total, CT: tl.constexpr,
                  MODE_V: tl.constexpr, MODE_LO: tl.constexpr, MODE_HI: tl.constexpr,
                  SAME_V: tl.constexpr, SAME_LO: tl.constexpr, SAME_HI: tl.constexpr,
                  OUT_BOOL: tl.constexpr, BLOCK: tl.constexpr, GLOBAL: tl.constexpr,
                  R: tl.constexpr, WIDE: tl.constexpr):  # fmt: skip
    """out = min(max(value, lo), hi) over one stream tile of one output sample."""
    _, row, start, lo, hi = _helper_stream_tile(tiles, samples, total, NCOL, BLOCK, GLOBAL)
    offs = tl.arange(0, BLOCK)
    iv, ilo, ihi = _helper_broadcast_indices(row, start, offs, R, MODE_V, MODE_LO, MODE_HI, WIDE)
    if hi - lo == BLOCK:
        r = _helper_clamp(v_ptr, lo_ptr, hi_ptr, row, start, offs, iv, ilo, ihi, offs, CT,
                          MODE_V, MODE_LO, MODE_HI, SAME_V, SAME_LO, SAME_HI, False)  # fmt: skip
        _helper_store(dst, start + offs, r, offs, OUT_BOOL, False)
    else:
        mask = (offs >= (lo - start).to(tl.int32)) & (offs < (hi - start).to(tl.int32))
        r = _helper_clamp(v_ptr, lo_ptr, hi_ptr, row, start, offs, iv, ilo, ihi, mask, CT,
                          MODE_V, MODE_LO, MODE_HI, SAME_V, SAME_LO, SAME_HI, True)  # fmt: skip
        _helper_store(dst, start + offs, r, mask, OUT_BOOL, True)


# ---- host side --------------------------------------------------------------------------------
def _compute_np(dtype: DType) -> np.dtype[Any]:
    return np.dtype(np.uint8) if dtype.name == "bool" else dtype.numpy_dtype


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


Geometry = tuple[list[int], list[Any], list[bool], np.ndarray, int, bool]


def operand_geometry(out: GpuBatch, operands: list[GpuBatch | None],
                     slots: int = 3) -> Geometry:  # fmt: skip
    """How kernels read `operands` (None: a constant) at the output's stream index: per operand
    its mode (DENSE, BROADCAST, SCALAR), its buffer viewed for the stream (DENSE; else None)
    and whether it is packed like the output (DENSE; else True); the `[N, 7 * slots + 18]`
    columns after the stream's (per slot its delta or sample offset; the collapsed output
    extents, their division multipliers and shifts; per slot 6 strides), R (0: no broadcast)
    and WIDE. `slots` >= len(operands): the kernel's operand count."""
    n = out.batch_size
    out_shapes = padded_shapes(out.shapes)
    modes, views, same, strides = [], [], [], []
    offsets = np.zeros((n, slots), np.int64)
    for k, x in enumerate(operands):
        view, is_same = None, True
        if x is None:
            modes.append(SCALAR)
        elif np.array_equal(shapes := padded_shapes(x.shapes), out_shapes):
            modes.append(DENSE)
            view, offsets[:, k], is_same = input_view(x, out)
        else:
            modes.append(BROADCAST)
            offsets[:, k] = x.offsets
            strides.append(contiguous_strides(shapes))
        views.append(view)
        same.append(is_same)
    ext, rank = np.ones((n, 6), np.int64), 0
    cols = [np.zeros((n, 6), np.int64) for _ in range(slots)]
    if strides:
        ext, collapsed, rank = collapse(out_shapes, strides)
        for k in (k for k, mode in enumerate(modes) if mode == BROADCAST):
            cols[k] = collapsed.pop(0)
    mul, shift = magic_numbers(ext)
    wide = bool(n) and rank > 0 and int(out.sizes.max()) >= INT32_LIMIT - 2 * 8192
    columns = np.concatenate([offsets, ext, mul, shift, *cols], axis=1)
    return modes, views, same, columns, rank, wide


def _launch(run: GpuRun, out: GpuBatch, operands: list[GpuBatch | None], call: Call, op: str
            ) -> None:  # fmt: skip
    compute: DType = call.compute_dtype
    ct = compute_tl(compute)
    out_bool = out.dtype.name == "bool" and compute.name == "bool"
    names = [spec.name for spec in call.schema.inputs]
    arrays = [x for x in operands if x is not None]
    block = block_for(_compute_np(compute), out.data.dtype, *(x.data.dtype for x in arrays))
    block = TRIG_BLOCK.get((op, compute.name), block)
    modes, views, same, geometry, rank, wide = operand_geometry(out, operands)
    pointers = [view if view is not None else operand_pointer(x, name, call, compute)
                for x, name, view in zip(operands, names, views, strict=True)]  # fmt: skip
    plan = plan_stream(out, block, global_ok=BROADCAST not in modes and all(same))
    width = (NCOL1 if len(operands) == 1 else NCOL) - S_NCOL
    samples, tiles = plan.tables(geometry[:, :width])
    common = {"BLOCK": block, "GLOBAL": plan.is_global}
    if len(operands) == 1:
        code = NOT if op == "invert" and compute.name == "bool" else UNARY_CODES[op]
        run.launch(_unary_kernel, (plan.grid,), pointers[0], plan.out, samples, tiles,
                   plan.total, OP=code.value, CT=ct, OUT_BOOL=out_bool, SAME=same[0],
                   **common)  # fmt: skip
        return
    common.update(R=rank, WIDE=wide)
    if op == "clamp":
        run.launch(_clamp_kernel, (plan.grid,), *pointers, plan.out, samples, tiles, plan.total,
                   CT=ct, MODE_V=modes[0], MODE_LO=modes[1], MODE_HI=modes[2], SAME_V=same[0],
                   SAME_LO=same[1], SAME_HI=same[2], OUT_BOOL=out_bool, **common)  # fmt: skip
        return
    is_int = compute.is_integer or compute.name == "bool"
    run.launch(_binary_kernel, (plan.grid,), *pointers, plan.out, samples, tiles, plan.total,
               OP=BINARY_CODES[op].value, CT=ct, MODE_A=modes[0], MODE_B=modes[1],
               SAME_A=same[0], SAME_B=same[1], IS_INT=is_int, OUT_BOOL=out_bool,
               **common)  # fmt: skip
