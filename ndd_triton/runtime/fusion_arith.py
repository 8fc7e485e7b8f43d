"""Compile mode's fusion of elementwise arithmetic chains (`runtime/fusion.py` plans the other
groups): *arith_chain*, a run of arithmetic operators and `ndd.math` functions in which each
call reads the previous call's result, which nothing else in the program reads: `(x - 127.5) /
127.5`, `(x / 255.0 - mean) / std` (NumPy arrays `mean`, `std`: batches that broadcast),
`ndd.math.sqrt(x * 2.0) + 1`, `ndd.cast(x, dtype=ndd.float16) * 0.5` (a `cast` to a float type
is a step). A call's other operand may be a constant (a Python or NumPy
scalar) or any batch of the result's shape or broadcasting to it; the chain's value must keep
the result's shape (the other operand does not widen it).

* GPU: one launch for the whole chain (`kernels/gpu/arith_chain.py`): each step is the single
  op's expression in its compute type followed by the conversion its store does, in registers,
  so the bytes are those of the calls run one by one; at most 8 steps.
* CPU: one pool job in which each sample goes through every member's own CPU kernel while it
  is in cache (no intermediate batch).

`clamp` (three operands) and chains of one call run on their own.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ndd_triton.core.dtype import to_dtype_arg
from ndd_triton.kernels import KernelEntry
from ndd_triton.ops import arithmetic, math
from ndd_triton.ops.schema import SampleArgs
from ndd_triton.runtime.dispatch import make_run, make_stage
from ndd_triton.runtime.fusion_group import FUSABLE_MODES, Group, count_uses
from ndd_triton.runtime.invocation import Invocation
from ndd_triton.runtime.trace import CallRecord

ARITH_KINDS = frozenset(("arith_chain",))
ARITH_OPS = frozenset([*(s.name for s in (*arithmetic.schemas, *math.schemas)
                        if s.name != "math.clamp"), "cast"])  # fmt: skip


def _chainable(rec: CallRecord) -> bool:
    """An arithmetic call, or a cast to a float type (what the chain kernel casts)."""
    if rec.name != "cast":
        return rec.name in ARITH_OPS
    ref = rec.args[[a.name for a in rec.schema.args].index("dtype")]
    try:
        dtype = to_dtype_arg(ref.value, "cast")
    except (TypeError, ValueError):
        return False
    return dtype.is_float and dtype.name in ("f16", "f32", "f64")


def arith_groups(program: list[CallRecord], uses: dict[tuple[int, int], int] | None = None,
                 groups: dict[int, Group] | None = None) -> dict[int, Group]:  # fmt: skip
    """Add the arith_chain groups of `program` to `groups` (returned)."""
    uses = count_uses(program) if uses is None else uses
    groups = {} if groups is None else groups
    nxt: dict[int, tuple[int, int]] = {}  # call -> (the call that alone reads it, which input)
    for p, rec in enumerate(program):
        if not _chainable(rec) or rec.mode not in FUSABLE_MODES:
            continue
        links = [(k, ref.index) for k, ref in enumerate(rec.inputs)
                 if ref.kind == "op" and ref.output == 0 and uses.get((ref.index, 0)) == 1
                 and _chainable(program[ref.index]) and program[ref.index].mode is rec.mode
                 and program[ref.index].ctx is rec.ctx and ref.index not in groups]  # fmt: skip
        if links and links[0][1] not in nxt:
            nxt[links[0][1]] = (p, links[0][0])
    for start in sorted(set(nxt) - {p for p, _ in nxt.values()}):
        calls, inputs = [start], [-1]
        while calls[-1] in nxt:
            p, k = nxt[calls[-1]]
            calls.append(p)
            inputs.append(k)
        group = Group("arith_chain", tuple(calls), tuple(inputs))
        for p in calls:
            groups[p] = group
    return groups


def arith_invocation(name: str, group: Group, members: list[Any], ctx: Any) -> Invocation | None:
    """The chain's one invocation (producing the last member's output), or None when the
    members cannot run as one pass (then each runs on its own)."""
    first, last = members[0], members[-1]
    dev = first.dev
    first_metas = first.call.inputs
    main = [k for k, meta in enumerate(first_metas)
            if meta is not None and np.array_equal(meta.shapes, first.specs[0].shapes)]  # fmt: skip
    if not main:
        return None
    chain = [main[0], *group.chain_inputs[1:]]
    # the fused invocation's inputs: the first member's, then each later member's data operand
    batches, metas = list(first.batches), list(first_metas)
    others: list[int | None] = []  # per member: its other operand's input index, or None
    for j, (m, k) in enumerate(zip(members, chain, strict=True)):
        inputs = m.call.inputs
        if len(inputs) > 2 or inputs[k] is None or \
                not np.array_equal(m.specs[0].shapes, inputs[k].shapes):  # fmt: skip
            return None  # (the value must keep the result's shape)
        other = 1 - k if len(inputs) == 2 and inputs[1 - k] is not None else None
        if other is not None and j > 0:
            batches.append(m.batches[other])
            metas.append(inputs[other])
            other = len(batches) - 1
        others.append(other)
    call = dataclasses.replace(first.call, inputs=metas, signature=None)
    if dev.device_type == "cpu":
        kernel = KernelEntry(_cpu_chain(members, chain, others), "cpu")
        stage = make_stage(call, kernel, batches, last.specs, dev, ctx)
    else:
        from ndd_triton.kernels.gpu.arith_chain import supported

        steps = [_step(m, k) for m, k in zip(members, chain, strict=True)]
        if not supported(steps):
            return None
        kernel = KernelEntry(_gpu_chain(steps, chain[0], others), "gpu")
        stage = None
    run = make_run(call, kernel, batches, last.specs, dev, ctx)
    return Invocation(name, run, ctx, None, stage)


def _step(member: Any, k: int) -> Any:
    """The kernel's description of one member (see `kernels/gpu/arith_chain.Step`)."""
    from ndd_triton.kernels.gpu.arith_chain import CAST, OTHER_LEFT, OTHER_RIGHT, UNARY, Step

    call = member.call
    out = member.specs[0].dtype
    if call.schema.name == "cast":
        return Step("cast", CAST, out, out, None)
    names = [spec.name for spec in call.schema.inputs]
    if len(names) == 1:
        form, const = UNARY, None
    else:
        form = OTHER_RIGHT if k == 0 else OTHER_LEFT
        const = call.values.get(f"{names[1 - k]}_constant")
    return Step(call.base_op, form, call.compute_dtype, out, const)


