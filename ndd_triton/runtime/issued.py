"""Compile mode's bookkeeping of iterations issued ahead (`runtime/compiled.py`): what one
iteration issued, a source error kept for its turn, the epoch's iterator, and where issuing
ahead stops for a reused program until its first iteration confirms it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ndd_triton.random._rng import RNG, RNGState
from ndd_triton.runtime.trace import CallRecord, IterationRefs

if TYPE_CHECKING:
    from ndd_triton.runtime.compiled import Session


class Issued:
    """One iteration issued ahead: its source values, results, the RNG states before each
    call (`snapshots[p]`; one more after the last call) and the members of its fusion groups
    prepared so far (`members[first call]`: (prepared call, its own lazy invocation) in call
    order; a group issued in two parts, around the barrier, finds its first part here)."""

    __slots__ = ("groups", "members", "refs", "snapshots")

    def __init__(self, source_values: tuple[Any, ...]) -> None:
        self.refs = IterationRefs(source_values)
        self.snapshots: list[list[tuple[RNG, RNGState]] | None] = []
        self.groups: list[Any] = []  # profiling: (op names, invocations) per issued group
        self.members: dict[int, list[Any]] = {}

    @property
    def issued(self) -> int:
        return len(self.refs.results)

    def restore(self, position: int) -> None:
        """The RNGs back to their states before call `position` (undoing the draws issued
        after it; a None state: only calls before the barrier were issued, nothing to undo)."""
        snapshot = self.snapshots[position] if position < len(self.snapshots) else None
        for rng, state in snapshot or ():
            rng.set_state(state)

    def truncate(self, position: int, groups: dict[int, Any]) -> None:
        """Forget the calls from `position` on (results, RNG states, group members)."""
        self.refs.truncate(position)
        del self.snapshots[position + 1:]
        self.members = {start: done[:sum(q < position for q in groups[start].calls)]
                        for start, done in self.members.items() if start < position}  # fmt: skip

    def keep_groups(self, old: dict[int, Any], new: dict[int, Any]) -> None:
        """After a re-trace: keep the members of the groups the new program has as well."""
        self.members = {start: done for start, done in self.members.items()
                        if new.get(start) == old.get(start)}  # fmt: skip


class Failed:
    """The source raised while it was read ahead: raised again when its turn comes."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


class CompiledEpoch:
    """Iterator of a compiled epoch; `session` tells what was traced, replayed or fell back."""

    __slots__ = ("_gen", "session")

    def __init__(self, session: Session, gen: Iterator[Any]) -> None:
        self.session = session
        self._gen = gen

    def __iter__(self) -> CompiledEpoch:
        return self

    def __next__(self) -> Any:
        return next(self._gen)

    def close(self) -> None:
        """End the epoch early (undoes the RNG draws issued ahead of the current call)."""
        self._gen.close()  # type: ignore[attr-defined]


def speculation_barrier(program: list[CallRecord] | None) -> int:
    """The program's first random call or call reading an object compared by identity
    (len(program): none)."""
    program = program or []
    return next((p for p, rec in enumerate(program) if rec.schema.random or any(
        ref.kind == "obj" for ref in (*rec.inputs, *rec.args, rec.batch_size, rec.device))),
        len(program))  # fmt: skip


def as_tuple(values: Any) -> tuple[Any, ...]:
    return values if isinstance(values, tuple) else (values,)


def invocations(result: Any) -> list[Any]:
    """The invocations behind a call's results (for profiling)."""
    outs = result if isinstance(result, tuple) else (result,)
    found = []
    for out in outs:
        batch = getattr(out, "_source", out)
        inv = getattr(getattr(batch, "_producer", None), "inv", None)
        if inv is not None and all(inv is not seen for seen in found):
            found.append(inv)
    return found
