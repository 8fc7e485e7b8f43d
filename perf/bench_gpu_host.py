"""Host time of GPU op calls: µs per call and per extra sample, measurable without a GPU.

By default runs on the emulated gpu (`NDD_TRITON_EMULATE_GPU=1 TRITON_INTERPRET=1`, set here
before import) with every Triton kernel launch made a no-op, so what is left is the host work
of a GPU call:

* counted: prepare (plan cache, argument conversion, `infer`), the executor hand-off (eager),
  the run phase (`_run_gpu`: packing, output allocation, `GpuBatch`), the op's host-side table
  building, `GpuRun.launch` up to the kernel call (table packing and upload: on the emulated
  gpu the upload is a host concatenation, there is no pinned ring), torch ops a kernel runs
  besides Triton (on CPU tensors here), freeing the outputs;
* not counted: the Triton launch itself (`JITFunction.run`: binder, key, cache lookup, driver
  call; tens of µs on a real GPU, see `--real`), the pinned-ring copy, CUDA stream and event
  calls (inert on the emulated gpu), and the decoders' pixel decoding (`decode_sample` and
  the direct RGB decoder's libjpeg call are no-ops too: what remains is header parsing, window
  inference and the run's fan-out; the nvImageCodec path of a real GPU is not exercised, but
  `--device-codec` runs it with a stand-in codec that does nothing).

Each row is process CPU time (all threads: eager's executor thread counts) of `--calls`
calls then reading their results, min and median over `--reps` rounds: per call on 4 tiny
samples (8x8x3 uint8, 8x8 JPEGs), and per extra sample as (T(64 ragged ~500x375) - T(4)) / 60;
the ragged batches vary from call to call (`make_calls`).

    NDD_TRITON_EMULATE_GPU=1 TRITON_INTERPRET=1 .venv/bin/python perf/bench_gpu_host.py
    .venv/bin/python perf/bench_gpu_host.py --real        # a real GPU: nothing patched, wall too
    .venv/bin/python perf/bench_gpu_host.py --count-calls # + Python calls per call (load-proof)
    .venv/bin/python perf/bench_gpu_host.py --ops decoders.image --device-codec --reader
                                      # the decoder as a CUDA pipeline runs it (module text below)
"""

from __future__ import annotations

import argparse
import gc
import io
import itertools
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

# this checkout's ndd_triton, not an installed one
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

OPS = ("flip", "cast", "resize", "crop_mirror_normalize", "random_resized_crop", "rotate",
       "color_twist", "gaussian_blur", "decoders.image")  # fmt: skip


