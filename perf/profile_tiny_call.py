"""Where the host time of a tiny GPU call goes: cProfile of `--calls` calls of one op on 4 x 8x8x3
uint8 samples (the issue-17 "tiny call"), sync_cpu and eager, top functions by own time.

`python perf/profile_tiny_call.py [--op flip] [--calls 2000]` on a machine with CUDA (also runs
on the emulated gpu, where the interpreter's launch dominates).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--op", default="flip", choices=("flip", "cast", "crop_mirror_normalize"))
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--top", type=int, default=30)
    opts = parser.parse_args()
    import numpy as np
    import torch

    import ndd_triton as ndd

    gen = np.random.default_rng(0)
    tiny = ndd.as_batch([gen.integers(0, 256, (8, 8, 3), dtype=np.uint8) for _ in range(4)],
                        layout="HWC").gpu()  # fmt: skip
    calls = {"flip": lambda: ndd.flip(tiny, horizontal=1).evaluate(),
             "cast": lambda: ndd.cast(tiny, dtype=ndd.float32).evaluate(),
             "crop_mirror_normalize": lambda: ndd.crop_mirror_normalize(tiny, crop=[4, 4])
             .evaluate()}  # fmt: skip
    fn = calls[opts.op]
    sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
    for mode in ("sync_cpu", "eager"):
        with getattr(ndd.EvalMode, mode):
            for _ in range(50):
                fn()
            sync()
            start = time.perf_counter()
            for _ in range(opts.calls):
                fn()
            sync()
            per_call = 1e6 * (time.perf_counter() - start) / opts.calls
            profiler = cProfile.Profile()
            profiler.enable()
            for _ in range(opts.calls):
                fn()
            sync()
            profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(opts.top)
        print(f"\n## {opts.op}, {mode}: {per_call:.1f} µs per call unprofiled; cProfile, "
              f"{opts.calls} calls, by own time")
        print("\n".join(out.getvalue().splitlines()[4:]))


if __name__ == "__main__":
    main()
