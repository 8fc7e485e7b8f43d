"""`ndd.profile()`: records what ran (op, device, mode, prepare/run times, GPU launches).

It is how users and tests check that eager mode overlaps prepare with run and that a ragged
batch costs one kernel launch. Recording is off (one list check per call) unless a profile is
active. Readers record the time their prefetch thread spends loading each batch (op
`readers.<Name>`, mode `io`). `totals()` sums per op; `export_chrome_trace(path)` writes the
calls as a Chrome trace (chrome://tracing, Perfetto): prepare on the calling thread, run on the
thread that ran it.
"""

from __future__ import annotations

import json
import os
import threading
import time
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
    prepare_start: float = 0.0  # time.perf_counter() values (for the trace)
    run_start: float = 0.0


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

    def totals(self) -> dict[str, dict[str, float]]:
        """Per op: calls, samples, prepare and run seconds, GPU launches (most run time first)."""
        out: dict[str, dict[str, float]] = {}
        for r in self.records:
            t = out.setdefault(r.op, {"calls": 0, "samples": 0, "prepare_s": 0.0, "run_s": 0.0,
                                      "gpu_launches": 0})  # fmt: skip
            t["calls"] += 1
            t["samples"] += r.batch_size
            t["prepare_s"] += r.prepare_s
            t["run_s"] += r.run_s or 0.0
            t["gpu_launches"] += r.gpu_launches
        return dict(sorted(out.items(), key=lambda kv: -kv[1]["run_s"]))

    def totals_table(self) -> str:
        """`totals()` as a plain-text table."""
        rows = ["op                        calls  samples prepare_ms    run_ms  launches"]
        for op, t in self.totals().items():
            rows.append(f"{op:<25} {t['calls']:>5.0f} {t['samples']:>8.0f} "
                        f"{t['prepare_s'] * 1e3:10.2f} {t['run_s'] * 1e3:9.2f} "
                        f"{t['gpu_launches']:>9.0f}")  # fmt: skip
        return "\n".join(rows)

    def chrome_trace(self) -> dict[str, object]:
        """The records as Chrome trace events (microseconds)."""
        events: list[dict[str, object]] = []
        pid = os.getpid()
        for r in self.records:
            args = {"device": r.device, "mode": r.mode, "batch_size": r.batch_size,
                    "gpu_launches": r.gpu_launches}  # fmt: skip
            if r.prepare_s and r.prepare_start:
                events.append({"name": f"{r.op} (prepare)", "cat": "prepare", "ph": "X",
                               "ts": r.prepare_start * 1e6, "dur": r.prepare_s * 1e6,
                               "pid": pid, "tid": r.call_thread, "args": args})  # fmt: skip
            if r.run_s is not None and r.run_start:
                events.append({"name": r.op, "cat": "io" if r.mode == "io" else "run",
                               "ph": "X", "ts": r.run_start * 1e6, "dur": r.run_s * 1e6,
                               "pid": pid, "tid": r.run_thread or r.call_thread,
                               "args": args})  # fmt: skip
        return {"traceEvents": events, "displayTimeUnit": "ms"}

    def export_chrome_trace(self, path: str | os.PathLike[str]) -> str:
        """Write `chrome_trace()` as JSON to `path` (open it in chrome://tracing or Perfetto)."""
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.chrome_trace(), f)
        return os.fspath(path)

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


def record_io(op: str, batch_size: int, start: float) -> None:
    """Record a reader's load of one batch that began at `start` (time.perf_counter())."""
    if ACTIVE:
        now = time.perf_counter()
        record = new_record(op, "cpu", "io", batch_size)
        if record is not None:
            record.run_start, record.run_s = start, now - start
            record.run_thread = threading.current_thread().name
