"""Where the CPU time of the RN50 data path goes: per op, kernel vs framework, ms per image.

Run: `python perf/profile_rn50.py [--count 256] [--batch 64] [--threads 2] [--epochs 3]
[--cprofile 25] [--dali-python /work/dali-venv/bin/python]`. Prints one table per recipe ((a)
and (b) of `perf/bench_rn50.py`), with DALI dynamic mode's per-op CPU times alongside when
`--dali-python` names an interpreter with DALI (the same recipe, run in a subprocess; DALI
has no kernel/framework split, and its outputs end with `.evaluate()`).

On the folder of `bench_rn50.py`, each recipe runs `--epochs` epochs (after a warm-up) in
`EvalMode.sync_cpu`, so each op call returns when its samples are done and the CPU time of
the process around the call (all threads) is the op's whole cost. Every registered CPU kernel
is wrapped to add up the CPU time of its own thread (`time.thread_time`), which splits each
op into:

* kernel: time inside the op's CPU kernel functions (pixel work, on the pool threads);
* framework: the rest of the call (argument preparation, inference incl. JPEG header parsing
  for decoders, output allocation, dispatch over the pool, result wrapping).

"reader" is the CPU time of `next(epoch)` in the consumer thread plus the prefetch thread's
work in the same process (file reads, packing); "other" is the loop's own Python (`.torch()`,
random draws outside the listed ops). With `--cprofile N`, the consumer thread of one epoch
of recipe (b) is also run under cProfile and its N most expensive functions (cumulative,
consumer thread only) are listed.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import dataclasses
import json
import os
import pstats
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_rn50

ndd: Any = None  # ndd_triton, or DALI's dynamic mode in the --dali-worker subprocess
_kernel_cpu: collections.Counter[str] = collections.Counter()
_lock = threading.Lock()


def _wrap_kernels() -> None:
    """Make every registered CPU kernel add its thread CPU time to `_kernel_cpu[op]`."""
    import importlib
    import pkgutil

    import ndd_triton.kernels.cpu as cpu
    from ndd_triton.kernels import _registry

    for info in pkgutil.iter_modules(cpu.__path__):
        importlib.import_module(f"ndd_triton.kernels.cpu.{info.name}")
    def timed(fn: Any, op: str) -> Any:
        def run(*args: Any) -> Any:
            start = time.thread_time()
            try:
                return fn(*args)
            finally:
                spent = time.thread_time() - start
                with _lock:
                    _kernel_cpu[op] += spent

        return run

    def bound(bind: Any, op: str) -> Any:
        def make(call: Any) -> Any:
            one = bind(call)
            return timed(one, op) if one is not None else None

        return make

    def wrapped(entry: Any, op: str) -> Any:
        # every form the run phase may pick (packed spans, bound samples, the per-sample form),
        # so the profile measures the paths the pipeline really takes
        return dataclasses.replace(
            entry, fn=timed(entry.fn, op),
            packed=timed(entry.packed, op) if entry.packed is not None else None,
            bind=bound(entry.bind, op) if entry.bind is not None else None,
            per_sample=wrapped(entry.per_sample, op) if entry.per_sample is not None else None)

    for (op, backend), entry in list(_registry._KERNELS.items()):
        if backend == "cpu":
            _registry._KERNELS[(op, backend)] = wrapped(entry, op)


class OpTimer:
    """Process CPU time per op call (all threads), keyed by a label."""

    def __init__(self) -> None:
        self.total: collections.Counter[str] = collections.Counter()

    def __call__(self, label: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        out = fn(*args, **kwargs)
        if hasattr(out, "evaluate"):
            out.evaluate()
        self.total[label] += time.process_time() - start
        return out


def recipe_a(t: OpTimer, jpegs: Any, rng: Any) -> Any:
    images = t("decoders.image", ndd.decoders.image, jpegs, device="cpu")
    images = t("random_resized_crop", ndd.random_resized_crop, images, size=224, rng=rng)
    flips = t("random.coin_flip", ndd.random.coin_flip, batch_size=jpegs.batch_size, rng=rng)
    images = t("flip", ndd.flip, images, horizontal=flips)
    return t("crop_mirror_normalize", ndd.crop_mirror_normalize, images,
             mean=bench_rn50.MEAN, std=bench_rn50.STD)


def recipe_b(t: OpTimer, jpegs: Any, rng: Any) -> Any:
    images = t("decoders.image_random_crop", ndd.decoders.image_random_crop, jpegs,
               device="cpu", rng=rng)
    images = t("resize", ndd.resize, images, size=[224, 224])
    mirror = t("random.coin_flip", ndd.random.coin_flip, batch_size=jpegs.batch_size, rng=rng)
    return t("crop_mirror_normalize", ndd.crop_mirror_normalize, images,
             mean=bench_rn50.MEAN, std=bench_rn50.STD, mirror=mirror)


Result = tuple[collections.Counter[str], dict[str, float], float, float, int]


def run(root: str, recipe: Any, opts: argparse.Namespace, profiler: Any = None
        ) -> Result:  # fmt: skip
    """(per-op timer, kernel CPU s per op, reader CPU s, total CPU s, images) over
    `opts.epochs` epochs."""
    rng = ndd.random.RNG(seed=42)
    reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=1)
    timer = OpTimer()
    dali = ndd.__name__ != "ndd_triton"

    def finish(out: Any, labels: Any) -> None:
        for b in (out, labels):
            b.evaluate() if dali else b.torch()

    def epoch(t: OpTimer) -> tuple[float, int]:
        reading, n = 0.0, 0
        it = iter(reader.next_epoch(batch_size=opts.batch))
        while True:
            start = time.process_time()
            try:
                jpegs, labels = next(it)
            except StopIteration:
                break
            reading += time.process_time() - start
            out = recipe(t, jpegs, rng)
            t("other (.torch())", finish, out, labels)
            n += jpegs.batch_size
        return reading, n

    with ndd.EvalMode.sync_cpu:
        epoch(OpTimer())  # warm-up
        _kernel_cpu.clear()
        reading, n = 0.0, 0
        start = time.process_time()
        epochs = 1 if profiler is not None else opts.epochs
        if profiler is not None:
            profiler.enable()
        for _ in range(epochs):
            r, k = epoch(timer)
            reading, n = reading + r, n + k
        if profiler is not None:
            profiler.disable()
        total = time.process_time() - start
    return timer.total, dict(_kernel_cpu), reading, total, n


def table(title: str, result: Result, dali: Result | str | None) -> None:
    """One recipe: ndd's per-op CPU ms/img split into kernel and framework, DALI's alongside."""
    timer, kernels, reading, total, n = result
    per = 1e3 / n
    dali_ops: dict[str, float] = {}
    if isinstance(dali, tuple):
        dali_ops = {k: v * 1e3 / dali[4] for k, v in dali[0].items()}
        dali_ops["reader (next + prefetch)"] = dali[2] * 1e3 / dali[4]
        dali_ops["all"] = dali[3] * 1e3 / dali[4]
    print(f"\n{title}: {n} images; CPU ms/img")
    print(f"{'':<30} {'ndd op':>8} {'kernel':>8} {'framework':>10} {'DALI op':>8}")
    listed = 0.0
    for label, spent in timer.items():
        kernel = kernels.get(label, 0.0)
        listed += spent
        print(f"{label:<30} {spent * per:8.3f} {kernel * per:8.3f} {(spent - kernel) * per:10.3f}"
              f" {_fmt(dali_ops.get(label))}")
    print(f"{'reader (next + prefetch)':<30} {reading * per:8.3f} {'':8} {'':10} "
          f"{_fmt(dali_ops.get('reader (next + prefetch)'))}")
    print(f"{'unattributed':<30} {(total - listed - reading) * per:8.3f}")
    print(f"{'all':<30} {total * per:8.3f} {sum(kernels.values()) * per:8.3f} {'':10} "
          f"{_fmt(dali_ops.get('all'))}")
    if isinstance(dali, str):
        print(f"DALI: {dali}")


def _fmt(value: float | None) -> str:
    return f"{value:8.3f}" if value is not None else f"{'':8}"


RECIPES = {"(a) image -> rrc -> flip -> cmn": "a", "(b) image_random_crop -> resize -> cmn": "b"}


def dali_results(root: str, opts: argparse.Namespace) -> dict[str, Result | str]:
    """The same recipes in DALI's dynamic mode, run by `--dali-python` in a subprocess."""
    if not opts.dali_python:
        return {}
    cmd = [opts.dali_python, os.path.abspath(__file__), "--dali-worker", root, "--batch",
           str(opts.batch), "--threads", str(opts.threads), "--epochs", str(opts.epochs)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode:
        return dict.fromkeys(RECIPES, f"failed: {done.stderr.strip()[-300:]}")
    raw = json.loads(done.stdout.strip().splitlines()[-1])
    return {k: (v[0], {}, v[1], v[2], v[3]) for k, v in raw.items()}


def main() -> None:
    global ndd
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=256)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--cprofile", type=int, default=0, metavar="N")
    parser.add_argument("--dali-python", default=None,
                        help="interpreter with nvidia.dali: DALI's per-op times alongside")
    parser.add_argument("--dali-worker", metavar="ROOT", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    recipes = {"a": recipe_a, "b": recipe_b}
    if opts.dali_worker:
        import nvidia.dali.experimental.dynamic as dali_ndd

        ndd = dali_ndd
        ndd.set_num_threads(opts.threads)
        out = {}
        for name, key in RECIPES.items():
            timer, _, reading, total, n = run(opts.dali_worker, recipes[key], opts)
            out[name] = (dict(timer), reading, total, n)
        print(json.dumps(out))
        return
    import ndd_triton

    ndd = ndd_triton
    ndd.set_num_threads(opts.threads)
    _wrap_kernels()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as root:
        bench_rn50.make_folder(root, opts.count)
        results = {name: run(root, recipes[key], opts) for name, key in RECIPES.items()}
        dali = dali_results(root, opts)
        for name, result in results.items():
            table(name, result, dali.get(name))
        if opts.cprofile:
            profiler = cProfile.Profile()
            run(root, recipe_b, opts, profiler)
            print(f"\ncProfile, consumer thread, one epoch of (b), top {opts.cprofile} by "
                  "cumulative time:")
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(opts.cprofile)
    print(f"# {opts.count} JPEGs, batch {opts.batch}, {opts.threads} threads, {opts.epochs} "
          f"epochs, EvalMode.sync_cpu; load avg {load[0]:.1f} -> {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
