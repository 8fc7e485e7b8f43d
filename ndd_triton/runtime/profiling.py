"""`ndd.profile()`: records what ran (op, device, mode, prepare/run times, GPU launches).

It is how users and tests check that eager mode overlaps prepare with run and that a ragged
batch costs one kernel launch. Recording is off (one list check per call) unless a profile is
active.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

ACTIVE: list[Profile] = []
_lock = threading.Lock()


@dataclass(slots=True)
class Record:
    """One op call."""

    op: str
    device: str
    mode: str
    batch_size: int
    prepare_s: float = 0.0
    run_s: float | None = None
    gpu_launches: int = 0
    run_thread: str = ""
    call_thread: str = field(default_factory=lambda: threading.current_thread().name)


class Profile:
    """Context manager collecting a `Record` per op call made while it is active."""

    def __init__(self) -> None:
        self.records: list[Record] = []
        self.compiled: list[CompiledIteration] = []  # iterations of compiled epochs

    def __enter__(self) -> Profile:
        with _lock:
            ACTIVE.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        with _lock:
            ACTIVE.remove(self)

    def add(self, record: Record) -> None:
        """Append a record (called by the op call path)."""
        with _lock:
            self.records.append(record)

    def table(self) -> str:
        """A plain-text table of the records."""
        rows = ["op                        device mode      batch prepare_us run_us  launches"]
        for r in self.records:
            run = f"{r.run_s * 1e6:7.1f}" if r.run_s is not None else "   n/a "
            rows.append(f"{r.op:<25} {r.device:<6} {r.mode:<9} {r.batch_size:>5} "
                        f"{r.prepare_s * 1e6:10.1f} {run} {r.gpu_launches:>8}")  # fmt: skip
        if self.compiled:
            rows += ["", "compiled iteration          groups launches  group: ops (launches)"]
            for it in self.compiled:
                groups = "; ".join(f"{'+'.join(g.ops)} ({g.gpu_launches})" for g in it.groups)
                rows.append(f"{it.epoch[:22]:<22} {it.iteration:>5} {len(it.groups):>6} "
                            f"{it.gpu_launches:>8}  {groups}")  # fmt: skip
        return "\n".join(rows)


def profile() -> Profile:
    """Start recording op calls: `with ndd.profile() as p: ...; print(p.table())`."""
    return Profile()


def new_record(op: str, device: str, mode: str, batch_size: int) -> Record | None:
    """A record registered with every active profile, or None when none is active."""
    if not ACTIVE:
        return None
    record = Record(op, device, mode, batch_size)
    for prof in list(ACTIVE):
        prof.add(record)
    return record


@dataclass(slots=True)
class CompiledGroup:
    """One group of a compiled iteration: the traced calls it runs and their invocations."""

    ops: tuple[str, ...]
    invocations: list[object]

    @property
    def gpu_launches(self) -> int:
        """Kernel launches of the group's invocations (known once they ran)."""
        return sum(r.gpu_launches for r in self.records())

    def records(self) -> list[Record]:
        """The profiling records of the group's invocations."""
        found = (getattr(inv, "record", None) for inv in self.invocations)
        return [r for r in found if r is not None]


@dataclass(slots=True)
class CompiledIteration:
    """One iteration of a compiled epoch, issued ahead: its groups in issue order."""

    epoch: str
    iteration: int
    groups: list[CompiledGroup]

    @property
    def gpu_launches(self) -> int:
        """Kernel launches of the whole iteration (one batch)."""
        return sum(g.gpu_launches for g in self.groups)


def add_compiled(epoch: str, iteration: int, groups: list[tuple[tuple[str, ...], list[object]]]
                 ) -> None:  # fmt: skip
    """Record a compiled iteration with every active profile (called by `runtime.compiled`)."""
    entry = CompiledIteration(epoch, iteration, [CompiledGroup(o, i) for o, i in groups])
    with _lock:
        for prof in ACTIVE:
            prof.compiled.append(entry)
