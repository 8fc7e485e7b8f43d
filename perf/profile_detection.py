"""Where the CPU time of the detection recipe goes: per op, kernel vs framework, ms per image,
beside DALI 2.4 dynamic mode's per-op CPU time.

Run: `python perf/profile_detection.py [--copies 8] [--batch 32] [--threads 2] [--epochs 3]
[--cprofile 25] [--image-slice] [--dali-python /work/dali_venv/bin/python]`.

The recipe of `perf/bench_detection.py` / examples/detection.py runs op by op in
`EvalMode.sync_cpu`, so each call returns when its samples are done and the process CPU time
around it (all threads) is the op's whole cost; CPU time is what a loaded shared machine still
measures fairly. The kernel column is the thread CPU time inside the op's registered CPU
kernels (see perf/profile_rn50.py); framework is the rest. DALI runs the same calls in its own
interpreter (its outputs end with `.evaluate()`).
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE), os.path.join(os.path.dirname(HERE), "examples")]

ndd: Any = None
FUSED = False  # --image-slice: decoders.image_slice instead of decoders.image + slice
MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


class OpTimer:
    """Process CPU time per op call (all threads), keyed by a label."""

    def __init__(self) -> None:
        self.total: collections.Counter[str] = collections.Counter()

    def __call__(self, label: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        out = fn(*args, **kwargs)
        for o in out if isinstance(out, tuple) else (out,):
            if hasattr(o, "evaluate"):
                o.evaluate()
        self.total[label] += time.process_time() - start
        return out


def recipe(t: OpTimer, jpegs: Any, boxes: Any, labels: Any, rng: Any, anchors: list) -> Any:
    """examples/detection.py, op by op."""
    if not FUSED:
        images = t("decoders.image", ndd.decoders.image, jpegs)
    anchor, shape, boxes, labels = t(
        "random_bbox_crop", ndd.random_bbox_crop, boxes, labels,
        thresholds=[0.1, 0.3, 0.5, 0.7, 0.9], scaling=[0.3, 1.0], aspect_ratio=[0.5, 2.0],
        bbox_layout="xyXY", num_attempts=1, total_num_attempts=50, quiet=True, rng=rng)
    if FUSED:
        images = t("decoders.image_slice", ndd.decoders.image_slice, jpegs, anchor, shape)
    else:
        images = t("slice", ndd.slice, images, anchor, shape)
    images = t("resize", ndd.resize, images, size=[300, 300])
    coin = t("random.coin_flip", ndd.random.coin_flip, probability=0.5,
             batch_size=jpegs.batch_size, rng=rng)
    images = t("flip", ndd.flip, images, horizontal=coin)
    boxes = t("bb_flip", ndd.bb_flip, boxes, ltrb=True, horizontal=coin)
    images = t("crop_mirror_normalize", ndd.crop_mirror_normalize, images, mean=MEAN, std=STD,
               dtype=ndd.float32, output_layout="CHW")
    targets, classes = t("box_encoder", ndd.box_encoder, boxes, labels, anchors=anchors,
                         criteria=0.5, offset=True, scale=300.0, stds=[0.1, 0.1, 0.2, 0.2])
    return images, targets, classes


def run(cfg: dict, profiler: Any = None) -> tuple[dict, float, float, int]:
    """(per-op CPU s, reader CPU s, total CPU s, images) over cfg['epochs'] epochs."""
    import numpy as np

    anchors = np.load(cfg["anchors"]).reshape(-1).tolist()
    reader = ndd.readers.COCO(file_root=cfg["root"], annotations_file=cfg["ann"], ltrb=True,
                              ratio=True, skip_empty=True, random_shuffle=True, seed=0)
    rng = ndd.random.RNG(seed=0)
    dali = ndd.__name__ != "ndd_triton"
    timer = OpTimer()

    def finish(outs: Any) -> None:
        for b in outs:
            b.evaluate() if dali else b.torch()

    def epoch(t: OpTimer) -> tuple[float, int]:
        reading, n = 0.0, 0
        it = iter(reader.next_epoch(batch_size=cfg["batch"]))
        while True:
            start = time.process_time()
            try:
                jpegs, boxes, labels = next(it)
            except StopIteration:
                break
            reading += time.process_time() - start
            outs = recipe(t, jpegs, boxes, labels, rng, anchors)
            t("other (.torch())", finish, outs)
            n += jpegs.batch_size
        return reading, n

    with ndd.EvalMode.sync_cpu:
        epoch(OpTimer())
        if not dali:
            _kernel_cpu.clear()
        reading, n = 0.0, 0
        start = time.process_time()
        if profiler is not None:
            profiler.enable()
        for _ in range(1 if profiler is not None else cfg["epochs"]):
            r, k = epoch(timer)
            reading, n = reading + r, n + k
        if profiler is not None:
            profiler.disable()
        total = time.process_time() - start
    return dict(timer.total), reading, total, n


_kernel_cpu: collections.Counter[str] = collections.Counter()


def main() -> None:
    global ndd
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=8)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--cprofile", type=int, default=0, metavar="N")
    parser.add_argument("--image-slice", action="store_true",
                        help="decode the window (decoders.image_slice) instead of decode + slice")
    parser.add_argument("--dali-python", default="/work/dali_venv/bin/python")
    parser.add_argument("--dali-worker", metavar="CFG", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    global FUSED
    if opts.dali_worker:
        import nvidia.dali.experimental.dynamic as dali_ndd

        ndd = dali_ndd
        cfg = json.loads(opts.dali_worker)
        FUSED = cfg["image_slice"]
        ndd.set_num_threads(cfg["threads"])
        print(json.dumps(run(cfg)))
        return
    import numpy as np
    import profile_rn50
    from bench_detection import DATA, annotations
    from detection import ssd_anchors

    import ndd_triton

    ndd = profile_rn50.ndd = ndd_triton
    FUSED = opts.image_slice
    global _kernel_cpu
    _kernel_cpu = profile_rn50._kernel_cpu
    ndd.set_num_threads(opts.threads)
    profile_rn50._wrap_kernels()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        ann = os.path.join(tmp, "coco.json")
        annotations(opts.copies, ann)
        anchors = os.path.join(tmp, "anchors.npy")
        np.save(anchors, ssd_anchors())
        cfg = {"root": DATA, "ann": ann, "anchors": anchors, "batch": opts.batch,
               "epochs": opts.epochs, "threads": opts.threads, "image_slice": opts.image_slice}
        ops, reading, total, n = run(cfg)
        kernels = dict(_kernel_cpu)
        dali = None
        if opts.dali_python and os.path.exists(opts.dali_python):
            done = subprocess.run([opts.dali_python, os.path.abspath(__file__), "--dali-worker",
                                   json.dumps(cfg)], capture_output=True, text=True)
            if done.returncode == 0:
                dali = json.loads(done.stdout.strip().splitlines()[-1])
            else:
                print("DALI failed:", done.stderr[-500:])
        per = 1e3 / n
        print(f"{n} images; CPU ms/img")
        print(f"{'':<24} {'ndd op':>8} {'kernel':>8} {'framework':>10} {'DALI op':>8}")
        dops = {k: v * 1e3 / dali[3] for k, v in dali[0].items()} if dali else {}
        for label, spent in ops.items():
            kernel = kernels.get(label, 0.0)
            d = dops.get(label)
            print(f"{label:<24} {spent * per:8.3f} {kernel * per:8.3f} "
                  f"{(spent - kernel) * per:10.3f} {d if d is None else f'{d:8.3f}'}")
        print(f"{'reader':<24} {reading * per:8.3f} {'':19} "
              f"{dali and f'{dali[1] * 1e3 / dali[3]:8.3f}'}")
        print(f"{'all':<24} {total * per:8.3f} {sum(kernels.values()) * per:8.3f} {'':10} "
              f"{dali and f'{dali[2] * 1e3 / dali[3]:8.3f}'}")
        if opts.cprofile:
            profiler = cProfile.Profile()
            run(cfg, profiler)
            order = os.environ.get("SORT", "cumulative")  # e.g. SORT=tottime
            pstats.Stats(profiler).sort_stats(order).print_stats(opts.cprofile)
    print(f"# batch {opts.batch}, {opts.threads} threads, load {load[0]:.1f} -> "
          f"{os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
