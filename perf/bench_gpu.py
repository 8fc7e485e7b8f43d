"""Real-CUDA benchmarks: the ResNet-50 data path and per-kernel timings, ndd_triton vs torch.

Run on a machine with an NVIDIA GPU: `python perf/bench_gpu.py [--count 512] [--batch 64]`.
Prints two tables (it exits with a message where CUDA is absent; the emulated gpu is not timed).

1. RN50 data path, images/s (median of `--epochs` epochs after a warm-up; each epoch ends with
   `torch.cuda.synchronize()`), on a generated ImageNet-like JPEG folder (as perf/bench_rn50.py):
   * ndd, GPU decode: `readers.File` -> `decoders.image(device="gpu")` (nvImageCodec when
     installed, else host decode + one upload) -> `random_resized_crop(224)` ->
     `flip(horizontal=coin_flip)` -> `crop_mirror_normalize` -> `.torch()`;
   * ndd, CPU decode: the same with `decoders.image(device="cpu")` then `.gpu()`;
   * both again with `next_epoch(compile=True)` (compile mode: batches issued ahead, the
     rrc -> flip -> cmn chain fused into one pass, docs/compile.md), and the GPU one with the
     fusion switched off (the calls issued ahead, each op with its own kernels);
   * eager vs compile=True for two other geometries after the GPU decoder: a random window
     resized to 300x300 (the detection recipe's) and a random rotation (+-15 degrees) before a
     224x224 crop, each one launch per batch when compiled;
   * torchvision: `torchvision.io.decode_jpeg(list, device="cuda")` (nvJPEG batched) and
     `transforms.v2` RandomResizedCrop + RandomHorizontalFlip per image, then stack + Normalize.
2. Kernels on a batch of `--kbatch` decoded 480x640 uint8 images already on the GPU, median ms
   per batch over CUDA events: ndd `resize` to 224x224 (one launch per batch) vs a torch
   `interpolate(antialias=True)` loop per image; `crop_mirror_normalize` 224x224 float CHW vs the
   torch equivalent on a stacked batch; `rotate` 15 degrees.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_rn50 import MEAN, STD, make_folder


def timed_epochs(epoch: Callable[[], int], epochs: int) -> float:
    """Median images/s over `epochs` epochs after one warm-up epoch."""
    import torch

    epoch()
    torch.cuda.synchronize()
    rates = []
    for _ in range(epochs):
        start = time.perf_counter()
        n = epoch()
        torch.cuda.synchronize()
        rates.append(n / (time.perf_counter() - start))
    return statistics.median(rates)


def cuda_ms(fn: Callable[[], Any], reps: int = 20) -> float:
    """Median ms of `fn` between CUDA events on the current stream, after two warm-ups."""
    import torch

    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def attempt(rows: dict[str, Any], name: str, measure: Callable[[], float]) -> None:
    """rows[name] = measure(), or the error (one broken row does not lose the others)."""
    try:
        rows[name] = measure()
    except Exception as e:
        rows[name] = f"FAILED {type(e).__name__}: {str(e)[:300]}"


def rn50_rows(root: str, paths: list[str], opts: argparse.Namespace) -> dict[str, Any]:
    import torch

    import ndd_triton as ndd

    ndd.set_num_threads(opts.threads)
    rng = ndd.random.RNG(seed=42)
    rows: dict[str, Any] = {}

    def ndd_epoch(reader: Any, decode_device: str, compile: bool = False,
                  geometry: str = "rrc") -> int:  # fmt: skip
        n = 0
        for jpegs, labels in reader.next_epoch(batch_size=opts.batch, compile=compile):
            images = ndd.decoders.image(jpegs, device=decode_device)
            if decode_device == "cpu":
                images = images.gpu()
            crop = {}
            if geometry == "window":
                images, size = window_resize(images, jpegs.batch_size)
            elif geometry == "rotate":  # a random rotation, then the training crop
                angles = ndd.random.uniform(batch_size=jpegs.batch_size, range=[-15.0, 15.0],
                                            rng=rng)  # fmt: skip
                images, size = ndd.rotate(images, angle=angles, fill_value=0.0), 224
                crop = {"crop": (224, 224)}
            else:
                images, size = ndd.random_resized_crop(images, size=224, rng=rng), 224
            flips = ndd.random.coin_flip(batch_size=jpegs.batch_size, rng=rng)
            images = ndd.flip(images, horizontal=flips)
            out = ndd.crop_mirror_normalize(images, mean=MEAN, std=STD, **crop).torch()
            assert out.is_cuda, out.device
            assert tuple(out.shape[1:]) == (3, size, size), out.shape
            labels.torch()
            n += jpegs.batch_size
        return n

    def window_resize(images: Any, n: int) -> tuple[Any, int]:
        """The detection recipe's geometry: a random window (slice), resized to 300x300."""
        anchor = ndd.random.uniform(batch_size=n, range=[0.0, 0.3], shape=[2], rng=rng)
        shape = ndd.random.uniform(batch_size=n, range=[0.5, 0.7], shape=[2], rng=rng)
        return ndd.resize(ndd.slice(images, anchor, shape), size=[300, 300]), 300

    from ndd_triton.runtime import compiled

    fusion = compiled.plan_groups
    for device, compile, fuse in (("gpu", False, True), ("gpu", True, True), ("gpu", True, False),
                                  ("cpu", False, True), ("cpu", True, True)):  # fmt: skip
        reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=1)
        name = f"ndd rn50, {device} decode" + (", compile=True" if compile else "") + \
            ("" if fuse else ", no fusion")  # fmt: skip
        # "no fusion": compile mode issuing the traced calls ahead, each op its own kernels
        compiled.plan_groups = fusion if fuse else (lambda program: {})
        try:
            attempt(rows, name, lambda reader=reader, device=device, compile=compile:
                    timed_epochs(lambda: ndd_epoch(reader, device, compile), opts.epochs))
        finally:
            compiled.plan_groups = fusion

    # slice -> resize -> flip -> cmn and rotate -> flip -> cmn: one pass each when compiled
    for geometry, label in (("window", "window -> resize 300"), ("rotate", "rotate -> crop 224")):
        for compile in (False, True):
            reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=1)
            name = f"ndd {label}, gpu decode" + (", compile=True" if compile else "")
            attempt(rows, name, lambda reader=reader, compile=compile, geometry=geometry:
                    timed_epochs(lambda: ndd_epoch(reader, "gpu", compile, geometry),
                                 opts.epochs))  # fmt: skip

    encoded = [np.fromfile(p, dtype=np.uint8) for p in paths]
    batches = [ndd.as_batch(encoded[i:i + opts.batch]) for i in range(0, len(encoded), opts.batch)]

    def decode_only() -> int:
        for b in batches:
            ndd.decoders.image(b, device="gpu").evaluate()
        return len(encoded)

    attempt(rows, "ndd decoders.image(device='gpu') only",
            lambda: timed_epochs(decode_only, opts.epochs))
    nvimgcodec_rows(rows, encoded, opts)
    try:
        import torchvision
        from torchvision.transforms import v2
    except Exception as e:  # not a dependency
        rows["torchvision"] = f"skipped ({type(e).__name__}: {e})"
        return rows
    datas = [torch.from_numpy(e) for e in encoded]
    rrc = v2.RandomResizedCrop(224, antialias=True)
    flip = v2.RandomHorizontalFlip()
    mean = torch.tensor(MEAN, device="cuda").view(1, 3, 1, 1)
    std = torch.tensor(STD, device="cuda").view(1, 3, 1, 1)

    def tv_epoch() -> int:
        order = torch.randperm(len(datas)).tolist()
        for i in range(0, len(order), opts.batch):
            chunk = [datas[k] for k in order[i:i + opts.batch]]
            images = torchvision.io.decode_jpeg(chunk, device="cuda")
            crops = torch.stack([flip(rrc(im)) for im in images])
            ((crops.float() - mean) / std).contiguous()
        return len(datas)

    def tv_decode() -> int:
        for i in range(0, len(datas), opts.batch):
            torchvision.io.decode_jpeg(datas[i:i + opts.batch], device="cuda")
        return len(datas)

    attempt(rows, "torchvision rn50 (decode_jpeg cuda + v2)",
            lambda: timed_epochs(tv_epoch, opts.epochs))
    attempt(rows, "torchvision decode_jpeg(device='cuda') only",
            lambda: timed_epochs(tv_decode, opts.epochs))
    return rows


