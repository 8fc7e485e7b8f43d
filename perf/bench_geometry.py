"""CPU ms/image of resize, random_resized_crop and crop_mirror_normalize, 1 thread.

Workloads (uint8 HWC, random pixels, same seed everywhere):
* resize: 32 x 480x640x3 -> 224x224, LINEAR with antialias (DALI's default filter);
* random_resized_crop: 32 x 375x500x3 -> 224x224 (the RN50 training crop, default area and
  aspect ranges, a seeded RNG: ndd_triton rows see the same windows, DALI its own);
* crop_mirror_normalize: 224x224 centre crop of 480x640x3 to float32 CHW, ImageNet mean/std.

Rows: ndd_triton (this tree), ndd_triton "float" (this tree with the uint8 fixed-point resize
path switched off: `kernels.cpu.resize.FIXED_POINT_LINEAR_U8 = False`, crop_mirror_normalize
unchanged), ndd_triton "before" (another checkout given by `--before`,
imported in a subprocess), DALI 2.4 dynamic mode on the CPU (`--dali-python`, a subprocess:
black box), and plain libraries: torch `F.interpolate(bilinear, antialias=True)` on uint8 (the
fixed-point path torchvision v2 calls) and float32, OpenCV `cv2.resize` (INTER_LINEAR and
INTER_AREA: not DALI's filter, for scale), torch slice + permute + normalise for CMN.
Each number is the best of `--repeat` runs of the whole batch after a warm-up, in the best of
`--rounds` rounds that alternate the implementations, as process CPU time (all threads; the
same measure for every row) and wall time, per image. The last column
is the max |difference| from the exact float64 DALI filter (clamped borders) on image 0.

Usage: python perf/bench_geometry.py [--batch 32] [--repeat 5] [--rounds 2] [--before DIR]
       [--dali-python /work/dali-venv/bin/python]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]
Row = tuple[str, str, float, float, float]  # op, implementation, cpu ms, wall ms, max|diff|


def best_ms(fn: Callable[[], Any], images: int, repeat: int) -> tuple[float, float]:
    """(process CPU ms, wall ms) per image: best of `repeat` runs after one warm-up run."""
    fn()
    cpu, wall = [], []
    for _ in range(repeat):
        c, w = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    return min(cpu) / images * 1e3, min(wall) / images * 1e3


def make_images(batch: int, shape: tuple[int, int]) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.integers(0, 256, (*shape, 3), dtype=np.uint8) for _ in range(batch)]


def exact_linear_aa(image: np.ndarray, out_h: int, out_w: int) -> np.ndarray:
    """DALI's antialiased linear resize in float64 (triangle filter, clamped borders), from
    the independent loop reference of the tests (tests/reference/resample.py)."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
    from reference import resample as ref

    return ref.resize(image, "HWC", (out_h, out_w), dtype=np.float64)


def dynamic_rows(ndd: Any, opts: argparse.Namespace, label: str, with_context: bool) -> list[Row]:
    """The three ops through an `ndd`-like module (ndd_triton or DALI's dynamic mode)."""
    images = make_images(opts.batch, (480, 640))
    crops = make_images(opts.batch, (375, 500))
    batch = ndd.as_batch(images, layout="HWC")
    crop_batch = ndd.as_batch(crops, layout="HWC")
    rows: list[Row] = []
    exact = exact_linear_aa(images[0], 224, 224) if label != "DALI 2.4" else None

    def run() -> None:
        diff = float("nan")
        if exact is not None:
            first = np.asarray(ndd.resize(batch, size=[224, 224]).cpu().select(0))
            diff = float(np.abs(first - exact).max())
        rows.append(("resize", label, *best_ms(
            lambda: ndd.resize(batch, size=[224, 224]).evaluate(), opts.batch, opts.repeat),
            diff))  # fmt: skip
        rng = ndd.random.RNG(seed=7)
        rows.append(("random_resized_crop", label, *best_ms(
            lambda: ndd.random_resized_crop(crop_batch, size=[224, 224], rng=rng).evaluate(),
            opts.batch, opts.repeat), float("nan")))  # fmt: skip
        rows.append(("crop_mirror_normalize", label, *best_ms(
            lambda: ndd.crop_mirror_normalize(batch, crop=(224, 224), mean=MEAN, std=STD)
            .evaluate(), opts.batch, opts.repeat), float("nan")))  # fmt: skip

    if with_context:
        with ndd.EvalContext(num_threads=1):
            run()
    else:
        run()
    return rows


