"""Compile mode's fusion of elementwise arithmetic chains (`runtime/fusion.py` plans the other
groups): *arith_chain*, a run of arithmetic operators and `ndd.math` functions in which each
call reads the previous call's result, which nothing else in the program reads: `(x - 127.5) /
127.5`, `(x / 255.0 - mean) / std` (NumPy arrays `mean`, `std`: batches that broadcast),
`ndd.math.sqrt(x * 2.0) + 1`, `ndd.cast(ndd.math.clamp(x * 1.5 - 20, 0, 255), dtype=ndd.uint8)`
(a `cast` is a step; `clamp` too, its chain side the value, `lo` and `hi` its other operands).
A call's other operand may be a constant (a Python or NumPy
scalar) or any batch of the result's shape or broadcasting to it; the chain's value must keep
the result's shape (the other operand does not widen it). A member's other operand may also be
the result of a second chain (or one chainable call) that nothing else reads: `x * a + y * b`,
`(x - m) / s + y * 0.5` (a *tree*: the second chain runs inside the same pass,
`Group.subs`; one per member, none nested).

* GPU: one launch for the whole chain (`kernels/gpu/arith_chain.py`): each step is the single
  op's expression in its compute type followed by the conversion its store does, in registers,
  so the bytes are those of the calls run one by one; at most 8 steps.
* CPU: one pool job in which each sample goes through every member's own CPU kernel while it
  is in cache (no intermediate batch).

Chains of one call run on their own.
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
MAX_TREE_STEPS = 8  # a tree's steps in the GPU kernel: its calls' (`kernel_steps`), one START
ARITH_OPS = frozenset([*(s.name for s in (*arithmetic.schemas, *math.schemas)), "cast"])
CLAMP = "math.clamp"  # its chain side is the value (input 0); two kernel steps
# the types the chain kernel casts to (its TYPE_CODES; not imported here: GPU-only module)
_CAST_TYPES = frozenset(("bool", "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "f16",
                         "f32", "f64"))  # fmt: skip


def _chainable(rec: CallRecord) -> bool:
    """An arithmetic call, or a cast to a type the chain kernel casts to."""
    if rec.name != "cast":
        return rec.name in ARITH_OPS
    ref = rec.args[[a.name for a in rec.schema.args].index("dtype")]
    try:
        dtype = to_dtype_arg(ref.value, "cast")
    except (TypeError, ValueError):
        return False
    return dtype.name in _CAST_TYPES


def kernel_steps(name: str) -> int:
    """The GPU chain kernel's steps of one call (`clamp`: max, then min)."""
    return 2 if name == CLAMP else 1


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
                 and program[ref.index].ctx is rec.ctx and ref.index not in groups
                 and (k == 0 or rec.name != CLAMP)]  # fmt: skip
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
    _join_sub_chains(program, uses, groups)
    return groups


def _join_sub_chains(program: list[CallRecord], uses: dict[tuple[int, int], int],
                     groups: dict[int, Group]) -> None:  # fmt: skip
    """Make trees: each chain member after the first whose other operand is read from a chain
    (or one chainable call) that nothing else reads takes that chain in, while the kernel's
    steps last (a sub-chain takes its calls and one START)."""
    chains = {id(g): g for g in groups.values() if g.kind == "arith_chain"}
    for group in chains.values():
        if groups.get(group.calls[0]) is not group:  # taken in by another tree meanwhile
            continue
        subs: list[tuple[int, tuple[int, ...]]] = []
        inputs = dict(zip(group.calls, group.chain_inputs, strict=True))
        for j in range(1, len(group.calls)):
            rec = program[group.calls[j]]
            k = group.chain_inputs[j]
            if len(rec.inputs) != 2 or k not in (0, 1):
                continue
            ref = rec.inputs[1 - k]
            if ref.kind != "op" or ref.output != 0 or uses.get((ref.index, 0)) != 1:
                continue
            sub_rec = program[ref.index]
            if not _chainable(sub_rec) or sub_rec.mode is not rec.mode or \
                    sub_rec.ctx is not rec.ctx or ref.index in group.calls:  # fmt: skip
                continue
            sub = groups.get(ref.index)
            if sub is None:
                sub_calls, sub_inputs = (ref.index,), (-1,)
            elif sub.kind == "arith_chain" and sub.calls[-1] == ref.index and not sub.subs:
                sub_calls, sub_inputs = sub.calls, sub.chain_inputs
            else:
                continue
            steps = sum(kernel_steps(program[c].name) for c in (*inputs, *sub_calls))
            if steps + len(subs) + 1 > MAX_TREE_STEPS:
                continue
            inputs.update(zip(sub_calls, sub_inputs, strict=True))
            subs.append((group.calls[j], sub_calls))
        if subs:
            calls = tuple(sorted(inputs))
            tree = Group("arith_chain", calls, tuple(inputs[c] for c in calls), tuple(subs))
            for c in calls:
                groups[c] = tree


