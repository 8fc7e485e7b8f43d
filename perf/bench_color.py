"""ms/image of color_twist and gaussian_blur on the CPU (32x480x640x3 uint8, 1 thread).

Compares ndd_triton's CPU backend with OpenCV (a dependency of ndd_triton) and plain torch
(matmul / depthwise conv2d) in one run; `--all-ops` adds the other colour/filter ops and their
closest OpenCV calls. OpenCV rows marked `*` use its fixed-point uint8 arithmetic (10-bit
transform weights, 8-bit Gaussian weights), which ndd_triton cannot use and stay DALI-exact.
The brief's reference numbers for gaussian_blur are DALI 7.6 ms/image and OpenCV 0.83 ms/image.
Usage: python perf/bench_color.py [--batch 32] [--sigma 1.0] [--repeat 3] [--all-ops]
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch


def best_ms(fn: Callable[[], Any], images: int, repeat: int) -> tuple[float, float]:
    """Best (wall, process CPU) time over `repeat` runs, in ms per image, after a warm-up.

    Process CPU time counts every thread of the process and is not inflated by waiting for a
    core, so it is the robust number on a shared machine (the wall time is the real one).
    """
    fn()
    walls, cpus = [], []
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return min(walls) / images * 1e3, min(cpus) / images * 1e3


def _torch_blur(x: torch.Tensor, sigma: float) -> torch.Tensor:
    r = int(np.ceil(3 * sigma))
    taps = torch.exp(-torch.arange(-r, r + 1, dtype=torch.float32) ** 2 / (2 * sigma * sigma))
    taps /= taps.sum()
    img = x.permute(2, 0, 1).unsqueeze(0).float()
    img = torch.nn.functional.pad(img, (r, r, r, r), mode="reflect")
    c = img.shape[1]
    img = torch.nn.functional.conv2d(img, taps.view(1, 1, -1, 1).expand(c, 1, -1, 1), groups=c)
    img = torch.nn.functional.conv2d(img, taps.view(1, 1, 1, -1).expand(c, 1, 1, -1), groups=c)
    return img.add_(0.5).clamp_(0, 255).to(torch.uint8)


def _opencv_rows(images: list[np.ndarray], m: np.ndarray, opts: argparse.Namespace
                 ) -> list[tuple[str, str, tuple[float, float]]]:  # fmt: skip
    """OpenCV's fastest call for each op (1 thread); exactness notes in the implementation name."""
    import cv2

    cv2.setNumThreads(1)
    n, r = opts.batch, opts.repeat
    m34 = np.concatenate([m, np.full((3, 1), 0.5, np.float32)], axis=1)

    def exact_twist(im: np.ndarray) -> np.ndarray:
        values = cv2.transform(im.astype(np.float32), m34)
        return np.clip(values, 0.5, 255.5, out=values).astype(np.uint8)

    rows = [
        ("color_twist", "opencv transform u8*", best_ms(
            lambda: [cv2.transform(im, m) for im in images], n, r)),
        ("color_twist", "opencv transform f32", best_ms(
            lambda: [exact_twist(im) for im in images], n, r)),
        ("gaussian_blur", "opencv GaussianBlur*", best_ms(
            lambda: [cv2.GaussianBlur(im, (0, 0), opts.sigma, borderType=cv2.BORDER_REFLECT_101)
                     for im in images], n, r)),
    ]  # fmt: skip
    if opts.all_ops:
        box = np.full((3, 3), 1 / 9, np.float32)
        rows += [
            ("brightness_contrast", "opencv convertScaleAbs", best_ms(
                lambda: [cv2.convertScaleAbs(im, alpha=0.96, beta=25.6) for im in images], n, r)),
            ("color_space_conversion", "opencv cvtColor YCrCb", best_ms(
                lambda: [cv2.cvtColor(im, cv2.COLOR_RGB2YCrCb) for im in images], n, r)),
            ("laplacian", "opencv Laplacian", best_ms(
                lambda: [cv2.Laplacian(im, -1, ksize=3, borderType=cv2.BORDER_REFLECT_101)
                         for im in images], n, r)),
            ("filter 3x3", "opencv filter2D", best_ms(
                lambda: [cv2.filter2D(im, -1, box, borderType=cv2.BORDER_REFLECT_101)
                         for im in images], n, r)),
        ]  # fmt: skip
    return rows


