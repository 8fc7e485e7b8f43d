"""RN50 pipeline (a) stage by stage: wall and CPU ms per image and cores used per op, for this
tree and optionally another one (`--before DIR`, a checkout or `git archive` holding
`ndd_triton/`), in alternating rounds (each tree runs in its own subprocess).

Run: `python perf/rn50_stages.py [--count 512] [--reps 3] [--rounds 3] [--before DIR]`.

Pipeline (a) of perf/bench_rn50.py, each op evaluated in sync_full mode so that its time is
its own: decoders.image -> random_resized_crop(size=224) -> flip(horizontal=coin_flip) ->
crop_mirror_normalize(mean, std) -> .torch(), batch 64, `--threads` pool threads. "cores" =
process CPU time / wall time of the op: how much of the 2 cores the pool keeps busy (threads
that wait for the GIL do not count). On a shared machine, compare rows of the same round.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

STAGES = ("decode", "rrc", "flip", "cmn", "torch")


def child(root: str, reps: int, threads: int) -> dict[str, list[float]]:
    """One measurement in this process: {stage: [wall s, CPU s]} over `reps` epochs, and the
    number of images."""
    import glob
    import time

    import numpy as np
    from bench_rn50 import MEAN, STD

    import ndd_triton as ndd

    paths = sorted(glob.glob(os.path.join(root, "*", "*.jpg")))
    ndd.set_num_threads(threads)
    encoded = [np.fromfile(p, dtype=np.uint8) for p in paths]
    batches = [ndd.as_batch(encoded[i:i + 64]) for i in range(0, len(encoded), 64)]
    rng = ndd.random.RNG(seed=1)
    totals = {name: [0.0, 0.0] for name in STAGES}

    def timed(name: str, fn):  # type: ignore[no-untyped-def]
        wall, cpu = time.perf_counter(), time.process_time()
        result = fn()
        if hasattr(result, "evaluate"):
            result.evaluate()
        totals[name][0] += time.perf_counter() - wall
        totals[name][1] += time.process_time() - cpu
        return result

    def epoch() -> None:
        with ndd.EvalMode.sync_full:
            for b in batches:
                images = timed("decode", lambda b=b: ndd.decoders.image(b, device="cpu"))
                images = timed("rrc", lambda i=images: ndd.random_resized_crop(i, size=224,
                                                                              rng=rng))
                flips = ndd.random.coin_flip(batch_size=b.batch_size, rng=rng)
                images = timed("flip", lambda i=images, f=flips: ndd.flip(i, horizontal=f))
                out = timed("cmn", lambda i=images: ndd.crop_mirror_normalize(i, mean=MEAN,
                                                                              std=STD))
                timed("torch", lambda o=out: o.torch())

    epoch()  # warm-up
    for v in totals.values():
        v[0] = v[1] = 0.0
    for _ in range(reps):
        epoch()
    return {"stages": totals, "images": len(encoded) * reps}  # type: ignore[dict-item]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=512)
    parser.add_argument("--reps", type=int, default=3, help="timed epochs per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--before", help="another tree holding ndd_triton/ to compare")
    parser.add_argument("--root", help="folder of JPEGs (default: generated, --count files)")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    if opts.child:
        sys.path.insert(0, here)
        print(json.dumps(child(opts.child[0], int(opts.child[1]), int(opts.child[2]))))
        return
    sys.path.insert(0, here)
    from bench_rn50 import make_folder

    tmp = None
    root = opts.root
    if root is None:
        tmp = tempfile.TemporaryDirectory()
        root = tmp.name
        make_folder(root, opts.count)
    trees = {"this tree": os.path.dirname(here)}
    if opts.before:
        trees["before"] = os.path.abspath(opts.before)
    print(f"# RN50 (a) by stage, {opts.threads} threads, batch 64, {opts.reps} epochs x "
          f"{opts.rounds} rounds; load {os.getloadavg()[0]:.1f}")
    print(f"{'round':>5} {'tree':10s} " + " ".join(f"{s + ' cpu/wall/cores':>23s}"
                                                   for s in STAGES[:4]) + f" {'img/s':>7s}")
    for r in range(opts.rounds):
        for name, tree in trees.items():
            env = dict(os.environ, PYTHONPATH=tree)
            res = json.loads(subprocess.run(
                [sys.executable, os.path.abspath(__file__), "--child", root, str(opts.reps),
                 str(opts.threads)], env=env, capture_output=True, text=True,
                check=True).stdout.splitlines()[-1])  # fmt: skip
            n, cells, wall_all = res["images"], [], 0.0
            for stage in STAGES:
                wall, cpu = res["stages"][stage]
                wall_all += wall
                if stage != "torch":
                    cells.append(f"{1e3 * cpu / n:7.3f} {1e3 * wall / n:7.3f} "
                                 f"{cpu / wall if wall else 0:5.2f}")
            print(f"{r:>5} {name:10s} " + " ".join(f"{c:>23s}" for c in cells)
                  + f" {n / wall_all:7.0f}")
    print(f"# load {os.getloadavg()[0]:.1f}")
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
