"""Compile mode's fusion of elementwise arithmetic chains (`runtime/fusion.py` plans the other
groups): *arith_chain*, a run of arithmetic operators and `ndd.math` functions in which each
call has one data operand (any other operand is a Python/NumPy scalar, a constant), each reads
the previous call's result and nothing else in the program reads that result: `(x - 127.5) /
127.5`, `ndd.math.sqrt(x * 2.0) + 1`.

* GPU: one launch for the whole chain (`kernels/gpu/arith_chain.py`): each step is the single
  op's expression in its compute type followed by the conversion its store does, in registers,
  so the bytes are those of the calls run one by one; at most 8 steps, float16 computations
  excluded (float16 results are fine: they compute in float32).
* CPU: one pool job in which each sample goes through every member's own CPU kernel while it
  is in cache (no intermediate batch).

Calls with two data operands (`a + b`), `clamp`, and chains of one call run on their own.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ndd_triton.kernels import KernelEntry
from ndd_triton.ops import arithmetic, math
from ndd_triton.ops.schema import SampleArgs
from ndd_triton.runtime.dispatch import make_run, make_stage
from ndd_triton.runtime.fusion_group import FUSABLE_MODES, Group, count_uses
from ndd_triton.runtime.invocation import Invocation
from ndd_triton.runtime.trace import CallRecord

ARITH_KINDS = frozenset(("arith_chain",))
ARITH_OPS = frozenset(s.name for s in (*arithmetic.schemas, *math.schemas)
                      if s.name != "math.clamp")  # fmt: skip


def _data_input(rec: CallRecord) -> int | None:
    """The position of a call's only data operand (the others constants), or None."""
    data = [k for k, ref in enumerate(rec.inputs)
            if not (ref.kind == "const" and ref.value is None)]  # fmt: skip
    return data[0] if len(data) == 1 else None


def arith_groups(program: list[CallRecord], uses: dict[tuple[int, int], int] | None = None,
                 groups: dict[int, Group] | None = None) -> dict[int, Group]:  # fmt: skip
    """Add the arith_chain groups of `program` to `groups` (returned)."""
    uses = count_uses(program) if uses is None else uses
    groups = {} if groups is None else groups
    nxt: dict[int, int] = {}
    for p, rec in enumerate(program):
        k = _data_input(rec) if rec.name in ARITH_OPS and rec.mode in FUSABLE_MODES else None
        src = rec.inputs[k] if k is not None else None
        if src is None or src.kind != "op" or src.output != 0 or uses.get((src.index, 0)) != 1:
            continue
        prev = program[src.index]
        if prev.name in ARITH_OPS and prev.mode is rec.mode and prev.ctx is rec.ctx and \
                _data_input(prev) is not None and src.index not in groups:  # fmt: skip
            nxt[src.index] = p
    starts = set(nxt) - set(nxt.values())
    for start in sorted(starts):
        calls = [start]
        while calls[-1] in nxt:
            calls.append(nxt[calls[-1]])
        group = Group("arith_chain", tuple(calls))
        for p in calls:
            groups[p] = group
    return groups


def arith_invocation(name: str, members: list[Any], ctx: Any) -> Invocation | None:
    """The chain's one invocation (producing the last member's output), or None when the
    members cannot run as one pass (then each runs on its own)."""
    first, last = members[0], members[-1]
    dev = first.dev
    positions = []
    for m in members:
        metas = m.call.inputs
        data = [k for k, meta in enumerate(metas) if meta is not None]
        if len(data) != 1 or not np.array_equal(m.specs[0].shapes, metas[data[0]].shapes):
            return None
        positions.append(data[0])
    if dev.device_type == "cpu":
        kernel = KernelEntry(_cpu_chain(members, positions), "cpu")
        stage = make_stage(first.call, kernel, first.batches, last.specs, dev, ctx)
    else:
        from ndd_triton.kernels.gpu.arith_chain import chain_codes

        steps = [_step(m, k) for m, k in zip(members, positions, strict=True)]
        codes = chain_codes(steps)
        if codes is None:
            return None
        kernel = KernelEntry(_gpu_chain(steps, codes, positions[0]), "gpu")
        stage = None
    run = make_run(first.call, kernel, first.batches, last.specs, dev, ctx)
    return Invocation(name, run, ctx, None, stage)


def _step(member: Any, data: int) -> Any:
    """The kernel's description of one member (see `kernels/gpu/arith_chain.Step`)."""
    from ndd_triton.kernels.gpu.arith_chain import CONST_LEFT, CONST_RIGHT, UNARY, Step

    call = member.call
    names = [spec.name for spec in call.schema.inputs]
    if len(names) == 1:
        form, const = UNARY, None
    else:
        form = CONST_RIGHT if data == 0 else CONST_LEFT
        const = call.values[f"{names[1 - data]}_constant"]
    return Step(call.base_op, form, call.compute_dtype, member.specs[0].dtype, const)


def _gpu_chain(steps: list[Any], codes: int, data: int) -> Any:
    """`fn(run, out, *operands, call)`: the chain as one launch."""
    from ndd_triton.kernels.gpu.arith_chain import launch_arith_chain

    def chain(run: Any, out: Any, *rest: Any) -> None:
        launch_arith_chain(run, out, rest[data], steps, codes)

    return chain


def _cpu_chain(members: list[Any], positions: list[int]) -> Any:
    """`fn(out, *operands, arg)`: sample `arg.index` through every member's CPU kernel."""
    steps = [(m.call, m.kernel, m.specs[0], k, len(m.call.inputs))
             for m, k in zip(members, positions, strict=True)]  # fmt: skip
    layout = members[0].call.inputs[positions[0]].layout

    def chain(out: np.ndarray, *rest: Any) -> None:
        i = rest[-1].index
        cur = rest[positions[0]]
        for s, (call, kernel, spec, data, count) in enumerate(steps):
            if s == len(steps) - 1:
                dst = out
            else:
                dst = np.empty(tuple(int(v) for v in spec.shapes[i]), spec.dtype.numpy_dtype)
            operands = [cur if k == data else None for k in range(count)]
            kernel.fn(dst, *operands, SampleArgs(call, i, layout))
            cur = dst

    return chain