def _print_table(rows: list[tuple[str, str, tuple[float, float]]], opts: argparse.Namespace
                 ) -> None:  # fmt: skip
    """One row per (op, implementation); `vs best` = ndd CPU time / the op's best CPU time."""
    import cv2

    best = {op: min(cpu for o, _, (_, cpu) in rows if o == op) for op, _, _ in rows}
    print(f"{platform.processor() or platform.machine()}, torch {torch.__version__}, numpy "
          f"{np.__version__}, opencv {cv2.__version__}; batch {opts.batch}x480x640x3 u8, "
          f"sigma {opts.sigma}, 1 thread; * = fixed-point uint8 arithmetic (inexact vs DALI)")
    print(f"{'op':22s} {'implementation':24s} {'wall':>7s} {'cpu':>7s} {'vs best':>8s}"
          "  (ms/image)")
    for op, impl, (wall, cpu) in rows:
        ratio = f"{cpu / best[op]:7.1f}x" if impl.startswith("ndd") else ""
        print(f"{op:22s} {impl:24s} {wall:7.2f} {cpu:7.2f} {ratio:>8s}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--sigma", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--all-ops", action="store_true",
                        help="also time the other colour/filter ops of ndd_triton (cpu)")
    opts = parser.parse_args()
    torch.set_num_threads(1)
    import cv2

    cv2.setNumThreads(1)  # ndd_triton's kernels set this too (kernels/cpu/_opencv.py)
    import ndd_triton as ndd

    rng = np.random.default_rng(0)
    images = [rng.integers(0, 256, (480, 640, 3), dtype=np.uint8) for _ in range(opts.batch)]
    batch = ndd.as_batch(images, layout="HWC")
    twist = {"hue": 30.0, "saturation": 0.8, "brightness": 1.1, "contrast": 0.9}
    rows: list[tuple[str, str, tuple[float, float]]] = []
    with ndd.EvalContext(num_threads=1):
        rows.append(("color_twist", "ndd_triton cpu", best_ms(
            lambda: ndd.color_twist(batch, **twist).evaluate(), opts.batch, opts.repeat)))
        rows.append(("gaussian_blur", "ndd_triton cpu", best_ms(
            lambda: ndd.gaussian_blur(batch, sigma=opts.sigma).evaluate(), opts.batch,
            opts.repeat)))
        if opts.all_ops:
            kernel = ndd.as_tensor(np.full((3, 3), 1 / 9, np.float32))
            others = {
                "brightness_contrast": lambda: ndd.brightness_contrast(batch, brightness=1.2,
                                                                       contrast=0.8),
                "hsv": lambda: ndd.hsv(batch, hue=20.0, saturation=0.7),
                "color_space_conversion": lambda: ndd.color_space_conversion(
                    batch, image_type=ndd.types.RGB, output_type=ndd.types.YCbCr),
                "laplacian": lambda: ndd.laplacian(batch),
                "filter 3x3": lambda: ndd.filter(batch, kernel),
                "equalize": lambda: ndd.equalize(batch),
                "clahe 8x8": lambda: ndd.clahe(batch, tiles_x=8, tiles_y=8, clip_limit=2.0),
                "jpeg q50": lambda: ndd.jpeg_compression_distortion(batch, quality=50),
            }  # fmt: skip
            for name, call in others.items():
                rows.append((name, "ndd_triton cpu", best_ms(
                    lambda call=call: call().evaluate(), opts.batch, opts.repeat)))
    from ndd_triton.ops._color_matrix import hsv_matrices

    m = torch.from_numpy(hsv_matrices(np.array([30.0]), np.array([0.8]), np.ones(1))[0]
                         .astype(np.float32) * 0.99)
    tensors = [torch.from_numpy(im) for im in images]
    rows.append(("color_twist", "torch matmul", best_ms(
        lambda: [(t.reshape(-1, 3).float() @ m.T).add_(0.5).clamp_(0, 255).to(torch.uint8)
                 for t in tensors], opts.batch, opts.repeat)))
    rows.append(("gaussian_blur", "torch conv2d", best_ms(
        lambda: [_torch_blur(t, opts.sigma) for t in tensors], opts.batch, opts.repeat)))
    rows += _opencv_rows(images, m.numpy(), opts)
    order = [op for op, _, _ in rows]
    rows.sort(key=lambda row: order.index(row[0]))  # group by op, stable within one
    _print_table(rows, opts)


if __name__ == "__main__":
    main()
