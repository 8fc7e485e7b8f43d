"""Device time of compile mode's one-pass resample + normalise (`_resample_normalize_taps_kernel`)
by program shape, beside the eager chain's kernels: which `ROWS_PER_PROGRAM` / `NUM_WARPS` /
`TILE_TAPS` (kernels/gpu/resample_normalize.py) to keep, decided on a GPU.

Rows: the RN50 chain (`random_resized_crop(224) -> flip -> crop_mirror_normalize`, windows drawn
in the pass) and the letterbox (`resize(resize_longer=512) -> crop_mirror_normalize(crop 512,
pad)`) on a batch of `--kbatch` 480x640x3 uint8 images, eager (5 / 4 launches) and compiled (1).
`python perf/sweep_resample_normalize.py [--configs 1x4,4x4,4x8] [--dry]`; `--dry` runs each
config once on tiny images (also on the emulated gpu) as a check of the script.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_gpu_kernels import MEAN, STD, device_us


def _bodies(ndd: Any) -> dict[str, Any]:
    def rn50(x: Any) -> Any:
        x = ndd.flip(ndd.random_resized_crop(x, size=[224, 224]), horizontal=1)
        return ndd.crop_mirror_normalize(x, mean=MEAN, std=STD)

    def letterbox(x: Any) -> Any:
        x = ndd.resize(x, resize_longer=512)
        return ndd.crop_mirror_normalize(x, crop=[512, 512], mean=MEAN, std=STD,
                                         out_of_bounds_policy="pad", fill_values=[0.0] * 3)

    return {"rrc 224 -> flip -> cmn": rn50, "letterbox 512": letterbox}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kbatch", type=int, default=32)
    parser.add_argument("--configs", default="1x4,2x4,4x4,8x4,4x8,8x8,4x4x256,4x4x1024",
                        help="ROWSxWARPS[xTILE_TAPS], comma-separated")
    parser.add_argument("--dry", action="store_true")
    opts = parser.parse_args()
    import numpy as np

    import ndd_triton as ndd
    from ndd_triton.kernels.gpu import resample_normalize as rn

    h, w = (480, 640) if not opts.dry else (12, 17)
    gen = np.random.default_rng(0)
    batch = ndd.as_batch([gen.integers(0, 256, (h, w, 3), dtype=np.uint8)
                          for _ in range(opts.kbatch)], layout="HWC").gpu()  # fmt: skip
    n = opts.kbatch

    def measure(fn: Any) -> float:
        if opts.dry:
            fn()
            return float("nan")
        return device_us(fn)

    bodies = _bodies(ndd)
    print(f"## compile mode's one-pass resample + normalise, batch {n} x {h}x{w}x3 uint8: "
          "device µs per batch")
    print(f"{'row':<26} {'config':<26} {'device µs':>10}")
    for name, body in bodies.items():
        print(f"{name:<26} {'eager':<26} {measure(lambda b=body: b(batch).evaluate()):10.1f}")
    for config in opts.configs.split(","):
        parts = [int(p) for p in config.split("x")]
        rows, warps = parts[0], parts[1]
        tile = parts[2] if len(parts) > 2 else 512
        rn.ROWS_PER_PROGRAM, rn.NUM_WARPS, rn.TILE_TAPS = rows, warps, tile
        label = f"rows {rows}, warps {warps}, taps {tile}"
        for name, body in bodies.items():
            # a fresh program per config and row (no eager call inside its iterations)
            it = iter(ndd.ExternalSource(itertools.repeat(batch), device="gpu").captured(n))
            try:
                us = measure(lambda b=body, it=it: b(next(it)).evaluate())
                print(f"{name:<26} {label:<26} {us:10.1f}")
            except Exception as e:
                print(f"{name:<26} {label:<26} FAILED {type(e).__name__}: {str(e)[:160]}")
            finally:
                it.close()  # (its open iteration would take the next row's calls)


if __name__ == "__main__":
    main()
