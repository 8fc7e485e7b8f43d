"""ms/image of rotate by 15 degrees on the CPU (32x480x640x3 uint8, 1 thread).

ndd_triton's rotate (packed uint8 fixed-point affine sampling, `kernels/cpu/warp_affine.py`)
against torch `F.grid_sample` (bilinear, border padding, float32 channels-last: the usual
torch way; includes the uint8 <-> float conversions) and OpenCV `warpAffine` / torchvision v2
`rotate` when importable. The brief's reference numbers: DALI 14, OpenCV 2.3 ms/image.
Prints wall time and process CPU time per image (the CPU time is the meaningful number on a
shared machine), and the max |difference| of each method from ndd_triton's output.
Usage: python perf/bench_rotate.py [--batch 32] [--repeat 3] [--angle 15]
       [--dali-python /work/dali-venv/bin/python]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

if __name__ == "__main__" and "--dali-worker" not in sys.argv:  # the DALI venv has no torch
    import torch
    import torch.nn.functional as F


def best_ms(fn: Callable[[], Any], images: int, repeat: int) -> tuple[float, float]:
    """Best (wall, process CPU) time over `repeat` runs, ms per image, after a warm-up run."""
    fn()
    wall, cpu = [], []
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    return min(wall) / images * 1e3, min(cpu) / images * 1e3


def grid_for(angle: float, h: int, w: int, out_h: int, out_w: int) -> Any:
    """grid_sample grid (align_corners=False) of rotate's inverse map."""
    from ndd_triton.ops._affine import rotation_inverse

    m = rotation_inverse(np.array([angle]), np.array([[h, w]]), np.array([[out_h, out_w]]))[0]
    ys, xs = np.meshgrid(np.arange(out_h) + 0.5, np.arange(out_w) + 0.5, indexing="ij")
    sx = m[0, 0] * xs + m[0, 1] * ys + m[0, 2]
    sy = m[1, 0] * xs + m[1, 1] * ys + m[1, 2]
    grid = np.stack([2 * sx / w - 1, 2 * sy / h - 1], axis=-1).astype(np.float32)
    return torch.from_numpy(grid)[None]


def make_images(batch: int) -> list[np.ndarray]:
    """The benchmark's inputs (the same in the DALI subprocess)."""
    rng = np.random.default_rng(0)
    return [rng.integers(0, 256, (480, 640, 3), dtype=np.uint8) for _ in range(batch)]


def dali_worker(opts: argparse.Namespace) -> None:
    """Subprocess side: DALI's CPU rotate on the same images; prints JSON, saves sample 0."""
    import nvidia.dali.experimental.dynamic as dali_ndd

    dali_ndd.set_num_threads(1)
    batch = dali_ndd.as_batch(make_images(opts.batch), layout="HWC")
    wall, cpu = best_ms(lambda: dali_ndd.rotate(batch, angle=opts.angle).evaluate(), opts.batch,
                        opts.repeat)  # fmt: skip
    first = dali_ndd.rotate(batch, angle=opts.angle).evaluate().select(0)
    np.save(opts.dali_worker, np.asarray(first))
    print(json.dumps({"wall": wall, "cpu": cpu}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--angle", type=float, default=15.0)
    parser.add_argument("--dali-python", default="", help="interpreter with nvidia.dali")
    parser.add_argument("--dali-worker", default="", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.dali_worker:
        dali_worker(opts)
        return
    torch.set_num_threads(1)
    import ndd_triton as ndd
    from ndd_triton.ops._affine import rotated_canvas

    images = make_images(opts.batch)
    batch = ndd.as_batch(images, layout="HWC")
    out_h, out_w = rotated_canvas(opts.angle, 480, 640)
    rows: list[tuple[str, float, float, float]] = []
    with ndd.EvalContext(num_threads=1):
        ours = np.asarray(ndd.rotate(batch, angle=opts.angle).cpu().select(0)).astype(np.float64)
        rows.append(
            (
                "ndd_triton cpu",
                *best_ms(
                    lambda: ndd.rotate(batch, angle=opts.angle).evaluate(), opts.batch, opts.repeat
                ),
                0.0,
            )
        )

    def diff(result: Any) -> float:
        return float(np.abs(np.asarray(result, dtype=np.float64) - ours).max())

    if opts.dali_python:
        with tempfile.TemporaryDirectory() as tmp:
            first = os.path.join(tmp, "dali.npy")
            out = subprocess.run([opts.dali_python, __file__, "--dali-worker", first, "--batch",
                                  str(opts.batch), "--repeat", str(opts.repeat), "--angle",
                                  str(opts.angle)], check=True, capture_output=True, text=True)
            timing = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append(("DALI 2.4 cpu", timing["wall"], timing["cpu"], diff(np.load(first))))
    grid = grid_for(opts.angle, 480, 640, out_h, out_w)
    tensors = [torch.from_numpy(im).permute(2, 0, 1)[None] for im in images]

    def torch_rotate(t: Any) -> Any:
        src = t.to(torch.float32).contiguous(memory_format=torch.channels_last)
        res = F.grid_sample(src, grid, mode="bilinear", padding_mode="border", align_corners=False)
        return res.round_().clamp_(0, 255).to(torch.uint8).permute(0, 2, 3, 1).contiguous()

    rows.append(
        (
            "torch grid_sample f32",
            *best_ms(lambda: [torch_rotate(t) for t in tensors], opts.batch, opts.repeat),
            diff(torch_rotate(tensors[0])[0]),
        )
    )
    try:
        import cv2

        cv2.setNumThreads(1)
        mat = cv2.getRotationMatrix2D((320, 240), opts.angle, 1.0)
        mat[:, 2] += [(out_w - 640) / 2, (out_h - 480) / 2]
        rows.append(
            (
                "opencv warpAffine",
                *best_ms(
                    lambda: [
                        cv2.warpAffine(im, mat, (out_w, out_h), borderMode=cv2.BORDER_REPLICATE)
                        for im in images
                    ],
                    opts.batch,
                    opts.repeat,
                ),
                float("nan"),
            )
        )
    except ImportError:
        rows.append(("opencv: not installed", math.nan, math.nan, math.nan))
    try:
        from torchvision.transforms.v2 import functional as tvf

        rows.append(
            (
                "torchvision v2 rotate",
                *best_ms(
                    lambda: [tvf.rotate(t, opts.angle, expand=True) for t in tensors],
                    opts.batch,
                    opts.repeat,
                ),
                float("nan"),
            )
        )
    except ImportError:
        rows.append(("torchvision: not installed", math.nan, math.nan, math.nan))
    print(
        f"{platform.processor() or platform.machine()}, torch {torch.__version__}, numpy "
        f"{np.__version__}; batch {opts.batch}x480x640x3 u8, rotate {opts.angle} deg -> "
        f"{out_h}x{out_w}, 1 thread"
    )
    print(f"{'implementation':27s} {'wall ms/img':>11s} {'cpu ms/img':>10s}  max|diff| vs ours")
    for impl, wall, cpu, d in rows:
        print(f"{impl:27s} {wall:11.2f} {cpu:10.2f}  {d:.0f}")


if __name__ == "__main__":
    main()
