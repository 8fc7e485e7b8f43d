"""What compile mode's fusion groups are made of: `Group`, and the program queries that find
them (how often a result is read, which call alone feeds another)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from ndd_triton.runtime.eval_mode import EvalMode
from ndd_triton.runtime.trace import CallRecord

FUSABLE_MODES = (EvalMode.eager, EvalMode.deferred)


@dataclass(frozen=True, slots=True)
class Group:
    """Calls of the program that run as one pass (program indices, in chain order)."""

    kind: str
    calls: tuple[int, ...]
    # per member, the input that carries the chain (arith_chain: the previous member's result;
    # -1 for the first member, whose main operand is picked when it is issued)
    chain_inputs: tuple[int, ...] = ()
    # arith_chain trees: per member that reads a sub-chain's result as its other operand, that
    # member and the sub-chain's calls (`x * a + y * b`: the add and `y * b`); `calls` then in
    # program order
    subs: tuple[tuple[int, tuple[int, ...]], ...] = ()

    @property
    def last(self) -> int:
        """The member whose result the group's invocation produces."""
        return self.calls[-1]

    @property
    def sub(self) -> tuple[int, ...]:
        """The calls of every sub-chain (empty: not a tree)."""
        return tuple(c for _, calls in self.subs for c in calls)


RESAMPLE_OPS = frozenset(("random_resized_crop", "resize"))  # ops resampling through tap tables


def count_uses(program: list[CallRecord]) -> dict[tuple[int, int], int]:
    """How often each (call, output) is read by later calls."""
    uses: dict[tuple[int, int], int] = {}
    for rec in program:
        for ref in (*rec.inputs, *rec.args, rec.batch_size, rec.device):
            if ref.kind == "op":
                uses[(ref.index, ref.output)] = uses.get((ref.index, ref.output), 0) + 1
    return uses


def sole_producer(program: list[CallRecord], uses: dict[tuple[int, int], int],
                  rec: CallRecord, names: Collection[str]) -> int | None:  # fmt: skip
    """The call (an op of `names`) whose first output is `rec`'s first input and read by
    nothing else (same eval mode and context), or None."""
    src = rec.inputs[0] if rec.inputs else None
    if rec.mode not in FUSABLE_MODES or src is None or src.kind != "op" or src.output != 0 or \
            uses.get((src.index, 0), 0) != 1:  # fmt: skip
        return None
    prev = program[src.index]
    return src.index if prev.name in names and prev.mode is rec.mode and prev.ctx is rec.ctx \
        else None  # fmt: skip