def library_rows(opts: argparse.Namespace) -> list[Row]:
    import cv2
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(1)
    cv2.setNumThreads(1)

    images = make_images(opts.batch, (480, 640))
    exact = exact_linear_aa(images[0], 224, 224)
    tensors = [torch.from_numpy(im).permute(2, 0, 1).unsqueeze(0) for im in images]
    rows: list[Row] = []
    for name, cast in (("torch interp aa u8", None), ("torch interp aa f32", torch.float32)):
        src = [t.to(cast) for t in tensors] if cast else tensors

        def run(s: list[Any] = src) -> list[Any]:
            return [F.interpolate(t, size=(224, 224), mode="bilinear", antialias=True) for t in s]

        first = run()[0][0].permute(1, 2, 0).double().numpy()
        rows.append(("resize", name, *best_ms(run, opts.batch, opts.repeat),
                     float(np.abs(first - exact).max())))  # fmt: skip
    for name, flag in (("cv2.resize INTER_LINEAR", cv2.INTER_LINEAR),
                       ("cv2.resize INTER_AREA", cv2.INTER_AREA)):  # fmt: skip
        first = cv2.resize(images[0], (224, 224), interpolation=flag)
        rows.append(("resize", name, *best_ms(
            lambda f=flag: [cv2.resize(im, (224, 224), interpolation=f) for im in images],
            opts.batch, opts.repeat), float(np.abs(first - exact).max())))  # fmt: skip
    m, s = torch.tensor(MEAN).view(3, 1, 1), torch.tensor(STD).view(3, 1, 1)
    rows.append(("crop_mirror_normalize", "torch slice+normalize", *best_ms(
        lambda: [(t[0, :, 128:352, 208:432].float() - m) / s for t in tensors], opts.batch,
        opts.repeat), float("nan")))  # fmt: skip
    return rows


def worker(kind: str, opts: argparse.Namespace) -> list[Row]:
    """Rows of one implementation, in this process (the subprocess side of --before/--dali)."""
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass
    if kind == "dali":
        import nvidia.dali.experimental.dynamic as dali_ndd

        dali_ndd.set_num_threads(1)
        return dynamic_rows(dali_ndd, opts, "DALI 2.4", with_context=False)
    import ndd_triton as ndd

    label = {"before": "ndd_triton before", "ndd": "ndd_triton"}.get(kind, "ndd_triton float")
    if kind == "float":  # the exact float path for uint8 LINEAR too
        from ndd_triton.kernels.cpu import resize

        resize.FIXED_POINT_LINEAR_U8 = False
    assert (kind == "before") == (os.path.dirname(os.path.dirname(ndd.__file__))
                                  == os.environ.get("PYTHONPATH")), ndd.__file__
    return dynamic_rows(ndd, opts, label, with_context=True)


def subprocess_rows(python: str, kind: str, opts: argparse.Namespace,
                    path: str | None = None) -> list[Row]:  # fmt: skip
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if path:
        env["PYTHONPATH"] = path
    cmd = [python, os.path.abspath(__file__), "--worker", kind, "--batch", str(opts.batch),
           "--repeat", str(opts.repeat)]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if done.returncode:
        return [("(all)", f"{kind}: failed: {done.stderr.strip()[-200:]}", *[float("nan")] * 3)]
    return [tuple(r) for r in json.loads(done.stdout.strip().splitlines()[-1])]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--before", default=None,
                        help="folder holding an older ndd_triton package (subprocess rows)")
    parser.add_argument("--dali-python", default="/work/dali-venv/bin/python",
                        help="interpreter with nvidia.dali ('' to skip)")
    parser.add_argument("--worker", choices=["ndd", "float", "before", "dali"],
                        help=argparse.SUPPRESS)  # fmt: skip
    opts = parser.parse_args()
    if opts.worker:
        print(json.dumps(worker(opts.worker, opts)))
        return
    # Rounds alternate the implementations (the machine's speed drifts); each row keeps its
    # best round.
    best: dict[tuple[str, str], Row] = {}
    for _ in range(opts.rounds):
        rows = subprocess_rows(sys.executable, "ndd", opts)
        rows += subprocess_rows(sys.executable, "float", opts)
        if opts.before:
            rows += subprocess_rows(sys.executable, "before", opts, opts.before)
        if opts.dali_python and os.path.exists(opts.dali_python):
            rows += subprocess_rows(opts.dali_python, "dali", opts)
        rows += library_rows(opts)
        for row in rows:
            key = row[:2]
            if key not in best or row[2] < best[key][2]:
                best[key] = row
    rows = list(best.values())
    load = os.getloadavg()
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, load "
          f"{load[0]:.2f}; batch {opts.batch}, 1 thread, best of {opts.repeat} runs x "
          f"{opts.rounds} alternating rounds")
    print("| op | implementation | CPU ms/img | wall ms/img | max abs diff from exact |")
    print("| --- | --- | ---: | ---: | ---: |")
    for op, impl, cpu, wall, diff in sorted(rows, key=lambda r: r[0]):
        print(f"| {op} | {impl} | {cpu:.3f} | {wall:.3f} | {diff:.3f} |")


if __name__ == "__main__":
    main()
