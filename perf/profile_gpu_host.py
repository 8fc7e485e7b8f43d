"""Where the host time of a tiny GPU op call goes, on a real GPU (perf/gpu.md).

`python perf/profile_gpu_host.py [--calls 500]` prints:
1. micro-costs of the pieces a call is made of (a Triton launch of a trivial kernel with and
   without launch options, a CUDA event created and recorded, a small pinned upload, a
   `torch.empty` on the device, entering `torch.cuda.stream(s)`), µs each;
2. for tiny calls (4 x 8x8x3 uint8) in sync_cpu mode: µs per call, and the time spent in
   nested pieces, measured by wrapping them: the whole call after argument binding (prepare
   and, in sync_cpu, the run), the run phase (`_run_gpu`), Triton launches (`GpuRun.launch`,
   uploads included), table uploads, the pinned ring, output allocation, the completion event;
3. a cProfile of the flip calls (top functions by own time).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np


def per_call_us(fn: Callable[[], Any], calls: int) -> float:
    import torch

    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    elapsed = time.perf_counter() - start
    torch.cuda.synchronize()
    return 1e6 * elapsed / calls


def micro(calls: int) -> None:
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def _noop(x, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)

    x = torch.zeros(256, device="cuda")
    host = torch.zeros(64, dtype=torch.uint8, pin_memory=True)
    stream = torch.cuda.Stream()
    rows = {
        "triton launch kernel[grid](x, n, BLOCK)": lambda: _noop[(1,)](x, 256, BLOCK=256),
        "  + enable_fp_fusion=False": lambda: _noop[(1,)](x, 256, BLOCK=256,
                                                          enable_fp_fusion=False),
        "torch.cuda.Event() + record": lambda: torch.cuda.Event().record(),
        "pinned 64 B -> device (non_blocking)": lambda: host.to("cuda", non_blocking=True),
        "torch.empty(1000, uint8, cuda)": lambda: torch.empty(1000, dtype=torch.uint8,
                                                              device="cuda"),
        "with torch.cuda.stream(s)": lambda: torch.cuda.stream(stream).__enter__(),
        "torch.cuda.current_stream()": torch.cuda.current_stream,
        "tensor[a:b] view (cuda)": lambda: x[3:40],
    }
    print("\n## Micro-costs, µs each")
    for name, fn in rows.items():
        print(f"{name:<44} {per_call_us(fn, calls):8.1f}")


def _wrap(owner: Any, name: str, bucket: str, spent: dict[str, float]) -> Callable[[], None]:
    original = getattr(owner, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent[bucket] += time.perf_counter() - start

    setattr(owner, name, timed)
    return lambda: setattr(owner, name, original)


def breakdown(calls: int) -> None:
    import ndd_triton as ndd
    from ndd_triton.core.storage import BatchStorage
    from ndd_triton.kernels.gpu import _tables
    from ndd_triton.runtime import dispatch, prepare

    samples = [np.random.default_rng(i).integers(0, 255, (8, 8, 3), dtype=np.uint8)
               for i in range(4)]  # fmt: skip
    tiny = ndd.batch(samples, layout="HWC").gpu().evaluate()
    ops = {
        "flip": lambda: ndd.flip(tiny, horizontal=1),
        "cast": lambda: ndd.cast(tiny, dtype=ndd.float32),
        "brightness_contrast": lambda: ndd.brightness_contrast(tiny, brightness=1.1),
        "crop_mirror_normalize": lambda: ndd.crop_mirror_normalize(tiny, crop=[4, 4]),
        "resize": lambda: ndd.resize(tiny, size=[4, 4]),
        "rotate": lambda: ndd.rotate(tiny, angle=10.0),
    }
    print(f"\n## Tiny calls (4 x 8x8x3 uint8, sync_cpu), µs per call; pieces of the run phase "
          f"({calls} calls)")
    pieces = ["prepare (call_op)", "run (_run_gpu)", "launch", "upload", "ring upload",
              "allocate", "event"]
    print(f"{'op':<24} {'total':>7} " + " ".join(f"{p:>11}" for p in pieces))
    for name, fn in ops.items():
        spent: dict[str, float] = defaultdict(float)
        undo = [
            _wrap(prepare, "_prepare_and_execute", "prepare (call_op)", spent),
            _wrap(dispatch, "_run_gpu", "run (_run_gpu)", spent),
            _wrap(_tables.GpuRun, "launch", "launch", spent),
            _wrap(_tables.GpuRun, "upload", "upload", spent),
            _wrap(_tables._PinnedRing, "upload", "ring upload", spent),
            _wrap(BatchStorage, "allocate", "allocate", spent),
        ]
        from ndd_triton.runtime import stream as _stream

        undo.append(_wrap(_stream.Event, "__init__", "event", spent))
        with ndd.EvalMode.sync_cpu:
            total = per_call_us(lambda fn=fn: fn().evaluate(), calls)
        for u in reversed(undo):
            u()
        per = {k: 1e6 * v / (calls + 20) for k, v in spent.items()}
        print(f"{name:<24} {total:7.1f} " + " ".join(f"{per.get(p, 0.0):11.1f}" for p in pieces))
        sys.stdout.flush()


def profile_flip(calls: int) -> None:
    import ndd_triton as ndd

    samples = [np.zeros((8, 8, 3), np.uint8) for _ in range(4)]
    tiny = ndd.batch(samples, layout="HWC").gpu().evaluate()
    with ndd.EvalMode.sync_cpu:
        for _ in range(20):
            ndd.flip(tiny, horizontal=1).evaluate()
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(calls):
            ndd.flip(tiny, horizontal=1).evaluate()
        profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(30)
    print(f"\n## cProfile: {calls} x flip (sync_cpu), by own time")
    print(out.getvalue()[:9000])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    opts = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        sys.exit("perf/profile_gpu_host.py: needs a CUDA device")
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}")
    micro(opts.calls)
    breakdown(opts.calls)
    profile_flip(opts.calls)


if __name__ == "__main__":
    main()
