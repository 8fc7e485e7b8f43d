"""Where the detection recipe's threads idle (eager mode): a timeline of one epoch.

Run: `python perf/detection_timeline.py [--copies 8] [--batch 32] [--threads 2] [--epochs 3]`.
Runs examples/detection.py's `detection_batches` on the bundled annotated photos (as
`perf/bench_detection.py` does) and records every per-sample kernel call on the pool threads
(plain runs and pipelined stages) and every invocation run outside the pool (on the executor
or inline on the caller). Per epoch it prints images/s, process CPU ms per image, the share of
wall time with no pool thread busy ("both idle": batch boundaries, serial work on the executor)
and with only some busy ("some idle": tails, GIL waits), the kernel wall time per op and
thread kind, and for the last epoch the runs outside the pool and each pool thread's gaps
over 2 ms. On a loaded machine the spans include time spent waiting for a CPU.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE), os.path.join(os.path.dirname(HERE), "examples")]

import bench_detection  # noqa: E402
from detection import coco_reader, detection_batches, ssd_anchors  # noqa: E402
from pool_timeline import _idle  # noqa: E402
from pool_timeline import _op_of as _closure_op  # noqa: E402

import ndd_triton as ndd  # noqa: E402
from ndd_triton.runtime import invocation as _invocation  # noqa: E402
from ndd_triton.runtime import thread_pool as _thread_pool  # noqa: E402

Span = tuple[str, float, float, str]  # thread, start, end, op ("run <op>": a whole run)
_spans: list[Span] = []


def _op_of(fn: Callable[..., Any]) -> str:
    """The op of a per-sample closure, also through a kernel's `bind` closure (decoders)."""
    cells = dict(zip(fn.__code__.co_freevars, [c.cell_contents for c in fn.__closure__ or []],
                     strict=True))  # fmt: skip
    bound = cells.get("bound")
    return _closure_op(bound if callable(bound) and bound.__closure__ else fn)


def _record() -> None:
    """Wrap the pool's per-sample calls and `Invocation.run` to record spans."""
    run, run_one, inv_run = (_thread_pool.ThreadPool.run, _thread_pool.StagedJob._run_one,
                             _invocation.Invocation.run)  # fmt: skip

    def pool_run(self: Any, fn: Callable[[int], None], count: int, *args: Any,
                 **kwargs: Any) -> None:  # fmt: skip
        op = _op_of(fn)

        def timed(i: int) -> None:
            start = time.perf_counter()
            fn(i)
            name = threading.current_thread().name  # (the caller helps the pool: pool work)
            _spans.append((name if name.startswith("ndd-cpu") else "ndd-cpu(caller)", start,
                           time.perf_counter(), op))  # fmt: skip

        run(self, timed, count, *args, **kwargs)

    def staged_one(self: Any, stage: int, i: int) -> None:
        op = _op_of(self._fns[stage])
        start = time.perf_counter()
        run_one(self, stage, i)
        _spans.append((threading.current_thread().name, start, time.perf_counter(), op))

    def invocation_run(self: Any) -> None:
        start = time.perf_counter()
        inv_run(self)
        _spans.append((threading.current_thread().name, start, time.perf_counter(),
                       "run " + self.name))  # fmt: skip

    _thread_pool.ThreadPool.run = pool_run  # type: ignore[method-assign]
    _thread_pool.StagedJob._run_one = staged_one  # type: ignore[method-assign]
    _invocation.Invocation.run = invocation_run  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=8)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=3)
    opts = parser.parse_args()
    _record()
    ndd.set_num_threads(opts.threads)
    anchors = ssd_anchors()
    with tempfile.TemporaryDirectory() as tmp:
        ann = os.path.join(tmp, "coco.json")
        bench_detection.annotations(opts.copies, ann)
        reader = coco_reader(bench_detection.DATA, ann, seed=0)

        def epoch(seed: int) -> int:
            n = 0
            for images, _, _ in detection_batches(opts.batch, 300, "cpu", seed=seed,
                                                  anchors=anchors, reader=reader):  # fmt: skip
                n += images.shape[0]
            return n

        epoch(0)  # warm-up
        print(f"# detection recipe, batch {opts.batch}, {opts.threads} threads, eager mode; "
              f"load avg {os.getloadavg()[0]:.1f}")
        for e in range(1, opts.epochs + 1):
            _spans.clear()
            start, cpu = time.perf_counter(), time.process_time()
            n = epoch(e)
            end, cpu = time.perf_counter(), time.process_time() - cpu
            wall = end - start
            spans = list(_spans)
            pool = [s for s in spans if s[0].startswith("ndd-cpu")]
            none, some = _idle(pool, start, end, opts.threads)
            per_op: collections.Counter[str] = collections.Counter()
            for thread, a, b, op in spans:
                kind = "pool" if thread.startswith("ndd-cpu") else thread
                per_op[f"{op} ({kind})"] += b - a
            print(f"{n / wall:7.1f} img/s  wall {wall * 1e3:.1f} ms  CPU {cpu / n * 1e3:.2f} "
                  f"ms/img  both idle {none / wall:5.1%}  some idle {some / wall:5.1%}")
            print("        ms per epoch: " + ", ".join(f"{k} {v * 1e3:.1f}"
                                                      for k, v in per_op.most_common()))
        print("last epoch, runs outside the pool (ms from the epoch's start):")
        for thread, a, b, op in sorted(spans, key=lambda s: s[1]):
            if op.startswith("run ") and not thread.startswith("ndd-cpu"):
                print(f"    {thread:14s} {(a - start) * 1e3:7.1f} {(b - start) * 1e3:7.1f} {op}")
        for thread in sorted({s[0] for s in pool}):
            spans_t = sorted((a, b) for t, a, b, _ in pool if t == thread)
            gaps = [(round((x[1] - start) * 1e3, 1), round((y[0] - start) * 1e3, 1))
                    for x, y in itertools.pairwise(spans_t) if y[0] - x[1] > 2e-3]
            print(f"    {thread}: first sample at {(spans_t[0][0] - start) * 1e3:.1f} ms, last "
                  f"ends at {(spans_t[-1][1] - start) * 1e3:.1f} ms, gaps over 2 ms {gaps}")


if __name__ == "__main__":
    main()
