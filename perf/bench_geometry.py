"""ms/image of resize and crop_mirror_normalize on the CPU (32x480x640x3 uint8, 1 thread).

resize: to 224x224, LINEAR with antialias (DALI's default filter), against plain torch
`F.interpolate(mode="bilinear", antialias=True)` on uint8 (torch's fast path, what
torchvision v2 calls) and on float32, and torchvision.transforms.v2.functional.resize when
importable. The brief's reference numbers: DALI 3.8, torchvision v2 0.45, OpenCV 0.94 ms/image.
Torch's antialiased bilinear is not DALI's filter at the borders (it renormalises instead of
clamping) and its uint8 path rounds the intermediate, so the table also prints each method's
max |difference| from the exact (float64) DALI filter.
crop_mirror_normalize: 224x224 centre crop to float32 CHW with ImageNet mean/std, against a
plain torch slice + permute + normalise.
Usage: python perf/bench_geometry.py [--batch 32] [--repeat 3]
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F


def best_ms(fn: Callable[[], Any], images: int, repeat: int) -> float:
    """Best wall time over `repeat` runs, per image, after one warm-up run."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) / images * 1e3


def exact_linear_aa(image: np.ndarray, out_h: int, out_w: int) -> np.ndarray:
    """DALI's antialiased linear resize in float64 (triangle filter, clamped borders)."""
    from ndd_triton.kernels._resample import LINEAR, AxisPlan, axis_table

    def matrix(n_in: int, n_out: int) -> np.ndarray:
        t = axis_table(AxisPlan(n_in, n_out, 0.0, n_in / n_out, LINEAR, True))
        m = np.zeros((n_out, n_in))
        for k in range(t.taps):
            np.add.at(m, (np.arange(n_out), t.index[:, k]), t.weight[:, k].astype(np.float64))
        return m

    rows = np.einsum("jh,hwc->jwc", matrix(image.shape[0], out_h), image.astype(np.float64))
    return np.einsum("iw,jwc->jic", matrix(image.shape[1], out_w), rows)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    opts = parser.parse_args()
    torch.set_num_threads(1)
    import ndd_triton as ndd

    rng = np.random.default_rng(0)
    images = [rng.integers(0, 256, (480, 640, 3), dtype=np.uint8) for _ in range(opts.batch)]
    batch = ndd.as_batch(images, layout="HWC")
    tensors = [torch.from_numpy(im).permute(2, 0, 1).unsqueeze(0) for im in images]
    mean, std = [0.485 * 255, 0.456 * 255, 0.406 * 255], [0.229 * 255, 0.224 * 255, 0.225 * 255]
    exact = exact_linear_aa(images[0], 224, 224)
    rows: list[tuple[str, str, float, float]] = []

    def err(result: Any) -> float:
        return float(np.abs(np.asarray(result, dtype=np.float64) - exact).max())

    with ndd.EvalContext(num_threads=1):
        rows.append(("resize", "ndd_triton cpu", best_ms(
            lambda: ndd.resize(batch, size=[224, 224]).evaluate(), opts.batch, opts.repeat),
            err(ndd.resize(batch, size=[224, 224]).cpu().select(0))))
        rows.append(("crop_mirror_norm", "ndd_triton cpu", best_ms(
            lambda: ndd.crop_mirror_normalize(batch, crop=(224, 224), mean=mean, std=std)
            .evaluate(), opts.batch, opts.repeat), float("nan")))
    for name, cast in (("torch interp aa u8", None), ("torch interp aa f32", torch.float32)):
        src = [t.contiguous(memory_format=torch.channels_last) for t in tensors]
        src = [t.to(cast) for t in src] if cast else src
        rows.append(("resize", name, best_ms(
            lambda s=src: [F.interpolate(t, size=(224, 224), mode="bilinear", antialias=True)
                           for t in s], opts.batch, opts.repeat),
            err(F.interpolate(src[0], size=(224, 224), mode="bilinear", antialias=True)[0]
                .permute(1, 2, 0).float())))  # fmt: skip
    try:
        from torchvision.transforms.v2 import functional as tvf

        rows.append(("resize", "torchvision v2", best_ms(
            lambda: [tvf.resize(t, [224, 224], antialias=True) for t in tensors], opts.batch,
            opts.repeat), err(tvf.resize(tensors[0], [224, 224])[0].permute(1, 2, 0))))
    except ImportError:
        rows.append(("resize", "torchvision: not installed", float("nan"), float("nan")))
    m = torch.tensor(mean).view(3, 1, 1)
    s = torch.tensor(std).view(3, 1, 1)
    rows.append(("crop_mirror_norm", "torch slice+normalize", best_ms(
        lambda: [(t[0, :, 128:352, 208:432].float() - m) / s for t in tensors], opts.batch,
        opts.repeat), float("nan")))
    print(f"{platform.processor() or platform.machine()}, torch {torch.__version__}, numpy "
          f"{np.__version__}; batch {opts.batch}x480x640x3 u8 -> 224x224, 1 thread")
    print(f"{'op':17s} {'implementation':27s} {'ms/image':>9s}  max|diff| from DALI filter")
    for op, impl, ms, diff in rows:
        print(f"{op:17s} {impl:27s} {ms:9.3f}  {diff:.3f}")


if __name__ == "__main__":
    main()
