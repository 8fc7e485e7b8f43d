"""ndd_triton's CPU colour ops and gaussian_blur against DALI's, random per-sample arguments.

Black-box check of the uint8 precision contract (outputs within 1 of DALI's) beyond the golden
cases: 16 images of random sizes (up to 300x300) with random per-sample arguments, large ones
included (hue up to 720 degrees, saturation -3..5, contrast -3..5, brightness up to 5), every
color_space_conversion pair, and gaussian_blur with per-sample sigmas. DALI runs in a
subprocess (`--dali-python`, `nvidia.dali.experimental.dynamic`, CPU). Prints, per op, the
largest |difference| and the share of bytes that differ; exits 1 if any difference exceeds 1.
Usage: python perf/check_color_dali.py --dali-python /work/dali-venv/bin/python [--exact]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from typing import Any

import numpy as np

N = 16
SPACES = ("RGB", "BGR", "GRAY", "YCbCr")


def inputs() -> tuple[list[np.ndarray], dict[str, dict[str, np.ndarray]]]:
    rng = np.random.default_rng(7)
    images = [rng.integers(0, 256, (int(rng.integers(50, 300)), int(rng.integers(50, 300)), 3),
                           dtype=np.uint8) for _ in range(N)]  # fmt: skip
    images[0][:8, :8] = 255  # saturated corners
    images[1][:8, :8] = 0

    def u(lo: float, hi: float) -> np.ndarray:
        return rng.uniform(lo, hi, N).astype(np.float32)

    args = {
        "color_twist": {"hue": u(-360, 360), "saturation": u(0, 3), "brightness": u(0, 3),
                        "contrast": u(-1, 3)},
        "hsv": {"hue": u(-360, 360), "saturation": u(-2, 4), "value": u(0, 4)},
        "hue": {"hue": u(-720, 720)},
        "saturation": {"saturation": u(-3, 5)},
        "brightness": {"brightness": u(0, 5), "brightness_shift": u(-1, 1)},
        "contrast": {"contrast": u(-3, 5), "contrast_center": u(0, 255)},
        "brightness_contrast": {"brightness": u(0, 4), "brightness_shift": u(-0.5, 0.5),
                                "contrast": u(-2, 4), "contrast_center": u(0, 255)},
        "gaussian_blur": {"sigma": u(0.3, 4)},
    }  # fmt: skip
    return images, args


def run(nd: Any, types: Any) -> dict[str, list[np.ndarray]]:
    images, args = inputs()
    rgb = nd.as_batch(images, layout="HWC")
    gray = nd.as_batch([np.ascontiguousarray(im[..., :1]) for im in images], layout="HWC")
    results = {}
    for op, values in args.items():
        kwargs = {k: nd.as_batch([np.float32(v) for v in vs]) for k, vs in values.items()}
        results[op] = getattr(nd, op)(rgb, **kwargs)
    for src in SPACES:
        for dst in SPACES:
            if src != dst:
                results[f"csc {src}->{dst}"] = nd.color_space_conversion(
                    gray if src == "GRAY" else rgb, image_type=getattr(types, src),
                    output_type=getattr(types, dst))  # fmt: skip
    return {k: [np.asarray(r.evaluate().select(i)) for i in range(N)] for k, r in results.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dali-python", required=True)
    parser.add_argument("--exact", action="store_true",
                        help="turn ndd_triton's uint8 fast paths off (the exact float32 path)")
    parser.add_argument("--dali-worker", metavar="FILE", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.dali_worker:
        import nvidia.dali.experimental.dynamic as dali_nd
        import nvidia.dali.types as types

        out = run(dali_nd, types)
        np.savez(opts.dali_worker, **{f"{k}|{i}": v for k, vs in out.items()
                                      for i, v in enumerate(vs)})  # fmt: skip
        return
    import ndd_triton as ndd
    from ndd_triton.kernels.cpu import _color_u8, gaussian_blur

    if opts.exact:
        _color_u8.MIN_ELEMENTS = 1 << 62
        gaussian_blur.u8_blur_is_float = lambda: False  # type: ignore[assignment]
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "dali.npz")
        subprocess.run([opts.dali_python, os.path.abspath(__file__), "--dali-python",
                        opts.dali_python, "--dali-worker", path], check=True)  # fmt: skip
        dali = np.load(path)
        worst = 0
        print("| op | max abs diff vs DALI | share of bytes that differ |\n|---|---|---|")
        for name, samples in run(ndd, ndd.types).items():
            diffs = [np.abs(s.astype(np.int64) - dali[f"{name}|{i}"].astype(np.int64))
                     for i, s in enumerate(samples)]  # fmt: skip
            top = max(int(d.max()) for d in diffs)
            worst = max(worst, top)
            print(f"| {name} | {top} | {np.mean([(d != 0).mean() for d in diffs]):.2%} |")
    sys.exit(1 if worst > 1 else 0)


if __name__ == "__main__":
    main()
