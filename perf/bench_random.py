"""ms/image of the random distributions and noise ops on the CPU (480x640x3, 1 thread).

ndd_triton's values are a pure function of (RNG key, draw index) (counter-based Philox, so CPU
and GPU agree); the baseline is NumPy's stateful `Generator` doing the same arithmetic, which is
what a hand-written augmentation would use.
Usage: python perf/bench_random.py [--batch 8] [--repeat 3]
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def best_ms(fn: Callable[[], Any], images: int, repeat: int) -> float:
    """Best wall time over `repeat` runs, per image, after one warm-up run."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) / images * 1e3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    opts = parser.parse_args()
    import ndd_triton as ndd

    shape = (480, 640, 3)
    gen = np.random.default_rng(0)
    images = [gen.integers(0, 256, shape, dtype=np.uint8) for _ in range(opts.batch)]
    batch = ndd.as_batch(images, layout="HWC")
    rng = ndd.random.RNG(seed=1)
    n = opts.batch

    def numpy_each(fn: Callable[[np.ndarray], Any]) -> Callable[[], Any]:
        return lambda: [fn(img) for img in images]

    cases = [
        ("random.uniform f32", lambda: ndd.random.uniform(shape=shape, batch_size=n, rng=rng),
         numpy_each(lambda img: gen.random(shape, dtype=np.float32) * 2 - 1)),
        ("random.normal f32", lambda: ndd.random.normal(shape=shape, batch_size=n, rng=rng),
         numpy_each(lambda img: gen.standard_normal(shape, dtype=np.float32))),
        ("noise.gaussian u8", lambda: ndd.noise.gaussian(batch, stddev=10.0, rng=rng),
         numpy_each(lambda img: np.clip(np.rint(img + gen.normal(0, 10, shape)), 0, 255)
                    .astype(np.uint8))),
        ("noise.salt_and_pepper u8", lambda: ndd.noise.salt_and_pepper(batch, rng=rng),
         numpy_each(lambda img: np.where((gen.random(shape[:2]) < 0.05)[..., None],
                                         np.where(gen.random(shape[:2]) < 0.5, 255, 0)[..., None],
                                         img))),
        ("noise.shot u8", lambda: ndd.noise.shot(batch, factor=20.0, rng=rng),
         numpy_each(lambda img: np.clip(gen.poisson(img / 20.0) * 20.0, 0, 255)
                    .astype(np.uint8))),
    ]  # fmt: skip
    print(f"# {platform.processor() or platform.machine()}, batch {n} x {shape}, 1 thread")
    print(f"{'op':28s} {'ndd_triton cpu':>15s} {'numpy Generator':>16s}")
    with ndd.EvalContext(num_threads=1):
        for name, ours, baseline in cases:
            ms = best_ms(lambda ours=ours: ours().evaluate(), n, opts.repeat)
            base = best_ms(baseline, n, opts.repeat)
            print(f"{name:28s} {ms:12.1f} ms {base:13.1f} ms")


if __name__ == "__main__":
    main()