def _images(n: int, big: bool, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    if not big:
        return [rng.integers(0, 256, (8, 8, 3), dtype=np.uint8) for _ in range(n)]
    hs = rng.integers(340, 411, n)
    ws = rng.integers(450, 551, n)
    return [rng.integers(0, 256, (int(h), int(w), 3), dtype=np.uint8)
            for h, w in zip(hs, ws, strict=True)]  # fmt: skip


def _jpegs(images: list[np.ndarray]) -> list[np.ndarray]:
    from PIL import Image

    out = []
    for img in images:
        smooth = (img // 32 * 32).astype(np.uint8)  # compressible content, realistic file sizes
        buf = io.BytesIO()
        Image.fromarray(smooth).save(buf, format="JPEG", quality=90)
        out.append(np.frombuffer(buf.getvalue(), dtype=np.uint8).copy())
    return out


def _reader_batches(ndd: Any, files: list[list[np.ndarray]]) -> list[Any]:
    """The encoded batches as `readers.File` gives them to a pipeline's decoder: read from a
    folder, with the JPEG headers the reader parsed on its prefetch thread (its hints)."""
    import tempfile

    root = tempfile.mkdtemp(prefix="ndd_bench_host_")
    os.makedirs(os.path.join(root, "a"))
    for v, batch in enumerate(files):
        for i, data in enumerate(batch):
            data.tofile(os.path.join(root, "a", f"{v:02d}_{i:03d}.jpg"))
    reader = ndd.readers.File(file_root=root, random_shuffle=False)
    batches = [jpegs for jpegs, _ in reader.next_epoch(batch_size=len(files[0]))]
    del reader  # its prefetch thread stops (it would read the next epoch while we measure)
    gc.collect()
    return batches


def make_calls(ndd: Any, big: bool, reader: bool = False) -> dict[str, Callable[[], Any]]:
    """One call per op on a batch of 4 tiny or 64 ragged ~500x375 samples. The ragged calls
    cycle through `_VARIANTS` batches of different sizes, as a pipeline sees new image sizes
    every batch (per-shape caches, e.g. resize's tap tables, then miss as they would there).
    `reader`: the decoders read `readers.File` batches (headers hinted), else `as_batch`es."""
    n = 64 if big else 4
    variants = _VARIANTS if big else 1
    batches = [_images(n, big, 7 + v) for v in range(variants)]
    gpu = [ndd.as_batch(images, layout="HWC").gpu() for images in batches]
    files = [_jpegs(images) for images in batches]
    encoded = _reader_batches(ndd, files) if reader else [ndd.as_batch(f) for f in files]
    out = 224 if big else 4
    rng = ndd.random.RNG(seed=1)
    mean = [0.485 * 255, 0.456 * 255, 0.406 * 255]
    std = [0.229 * 255, 0.224 * 255, 0.225 * 255]
    calls: dict[str, Callable[[Any], Any]] = {
        "flip": lambda b: ndd.flip(b, horizontal=1),
        "cast": lambda b: ndd.cast(b, dtype=ndd.float32),
        "resize": lambda b: ndd.resize(b, size=[out, out]),
        "crop_mirror_normalize": lambda b: ndd.crop_mirror_normalize(
            b, crop=[out, out], mean=mean, std=std, mirror=1, dtype=ndd.float32,
            output_layout="CHW"),
        "random_resized_crop": lambda b: ndd.random_resized_crop(b, size=[out, out], rng=rng),
        "rotate": lambda b: ndd.rotate(b, angle=10.0),
        "color_twist": lambda b: ndd.color_twist(b, hue=10.0, saturation=1.2, contrast=0.9,
                                                 brightness=1.1),
        "gaussian_blur": lambda b: ndd.gaussian_blur(b, sigma=1.0),
        "decoders.image": lambda b: ndd.decoders.image(b, device="gpu"),
    }

    def cycling(fn: Callable[[Any], Any], inputs: list[Any]) -> Callable[[], Any]:
        turn = itertools.cycle(inputs)
        return lambda: fn(next(turn))

    return {name: cycling(fn, encoded if name.startswith("decoders") else gpu)
            for name, fn in calls.items()}  # fmt: skip


_VARIANTS = 5


def measure(fn: Callable[[], Any], calls: int, reps: int, real: bool) -> tuple[float, float, float]:
    """(min, median) process-CPU µs per call over `reps` rounds of `calls` calls, and the
    median wall µs per call."""
    import torch

    def sync() -> None:
        if real:
            torch.cuda.synchronize()

    for _ in range(2 * _VARIANTS):
        fn().evaluate()
    sync()
    cpu, wall = [], []
    for _ in range(reps):
        gc.collect()
        gc.disable()
        try:
            fn().evaluate()  # caches warm again after the collection (a pipeline's steady state)
            sync()
            t0, w0 = time.process_time(), time.perf_counter()
            outs = [fn() for _ in range(calls)]
            for o in outs:
                o.evaluate()
            del outs
            sync()
            cpu.append((time.process_time() - t0) / calls)
            wall.append((time.perf_counter() - w0) / calls)
        finally:
            gc.enable()
    return 1e6 * min(cpu), 1e6 * statistics.median(cpu), 1e6 * statistics.median(wall)


def _no_launch() -> None:
    """Make every Triton kernel launch (interpreter) and every pixel decode a no-op."""
    import triton.runtime.interpreter as interp

    def run(self: Any, *args: Any, grid: Any, warmup: Any = False, **kwargs: Any) -> None:
        return None

    interp.InterpretedFunction.run = run  # type: ignore[method-assign]
    from ndd_triton.decoders import _pillow
    from ndd_triton.kernels.gpu import decoders

    decoders.decode_sample = lambda view, arg, op: None  # type: ignore[assignment]
    # a batch of plain RGB JPEGs decodes by one libjpeg call per sample (`bind_direct_rgb`)
    _pillow.direct_rgb_decoder = lambda: lambda data, colorspace, buffer: None


def _device_codec() -> None:
    """Send `decoders.image(device="gpu")` down the nvImageCodec path (what a CUDA machine with
    nvImageCodec runs) with a stand-in codec whose calls do nothing: what is left is that
    path's host work on our side (completeness checks, colour specs, the output's slots, the
    pointer check). The stand-in's own work is a Python object per image, less than the real
    binding's (which also reads a torch view's `__cuda_array_interface__`, a Python property,
    where a tree hands it torch views)."""
    from ndd_triton.kernels.gpu import decoders

    class Image:
        __slots__ = ("__cuda_array_interface__",)

        def __init__(self, target: Any) -> None:
            self.__cuda_array_interface__ = (
                {"data": (target.data_ptr(), False)} if hasattr(target, "data_ptr") else
                target.__cuda_array_interface__)  # fmt: skip

    class Codec:
        class ColorSpec:
            SRGB, GRAY, UNCHANGED = "rgb", "gray", "unchanged"

        @staticmethod
        def DecodeParams(color_spec: Any, apply_exif_orientation: Any) -> Any:
            return None

        @staticmethod
        def CodeStream(data: Any) -> Any:
            return data

        @staticmethod
        def as_images(targets: Any, cuda_stream: Any) -> list[Any]:
            return [Image(t) for t in targets]

    class Decoder:
        def decode(self, streams: Any, params: Any, cuda_stream: Any, images: Any = None) -> Any:
            return images

    decoders._device_codec_wanted = lambda out: True  # type: ignore[assignment]
    decoders._nvimgcodec = lambda: (Codec, Decoder())  # type: ignore[assignment]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", default=",".join(OPS), help="comma-separated op names")
    parser.add_argument("--modes", default="sync_cpu,eager")
    parser.add_argument("--calls", type=int, default=20, help="calls per round, 4 samples")
    parser.add_argument("--big-calls", type=int, default=2, help="calls per round, 64 samples")
    parser.add_argument("--reps", type=int, default=25, help="rounds (short rounds: the min "
                        "of many is stable on a loaded machine)")
    parser.add_argument("--real", action="store_true", help="real CUDA, nothing patched")
    parser.add_argument("--memo", choices=("on", "miss", "off"), default="on",
                        help="launch memo (runtime/launch_memo.py): on (as shipped; the tiny "
                        "calls and the 5 recurring ragged batches replay their launches), miss "
                        "(emptied before every call: each call is a new signature, as with a "
                        "new ragged batch every call), off")  # fmt: skip
    parser.add_argument("--device-codec", action="store_true",
                        help="decoders: the nvImageCodec path with a stand-in codec that does "
                        "nothing (`_device_codec`), instead of the host decode")
    parser.add_argument("--reader", action="store_true",
                        help="decoders: decode `readers.File` batches (the JPEG headers parsed "
                        "by the reader, as in a pipeline) instead of `as_batch`es of the bytes")
    parser.add_argument("--count-calls", action="store_true",
                        help="also print Python function calls per call (tiny, 64 ragged)")
    opts = parser.parse_args()
    if not opts.real:
        os.environ["NDD_TRITON_EMULATE_GPU"] = "1"
        os.environ["TRITON_INTERPRET"] = "1"
    import torch

    import ndd_triton as ndd

    if opts.real and not torch.cuda.is_available():
        sys.exit("--real needs a CUDA device")
    if not opts.real:
        _no_launch()
        if opts.device_codec:
            _device_codec()
    if opts.device_codec and opts.reader:  # as in a pipeline after its first batch: the codec
        # was used, so the readers make its code streams (`_header_hints.HINT_CODE_STREAMS`)
        ndd.decoders.image(ndd.as_batch(_jpegs(_images(1, False, 0))), device="gpu").evaluate()
    tiny, big = make_calls(ndd, False, opts.reader), make_calls(ndd, True, opts.reader)
    from ndd_triton.runtime import launch_memo

    launch_memo.ENABLED = opts.memo != "off"
    if opts.memo == "miss":
        def first_sight(fn: Callable[[], Any]) -> Callable[[], Any]:
            def call() -> Any:
                launch_memo.clear()
                return fn()
            return call

        tiny = {k: first_sight(f) for k, f in tiny.items()}
        big = {k: first_sight(f) for k, f in big.items()}
    where = torch.cuda.get_device_name() if opts.real else "emulated gpu, launches are no-ops"
    print(f"# {ndd.__file__}")
    print(f"# GPU-path host time, {where}; process CPU µs (min / median of {opts.reps} rounds);"
          f" per call: {opts.calls} calls on 4 x 8x8x3; per sample: ({opts.big_calls} calls on "
          f"64 ragged ~500x375 - 4) / 60; launch memo {opts.memo}"
          + ("; decoders: nvImageCodec path, stand-in codec" if opts.device_codec else "")
          + ("; decoders: readers.File batches" if opts.reader else "")
          + f"; load {os.getloadavg()[0]:.1f}")
    print(f"{'op':<24} {'mode':<9} {'call min':>9} {'call med':>9} {'sample min':>10} "
          f"{'sample med':>10} {'wall/call':>10}"
          + (f" {'py calls':>8} {'(64)':>8}" if opts.count_calls else ""))
    for name in opts.ops.split(","):
        for mode_name in opts.modes.split(","):
            mode = getattr(ndd.EvalMode, mode_name)
            try:
                with mode:
                    small = measure(tiny[name], opts.calls, opts.reps, opts.real)
                    large = measure(big[name], opts.big_calls, opts.reps, opts.real)
            except Exception as e:
                print(f"{name:<24} {mode_name:<9} FAILED {type(e).__name__}: {str(e)[:160]}")
                continue
            per_min = (large[0] - small[0]) / 60
            per_med = (large[1] - small[1]) / 60
            counts = ""
            if opts.count_calls:
                with mode:
                    counts = f" {python_calls(tiny[name]):8d} {python_calls(big[name]):8d}"
            print(f"{name:<24} {mode_name:<9} {small[0]:9.1f} {small[1]:9.1f} {per_min:10.2f} "
                  f"{per_med:10.2f} {small[2]:10.1f}{counts}")
            sys.stdout.flush()


def python_calls(fn: Callable[[], Any], calls: int = 50) -> int:
    """Python function calls (cProfile's count, builtins included) per call of `fn`, its result
    read: a measure of host work that does not drift with the machine's load, for comparing
    two checkouts where the times' run-to-run spread hides a 10-20% change. This thread's
    calls only: an eager call that runs on the executor thread counts its prepare alone."""
    import cProfile
    import pstats

    for _ in range(5):
        fn().evaluate()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        fn().evaluate()
    profiler.disable()
    return round(pstats.Stats(profiler).total_calls / calls)  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