def nvimgcodec_rows(rows: dict[str, Any], encoded: list[np.ndarray],
                    opts: argparse.Namespace) -> None:
    """nvImageCodec called directly on the same batches, per backend: the decode ceiling."""
    try:
        from nvidia import nvimgcodec
    except ImportError:
        return
    batches = [[nvimgcodec.CodeStream(e.tobytes()) for e in encoded[i:i + opts.batch]]
               for i in range(0, len(encoded), opts.batch)]  # fmt: skip
    for label in ("default", "HW_GPU_ONLY", "GPU_ONLY", "HYBRID_CPU_GPU"):
        def measure(label: str = label) -> float:
            backends = None if label == "default" else \
                [nvimgcodec.Backend(getattr(nvimgcodec.BackendKind, label))]  # fmt: skip
            decoder = nvimgcodec.Decoder(backends=backends)

            def epoch() -> int:
                for b in batches:
                    decoder.decode(b)
                return len(encoded)

            return timed_epochs(epoch, opts.epochs)

        attempt(rows, f"nvImageCodec Decoder({label}) directly", measure)


def kernel_rows(opts: argparse.Namespace) -> dict[str, Any]:
    import torch
    import torch.nn.functional as F

    import ndd_triton as ndd

    gen = torch.Generator().manual_seed(0)
    images = [torch.randint(0, 256, (480, 640, 3), dtype=torch.uint8, generator=gen)
              for _ in range(opts.kbatch)]  # fmt: skip
    batch = ndd.as_batch([im.numpy() for im in images], layout="HWC").gpu()
    stacked = torch.stack(images).cuda()  # N,H,W,C
    rows: dict[str, Any] = {}
    attempt(rows, "ndd resize 224x224 LINEAR antialias (batch)", lambda: cuda_ms(
        lambda: ndd.resize(batch, size=[224, 224]).evaluate()))
    nchw = stacked.permute(0, 3, 1, 2)
    attempt(rows, "torch interpolate bilinear antialias, per image loop", lambda: cuda_ms(
        lambda: [F.interpolate(nchw[i:i + 1].float(), size=(224, 224), mode="bilinear",
                               antialias=True).round_().clamp_(0, 255).byte()
                 for i in range(len(images))]))  # fmt: skip
    attempt(rows, "torch interpolate bilinear antialias, stacked batch", lambda: cuda_ms(
        lambda: F.interpolate(nchw.float(), size=(224, 224), mode="bilinear", antialias=True
                              ).round_().clamp_(0, 255).byte()))  # fmt: skip
    small = ndd.resize(batch, size=[256, 256]).evaluate()
    attempt(rows, "ndd crop_mirror_normalize 224 float CHW (batch)", lambda: cuda_ms(
        lambda: ndd.crop_mirror_normalize(small, crop=[224, 224], mean=MEAN, std=STD).evaluate()))
    sm = small.torch()  # uniform shapes: one dense N,H,W,C tensor
    mean = torch.tensor(MEAN, device="cuda").view(1, 3, 1, 1)
    std = torch.tensor(STD, device="cuda").view(1, 3, 1, 1)
    attempt(rows, "torch crop + normalize + CHW (stacked batch)", lambda: cuda_ms(
        lambda: ((sm[:, 16:240, 16:240].permute(0, 3, 1, 2).float() - mean) / std
                 ).contiguous()))  # fmt: skip
    attempt(rows, "ndd rotate 15 deg LINEAR (batch)", lambda: cuda_ms(
        lambda: ndd.rotate(batch, angle=15.0, interp_type=ndd.types.INTERP_LINEAR
                           ).evaluate()))  # fmt: skip
    return rows