def tree_parts(group: Group, members: list[Any]) -> list[tuple[Group | None, list[int]]]:
    """What to try, in turn, when a tree cannot run as one pass: (a smaller group or None, the
    positions in `members` of the calls run on their own before it): the tree without the
    sub-chains' first calls whose results have another shape (`1 - lam` of per-sample scalars
    before `y * (1 - lam)`), then the main chain alone (the sub-chains' calls on their own)."""
    shape = members[-1].specs[0].shapes
    at = {c: i for i, c in enumerate(group.calls)}
    inputs = dict(zip(group.calls, group.chain_inputs, strict=True))
    subs, dropped = [], []
    for reader, calls in group.subs:
        kept = list(calls)
        while kept and not np.array_equal(members[at[kept[0]]].specs[0].shapes, shape):
            dropped.append(kept.pop(0))
        if kept:
            subs.append((reader, tuple(kept)))
    parts: list[tuple[Group | None, list[int]]] = []
    if subs and dropped:
        calls = tuple(c for c in group.calls if c not in dropped)
        starts = {sub[0] for _, sub in subs}  # (their main operand is picked when issued)
        parts.append((Group("arith_chain", calls, tuple(-1 if c in starts else inputs[c]
                                                        for c in calls), tuple(subs)),
                      sorted(at[c] for c in dropped)))  # fmt: skip
    main = tuple(c for c in group.calls if c not in group.sub)
    parts.append((Group("arith_chain", main, tuple(inputs[c] for c in main))
                  if len(main) > 1 else None, [at[c] for c in group.sub]))  # fmt: skip
    return parts


def _chain_input(member: Any) -> int | None:
    """The input of a chain's first member that carries the chain: the first of the
    result's shape."""
    metas = member.call.inputs
    return next((k for k, meta in enumerate(metas) if meta is not None and
                 np.array_equal(meta.shapes, member.specs[0].shapes)), None)  # fmt: skip


def arith_invocation(name: str, group: Group, members: list[Any], ctx: Any
                     ) -> Invocation | None:  # fmt: skip
    """The chain's one invocation (producing the last member's output), or None when the
    members cannot run as one pass (then each runs on its own). A tree's sub-chains run where
    their members read their results (START keeps the main value; that member reads it back as
    its chain side and the sub-chain's value as its other operand)."""
    at = dict(zip(group.calls, members, strict=True))
    sub_of = dict(group.subs)
    inputs = dict(zip(group.calls, group.chain_inputs, strict=True))
    main = [c for c in group.calls if c not in group.sub]
    first, last = at[main[0]], at[main[-1]]
    dev = first.dev
    batches: list[Any] = []
    metas: list[Any] = []
    # (member or None: START, k, other operand(s), reg); a clamp's others: (lo, hi)
    plan: list[tuple[Any, int, Any, bool]] = []

    def operand(m: Any, idx: int) -> int:
        batches.append(m.batches[idx])
        metas.append(m.call.inputs[idx])
        return len(batches) - 1

    def add_chain(calls: list[int]) -> bool:
        for j, c in enumerate(calls):
            m = at[c]
            k = _chain_input(m) if j == 0 else inputs[c]
            mi = m.call.inputs
            clamp = m.call.schema.name == CLAMP
            if k is None or len(mi) > 2 + clamp or (clamp and k != 0) or mi[k] is None or \
                    not np.array_equal(m.specs[0].shapes, mi[k].shapes) or \
                    not np.array_equal(m.specs[0].shapes, last.specs[0].shapes):  # fmt: skip
                return False  # (every value has the result's shape)
            reg = c in sub_of
            if j == 0 and not plan:  # the tree's input
                operand(m, k)
            elif j == 0:  # a sub-chain's input, loaded by START
                plan.append((None, 0, operand(m, k), False))
            if reg and not add_chain(list(sub_of[c])):  # the sub-chain's steps come first
                return False
            other: Any = 1 - k if len(mi) == 2 and mi[1 - k] is not None else None
            if reg:
                other = None
            elif clamp:  # lo and hi: operands, or None for a constant
                other = tuple(operand(m, i) if mi[i] is not None else None for i in (1, 2))
            elif other is not None:
                other = operand(m, other)
            plan.append((m, k, other, reg))
        return True

    if not add_chain(main):
        return None
    call = dataclasses.replace(first.call, inputs=metas, signature=None)
    if dev.device_type == "cpu":
        kernel = KernelEntry(_cpu_chain(plan, metas[0].layout), "cpu")
        stage = make_stage(call, kernel, batches, last.specs, dev, ctx)
    else:
        from ndd_triton.kernels.gpu.arith_chain import supported

        steps, others = _gpu_steps(plan, metas)
        if not supported(steps):
            return None
        kernel = KernelEntry(_gpu_chain(steps, others), "gpu")
        stage = None
    run = make_run(call, kernel, batches, last.specs, dev, ctx)
    return Invocation(name, run, ctx, None, stage)


