"""Compile mode on the CPU RN50 pipeline: ndd eager vs ndd compiled vs DALI 2.4 dynamic mode.

Run: `python perf/bench_compile.py [--count 128] [--batch 64] [--threads 2] [--epochs 3]
[--step-ms 0,150] [--dali-python /work/dali_venv/bin/python]`. Prints one table.

The pipeline is bench_rn50.py's row (a): `readers.File(random_shuffle=True)` ->
`decoders.image` -> `random_resized_crop(224)` -> `flip(horizontal=coin_flip)` ->
`crop_mirror_normalize` -> `.torch()` (DALI: `.evaluate()`), on the same generated folder.
Each `--step-ms` value adds a simulated training step of that many milliseconds per batch on
the caller's thread (a sleep, which releases the GIL as a GPU step does): eager mode issues the
next batch only after the step, compile mode has issued it `compile_depth` batches ahead.
DALI runs eagerly and with `capture=True` (its prefetching capture mode) in a subprocess.
Images/s (and CPU ms per image, all threads of the process) is the median over `--epochs` epochs
after one warm-up epoch, then the median over `--rounds` interleaved rounds of all rows (one
DALI subprocess per round). "no fusion" is compile mode with the fusion pass switched off.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_rn50 import MEAN, STD, make_folder, timed


def rows(ndd: Any, root: str, opts: argparse.Namespace, finish: Any,
         modes: list[tuple[str, dict[str, Any]]]) -> dict[str, tuple[float, float]]:  # fmt: skip
    """(images/s, CPU ms/image) per (mode, step) for the RN50 loop against module `ndd`."""
    ndd.set_num_threads(opts.threads)
    out = {}
    for step_ms in [float(v) for v in opts.step_ms.split(",")]:
        for name, kwargs in modes:
            rng = ndd.random.RNG(seed=42)
            reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=1)

            def epoch(reader: Any = reader, rng: Any = rng, kwargs: Any = kwargs,
                      step_ms: float = step_ms) -> int:  # fmt: skip
                n = 0
                for jpegs, labels in reader.next_epoch(batch_size=opts.batch, **kwargs):
                    images = ndd.decoders.image(jpegs, device="cpu")
                    images = ndd.random_resized_crop(images, size=224, rng=rng)
                    flips = ndd.random.coin_flip(batch_size=jpegs.batch_size, rng=rng)
                    images = ndd.flip(images, horizontal=flips)
                    images = ndd.crop_mirror_normalize(images, mean=MEAN, std=STD)
                    finish(images)
                    finish(labels)
                    if step_ms:
                        time.sleep(step_ms / 1e3)
                    n += jpegs.batch_size
                return n

            out[f"{name}|{step_ms:g}"] = timed(epoch, opts.epochs)
    return out


def dali_worker(root: str, opts: argparse.Namespace) -> dict[str, Any]:
    import warnings

    import nvidia.dali as dali
    import nvidia.dali.experimental.dynamic as dali_ndd

    warnings.simplefilter("ignore")
    modes = [("DALI 2.4 dynamic (eager)", {}), ("DALI 2.4 capture=True", {"capture": True})]
    return {"version": dali.__version__,
            "rows": rows(dali_ndd, root, opts, lambda b: b.evaluate(), modes)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=128)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--step-ms", default="0,150")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dali-python", default="/work/dali_venv/bin/python")
    parser.add_argument("--dali-worker", metavar="ROOT", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.dali_worker:
        print(json.dumps(dali_worker(opts.dali_worker, opts)))
        return
    import ndd_triton as ndd
    from ndd_triton.runtime import compiled

    fusion = compiled.plan_groups

    def no_fusion(flag: bool) -> None:  # the "compile=True, no fusion" row
        compiled.plan_groups = (lambda program: {}) if flag else fusion

    rounds: list[dict[str, tuple[float, float]]] = []
    dali: dict[str, Any] | str = "skipped"
    with tempfile.TemporaryDirectory() as root:
        make_folder(root, opts.count)
        for _ in range(opts.rounds):  # interleaved, so that a load change hits every row alike
            results = rows(ndd, root, opts, lambda b: b.torch(),
                           [("ndd eager", {}), ("ndd compile=True", {"compile": True})])
            no_fusion(True)
            try:
                results.update(rows(ndd, root, opts, lambda b: b.torch(),
                                    [("ndd compile=True, no fusion", {"compile": True})]))
            finally:
                no_fusion(False)
            if opts.dali_python and os.path.exists(opts.dali_python):
                cmd = [opts.dali_python, os.path.abspath(__file__), "--dali-worker", root,
                       "--batch", str(opts.batch), "--threads", str(opts.threads),
                       "--epochs", str(opts.epochs), "--step-ms", opts.step_ms]  # fmt: skip
                done = subprocess.run(cmd, capture_output=True, text=True)
                dali = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 \
                    else f"failed: {done.stderr.strip()[-300:]}"  # fmt: skip
                if isinstance(dali, dict):
                    results.update({k: tuple(v) for k, v in dali["rows"].items()})
            rounds.append(results)
    results = {k: (statistics.median(r[k][0] for r in rounds),
                   statistics.median(r[k][1] for r in rounds)) for k in rounds[0]}  # fmt: skip
    steps = [f"{float(v):g}" for v in opts.step_ms.split(",")]
    print(f"RN50 CPU pipeline, {opts.count} images, batch {opts.batch}, {opts.threads} threads, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; images/s and CPU ms/image, "
          f"medians of {opts.rounds} interleaved rounds of {opts.epochs} epochs"
          + (f"; DALI {dali['version']}" if isinstance(dali, dict) else f"; DALI {dali}"))
    print(f"{'pipeline':<30}" + "".join(f"{'step ' + s + ' ms':>20}" for s in steps)
          + "".join(f"{'vs DALI ' + s:>12}" for s in steps))  # fmt: skip
    names = sorted({k.split("|")[0] for k in results}, key=lambda n: (n.startswith("DALI"), n))
    for name in names:
        line = f"{name:<30}"
        for s in steps:
            rate, cpu = results.get(f"{name}|{s}", (float("nan"), float("nan")))
            line += f"{rate:9.1f} img/s {cpu:4.1f}ms"
        for s in steps:
            base = results.get(f"DALI 2.4 dynamic (eager)|{s}")
            line += f"{results[f'{name}|{s}'][0] / base[0]:11.2f}x" if base else f"{'-':>12}"
        print(line)


if __name__ == "__main__":
    main()