def _gpu_chain(steps: list[Any], main: int, others: list[int | None]) -> Any:
    """`fn(run, out, *operands, call)`: the chain as one launch."""
    from ndd_triton.kernels.gpu.arith_chain import launch_arith_chain

    def chain(run: Any, out: Any, *rest: Any) -> None:
        operands = [rest[o] if o is not None else None for o in others]
        launch_arith_chain(run, out, rest[main], steps, operands)

    return chain


def _cpu_chain(members: list[Any], chain: list[int], others: list[int | None]) -> Any:
    """`fn(out, *operands, arg)`: sample `arg.index` through every member's CPU kernel."""
    steps = [(m.call, m.kernel, m.specs[0], k, other, len(m.call.inputs))
             for m, k, other in zip(members, chain, others, strict=True)]  # fmt: skip
    layout = members[0].call.inputs[chain[0]].layout

    def run(out: np.ndarray, *rest: Any) -> None:
        i = rest[-1].index
        cur = rest[chain[0]]
        for s, (call, kernel, spec, k, other, count) in enumerate(steps):
            if s == len(steps) - 1:
                dst = out
            else:
                dst = np.empty(tuple(int(v) for v in spec.shapes[i]), spec.dtype.numpy_dtype)
            operands = [None] * count
            operands[k] = cur
            if other is not None:
                operands[1 - k] = rest[other]
            kernel.fn(dst, *operands, SampleArgs(call, i, layout))
            cur = dst

    return run
