"""How busy the CPU pool is in the RN50 data path: idle time between ops and batches.

Run: `python perf/pool_timeline.py [--count 512] [--batch 64] [--threads 2] [--epochs 3]
[--compile]`.
On the folder of `bench_rn50.py`, runs pipeline (a) (`readers.File` -> `decoders.image` ->
`random_resized_crop` -> `flip(coin_flip)` -> `crop_mirror_normalize` -> `.torch()`) in eager
mode (`--compile`: `next_epoch(compile=True)`) and records every per-sample kernel call on the pool threads (start, end, op). Per epoch
it prints images/s, process CPU ms per image, each pool thread's busy fraction, the share of
wall time with no pool thread busy ("both idle": batch boundaries, gaps between ops) and with
only some busy ("some idle": op tails, GIL waits), and the kernel time per image by op (wall
time inside the kernel calls, GIL waits included).
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_rn50

import ndd_triton as ndd
from ndd_triton.runtime import thread_pool as _thread_pool

Span = tuple[str, float, float, str]  # thread, start, end, op
_spans: list[Span] = []


def _op_of(fn: Callable[..., Any]) -> str:
    """The op name of a per-sample closure of the run phase (its `call`), else its name."""
    cells = dict(zip(fn.__code__.co_freevars, [c.cell_contents for c in fn.__closure__ or []],
                     strict=True))  # fmt: skip
    call = cells.get("call")
    return call.schema.name if call is not None else getattr(fn, "__qualname__", "?")


def _record() -> None:
    """Wrap the pool's per-sample calls (plain runs and pipelined stages) to record spans."""
    run, run_one = _thread_pool.ThreadPool.run, _thread_pool.StagedJob._run_one

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

    _thread_pool.ThreadPool.run = pool_run  # type: ignore[method-assign]
    _thread_pool.StagedJob._run_one = staged_one  # type: ignore[method-assign]


def _idle(spans: list[Span], start: float, end: float, threads: int) -> tuple[float, float]:
    """Seconds with no pool thread busy, and with some (not all) busy."""
    events = sorted([(a, 1) for _, a, _, _ in spans] + [(b, -1) for _, _, b, _ in spans])
    busy, last, none, some = 0, start, 0.0, 0.0
    for t, step in events:
        if busy == 0:
            none += t - last
        elif busy < threads:
            some += t - last
        busy += step
        last = t
    return none + (end - last), some


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=512)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--compile", action="store_true", help="next_epoch(compile=True)")
    opts = parser.parse_args()
    _record()
    ndd.set_num_threads(opts.threads)
    rng = ndd.random.RNG(seed=42)
    with tempfile.TemporaryDirectory() as root:
        bench_rn50.make_folder(root, opts.count)
        reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=1)

        mode = {"compile": True} if opts.compile else {}

        def epoch() -> int:
            n = 0
            for jpegs, labels in reader.next_epoch(batch_size=opts.batch, **mode):
                images = ndd.decoders.image(jpegs, device="cpu")
                images = ndd.random_resized_crop(images, size=224, rng=rng)
                flips = ndd.random.coin_flip(batch_size=jpegs.batch_size, rng=rng)
                images = ndd.flip(images, horizontal=flips)
                out = ndd.crop_mirror_normalize(images, mean=bench_rn50.MEAN, std=bench_rn50.STD)
                out.torch()
                labels.torch()
                n += jpegs.batch_size
            return n

        epoch()  # warm-up
        print(f"# {opts.count} JPEGs, batch {opts.batch}, {opts.threads} threads, "
              f"{'compile' if opts.compile else 'eager'} mode; "
              f"load avg {os.getloadavg()[0]:.1f}")
        for _ in range(opts.epochs):
            _spans.clear()
            start, cpu = time.perf_counter(), time.process_time()
            n = epoch()
            end, cpu = time.perf_counter(), time.process_time() - cpu
            wall = end - start
            spans = list(_spans)
            per_thread: collections.Counter[str] = collections.Counter()
            per_op: collections.Counter[str] = collections.Counter()
            for thread, a, b, op in spans:
                per_thread[thread] += b - a
                per_op[op] += b - a
            none, some = _idle(spans, start, end, opts.threads)
            busy = " ".join(f"{v / wall:.2f}" for _, v in sorted(per_thread.items()))
            ops = ", ".join(f"{op} {v / n * 1e3:.3f}" for op, v in per_op.most_common())
            print(f"{n / wall:7.0f} img/s  CPU {cpu / n * 1e3:.2f} ms/img  pool threads busy "
                  f"{busy}  both idle {none / wall:5.1%}  some idle {some / wall:5.1%}")
            print(f"        kernel ms/img: {ops}")


if __name__ == "__main__":
    main()
