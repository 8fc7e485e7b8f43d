"""Host time of the RN50 GPU chain per batch, measurable without a GPU, for several checkouts.

The loop of `perf/bench_rn50.py`'s GPU row: `readers.File` -> `decoders.image(device="gpu")` ->
`random_resized_crop(224)` -> `flip(horizontal=coin_flip)` -> `crop_mirror_normalize` ->
`.torch()`, batch 64, on the emulated gpu with kernel launches and pixel decoding made no-ops
(`bench_gpu_host._no_launch`): what is left is the host work a GPU batch costs, the part that
bounds the GPU path when the GPU is fast (perf/gpu.md: the caller spends 5-6 ms per batch in
op calls on an H200's host). Rows:

* `sync_cpu`: the caller thread's CPU time per op call (prepare and run on one thread: every
  launch's table work included), batches held in memory, the median over the batches;
* `eager`, `compile`: process CPU time (all threads: caller, executor, reader) and wall time
  per batch of the whole epoch loop (`next_epoch(batch_size=64[, compile=True])`), median of
  the epochs.

Each checkout (`--src`, default this one) runs in its own interpreter, once per round,
`--rounds` interleaved rounds: on a shared machine only numbers of the same round compare.

    python perf/bench_gpu_chain_host.py --src /tmp/base_tree --src . --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = r'''
import json, os, statistics, sys, tempfile, time
cfg = json.loads(sys.argv[1])
os.environ["NDD_TRITON_EMULATE_GPU"] = "1"
os.environ["TRITON_INTERPRET"] = "1"
sys.path[:0] = [cfg["src"]]
import ndd_triton as ndd  # the checkout's, before the perf helpers put theirs first
sys.path.insert(1, cfg["perf"])
import bench_gpu_host
from bench_rn50 import MEAN, STD, make_folder
bench_gpu_host._no_launch()
assert ndd.__file__.startswith(os.path.abspath(cfg["src"]))
root = tempfile.mkdtemp()
make_folder(root, cfg["count"])
rng = ndd.random.RNG(seed=42)
OPS = ("decoders.image", "random_resized_crop", "coin_flip", "flip", "crop_mirror_normalize",
       "torch")

def chain(jpegs, stamp):
    images = ndd.decoders.image(jpegs, device="gpu"); stamp(0)
    images = ndd.random_resized_crop(images, size=224, rng=rng); stamp(1)
    flips = ndd.random.coin_flip(batch_size=jpegs.batch_size, rng=rng); stamp(2)
    images = ndd.flip(images, horizontal=flips); stamp(3)
    out = ndd.crop_mirror_normalize(images, mean=MEAN, std=STD); stamp(4)
    out.torch(); stamp(5)

def sync_cpu():
    reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=1)
    batches = [j for j, _ in reader.next_epoch(batch_size=cfg["batch"])]
    per_op = [[] for _ in OPS]
    for epoch in range(cfg["epochs"] + 1):
        for jpegs in batches:
            last = [time.thread_time()]
            def stamp(k):
                now = time.thread_time()
                if epoch:
                    per_op[k].append(now - last[0])
                last[0] = now
            with ndd.EvalMode.sync_cpu:
                chain(jpegs, stamp)
    return {op: statistics.median(v) * 1e6 for op, v in zip(OPS, per_op)}

def loop(compile_):
    reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=1)
    cpu, wall = [], []
    for epoch in range(cfg["epochs"] + 1):
        c, w, n = time.process_time(), time.perf_counter(), 0
        for jpegs, _ in reader.next_epoch(batch_size=cfg["batch"], compile=compile_):
            chain(jpegs, lambda k: None)
            n += 1
        if epoch:
            cpu.append((time.process_time() - c) / n * 1e6)
            wall.append((time.perf_counter() - w) / n * 1e6)
    return {"cpu": statistics.median(cpu), "wall": statistics.median(wall)}

print(json.dumps({"sync_cpu": sync_cpu(), "eager": loop(False), "compile": loop(True)}))
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", action="append", help="a checkout (repeatable; default: this)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--count", type=int, default=256, help="JPEGs (batches of 64)")
    args = parser.parse_args()
    srcs = [os.path.abspath(s) for s in (args.src or [os.path.dirname(HERE)])]
    results: dict[str, list[dict]] = {s: [] for s in srcs}
    for _ in range(args.rounds):
        for src in srcs:
            cfg = {"src": src, "perf": HERE, "epochs": args.epochs, "count": args.count,
                   "batch": 64}  # fmt: skip
            out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(cfg)], check=True,
                                 capture_output=True, text=True).stdout  # fmt: skip
            results[src].append(json.loads(out.strip().splitlines()[-1]))
    print(f"# RN50 GPU chain, emulated gpu, launches and pixel decoding no-ops; batch 64; "
          f"{args.rounds} interleaved rounds x {args.epochs} epochs of {args.count} JPEGs; "
          f"load {os.getloadavg()[0]:.1f}")
    ops = list(next(iter(results.values()))[0]["sync_cpu"])
    print("| round: checkout | " + " | ".join(ops) +
          " | sum | eager CPU / wall | compile CPU / wall |")  # fmt: skip
    print("|---" * (len(ops) + 4) + "|")
    for k in range(args.rounds):  # round by round: only a round's rows compare
        for src, rounds in results.items():
            r = rounds[k]
            cells = [f"{r['sync_cpu'][op]:.0f}" for op in ops]
            total = sum(r["sync_cpu"].values())
            eager, comp = r["eager"], r["compile"]
            print(f"| {k + 1}: {src} | " + " | ".join(cells) + f" | {total:.0f} | "
                  f"{eager['cpu']:.0f} / {eager['wall']:.0f} | "
                  f"{comp['cpu']:.0f} / {comp['wall']:.0f} |")
    print("(µs: sync_cpu columns are the caller thread's CPU per op call; eager and compile "
          "are process CPU / wall per batch)")


if __name__ == "__main__":
    main()