def profile_kernels(opts: argparse.Namespace) -> None:
    """Where the time of the ndd kernel rows goes: torch.profiler (device time per kernel,
    host time per Python call) and cProfile of the Python side."""
    import cProfile
    import pstats

    import torch
    from torch.profiler import ProfilerActivity, profile

    import ndd_triton as ndd

    gen = torch.Generator().manual_seed(0)
    batch = ndd.as_batch([torch.randint(0, 256, (480, 640, 3), dtype=torch.uint8,
                                        generator=gen).numpy() for _ in range(opts.kbatch)],
                         layout="HWC").gpu()  # fmt: skip
    small = ndd.resize(batch, size=[256, 256]).evaluate()
    with tempfile.TemporaryDirectory() as root:
        jpegs = ndd.as_batch([np.fromfile(p, dtype=np.uint8) for p in make_folder(root, 64)])
    work = {"decoders.image gpu (64 JPEGs)":
            lambda: ndd.decoders.image(jpegs, device="gpu").evaluate(),
            "resize": lambda: ndd.resize(batch, size=[224, 224]).evaluate(),
            "crop_mirror_normalize": lambda: ndd.crop_mirror_normalize(
                small, crop=[224, 224], mean=MEAN, std=STD).evaluate()}
    for name, fn in work.items():
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(10):
                fn()
            torch.cuda.synchronize()
        print(f"\n### torch.profiler: 10 x ndd {name}")
        print(prof.key_averages().table(sort_by="self_cuda_time_total", row_limit=8))
        start = time.perf_counter()
        for _ in range(50):
            fn()
        torch.cuda.synchronize()
        print(f"wall: {1e3 * (time.perf_counter() - start) / 50:.3f} ms per call (50 calls)")
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(50):
            fn()
        torch.cuda.synchronize()
        profiler.disable()
        print(f"### cProfile: 50 x ndd {name} (cumulative, top 25)")
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=512)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--kbatch", type=int, default=32)
    parser.add_argument("--only", default="rn50,kernels",
                        help="comma-separated subset of rn50, kernels, profile")
    opts = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        sys.exit("perf/bench_gpu.py: no CUDA device (torch.cuda.is_available() is False)")
    import ndd_triton as ndd

    try:
        from nvidia import nvimgcodec

        codec = f"nvImageCodec {nvimgcodec.__version__}"
    except Exception:
        codec = "no nvImageCodec (gpu decode = host decode + upload)"
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, ndd_triton "
          f"{ndd.__version__}, {codec}, {os.cpu_count()} CPUs, {opts.threads} threads")
    only = set(opts.only.split(","))
    if "rn50" in only:
        with tempfile.TemporaryDirectory() as root:
            paths = make_folder(root, opts.count)
            rows = rn50_rows(root, paths, opts)
        print(f"\n## RN50 data path: {opts.count} JPEGs ~500x375, batch {opts.batch}")
        print(f"{'':<50} {'img/s':>9}")
        for name, value in rows.items():
            print(f"{name:<50} {value:9.1f}" if isinstance(value, float) else f"{name:<50} {value}")
    if "kernels" in only:
        rows = kernel_rows(opts)
        print(f"\n## Kernels: batch of {opts.kbatch} 480x640x3 uint8 on the GPU")
        print(f"{'':<55} {'ms/batch':>9}")
        for name, value in rows.items():
            print(f"{name:<55} {value:9.3f}" if isinstance(value, float) else f"{name:<55} {value}")
    if "profile" in only:
        profile_kernels(opts)


if __name__ == "__main__":
    main()