def _cpu_chain(plan: list[tuple[Any, int, Any, bool]], layout: Any) -> Any:
    """`fn(out, *operands, arg)`: sample `arg.index` through the steps (each member's own CPU
    kernel, while the sample is in cache; START keeps the value and takes a sub-chain's
    input)."""

    dtypes = [None if m is None else m.specs[0].dtype.numpy_dtype for m, _, _, _ in plan]
    last = len(plan) - 1

    def run(out: np.ndarray, *rest: Any) -> None:
        i = rest[-1].index
        cur, kept = rest[0], None
        for s, (m, k, other, reg) in enumerate(plan):
            if m is None:
                cur, kept = rest[other], cur  # type: ignore[index]
                continue
            # (every value has the result's shape: `arith_invocation` checked it)
            dst = out if s == last else np.empty(out.shape, dtypes[s])
            operands = [None] * len(m.call.inputs)
            operands[k] = kept if reg else cur
            if reg:
                operands[1 - k] = cur
            elif type(other) is tuple:  # a clamp's lo and hi (None: a constant)
                operands[1:] = [None if o is None else rest[o] for o in other]
            elif other is not None:
                operands[1 - k] = rest[other]
            m.kernel.fn(dst, *operands, SampleArgs(m.call, i, layout))
            cur = dst

    return run


def _gpu_steps(plan: list[tuple[Any, int, Any, bool]], metas: list[Any]
               ) -> tuple[list[Any], list[int | None]]:  # fmt: skip
    """The kernel's steps of `plan` and each step's operand (an index into the chain's
    operands, or None): a START loads its operand; a clamp is `max` with `lo`, then `min`
    with `hi`, both in its compute type (its kernel's order), the second storing its type."""
    from ndd_triton.kernels.gpu.arith_chain import OTHER_RIGHT, START, Step

    steps, others = [], []
    for m, k, other, reg in plan:
        if m is None:
            steps.append(Step("start", START, metas[other].dtype, metas[other].dtype, None))
            others.append(other)
        elif m.call.schema.name == CLAMP:
            call, ct = m.call, m.call.compute_dtype
            steps += [Step("max", OTHER_RIGHT, ct, ct, call.values.get("lo_constant")),
                      Step("min", OTHER_RIGHT, ct, m.specs[0].dtype,
                           call.values.get("hi_constant"))]  # fmt: skip
            others += list(other)
        else:
            steps.append(_step(m, k, reg))
            others.append(other)
    return steps, others


def _step(member: Any, k: int, reg: bool = False) -> Any:
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
        const = None if reg else call.values.get(f"{names[1 - k]}_constant")
    return Step(call.base_op, form, call.compute_dtype, out, const, reg)


def _gpu_chain(steps: list[Any], others: list[int | None]) -> Any:
    """`fn(run, out, *operands, call)`: the chain as one launch (operand 0: its input)."""
    from ndd_triton.kernels.gpu.arith_chain import launch_arith_chain

    def chain(run: Any, out: Any, *rest: Any) -> None:
        operands = [rest[o] if o is not None else None for o in others]
        launch_arith_chain(run, out, rest[0], steps, operands)

    return chain
