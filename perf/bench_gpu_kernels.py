"""GPU kernels side by side with torch/torchvision and the memory roofline, plus host time.

Run on a machine with an NVIDIA GPU: `python perf/bench_gpu_kernels.py [--kbatch 32]`.
`--dry` runs every row once on tiny images (also on the emulated gpu, no timing): a check that
the script works before spending device time.

For each op on a batch of `--kbatch` uint8 480x640x3 HWC images already on the GPU:
* **device µs**: GPU time per call from torch.profiler (every kernel and copy the call issues,
  summed, averaged over the profiled calls), ndd next to the torch/torchvision equivalent;
* **roofline µs**: (bytes read + bytes written) / the copy bandwidth measured here first (a
  device-to-device copy), for the memory-bound ops; `dev/roof` is how far from it the op is;
* **wall µs**: one call + `evaluate()` + `torch.cuda.synchronize()`, median.

Then the **host time of a tiny call** (4 samples of 8x8x3, flip and others): µs per call of
`op(x).evaluate()` in sync_cpu mode (prepare + launch on the caller's thread; the GPU work is
queued, not awaited) and in eager mode, next to a loop of `torch.flip` over the 4 samples.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def device_us(fn: Callable[[], Any], calls: int = 10) -> float:
    """GPU time per call (µs): all CUDA kernels and copies of `calls` calls, from the profiler."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    total = 0.0
    for event in prof.events():
        kind = str(getattr(event, "device_type", ""))
        if "CUDA" in kind:
            total += getattr(event, "device_time", None) or getattr(event, "cuda_time", 0.0)
    return total / calls


def wall_us(fn: Callable[[], Any], reps: int = 20) -> float:
    """Median µs of one call with a device synchronisation after it."""
    import torch

    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return 1e6 * statistics.median(times)


def copy_bandwidth() -> float:
    """Bytes per second of a large device-to-device copy (read + write counted)."""
    import torch

    src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    for _ in range(2):
        dst.copy_(src)
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(5):
        dst.copy_(src)
    b.record()
    b.synchronize()
    return 5 * 2 * src.numel() / (a.elapsed_time(b) / 1e3)


Case = tuple[str, Callable[[], Any], Callable[[], Any] | None, int | None]


class _Epoch:
    """A compile row's epoch, closed once its row is measured (`close_started`): a later row's
    eager calls made inside its open iteration would end its trace (a CompileFallbackWarning)
    and be counted as that iteration's."""

    started: list[_Epoch] = []

    def __init__(self, epoch: Any) -> None:
        self.epoch = epoch

    def __iter__(self) -> _Epoch:
        return self

    def __next__(self) -> Any:
        if self not in _Epoch.started:
            _Epoch.started.append(self)
        return next(self.epoch)

    @staticmethod
    def close_started() -> None:
        for e in _Epoch.started:
            e.epoch.close()
        _Epoch.started.clear()


def cases(batch: Any, stacked: Any, tv: Any) -> list[Case]:
    """(name, ndd call, torch equivalent or None, bytes moved for a memory-bound op or None)."""
    import torch

    import ndd_triton as ndd

    n, h, w, c = stacked.shape
    size = n * h * w * c
    nchw = stacked.permute(0, 3, 1, 2)
    u8, f32 = size, 4 * size
    small = ndd.resize(batch, size=[256, 256]).evaluate()
    small_t = small.torch()
    mean = torch.tensor(MEAN, device=stacked.device).view(1, 3, 1, 1)
    std = torch.tensor(STD, device=stacked.device).view(1, 3, 1, 1)
    mean_np, std_np = np.asarray(MEAN, np.float32), np.asarray(STD, np.float32)

    def normalize(x: Any) -> Any:  # three arithmetic calls; compile mode: one fused launch
        return (x / 255.0 - mean_np) / std_np

    compiled = _Epoch(ndd.ExternalSource(itertools.repeat(batch), device="gpu").captured(n))

    def rotate_crop(x: Any) -> Any:  # three calls; compile mode: one fused launch (affine_cmn)
        x = ndd.flip(ndd.rotate(x, angle=15.0, fill_value=0.0), horizontal=1)
        return ndd.crop_mirror_normalize(x, crop=[min(h, 224), min(w, 224)], mean=MEAN, std=STD)

    rotated = _Epoch(ndd.ExternalSource(itertools.repeat(batch), device="gpu").captured(n))

    def rn50(x: Any) -> Any:  # eager: 5 launches (rrc tables + 2 passes, flip, cmn); compiled: 1
        x = ndd.flip(ndd.random_resized_crop(x, size=[224, 224]), horizontal=1)
        return ndd.crop_mirror_normalize(x, mean=MEAN, std=STD)

    trained = _Epoch(ndd.ExternalSource(itertools.repeat(batch), device="gpu").captured(n))

    def letterbox(x: Any) -> Any:  # eager: 4 launches (tables, 2 passes, cmn); compiled: 1
        x = ndd.resize(x, resize_longer=512)
        return ndd.crop_mirror_normalize(x, crop=[512, 512], mean=MEAN, std=STD,
                                         out_of_bounds_policy="pad", fill_values=[0.0] * 3)

    boxed = _Epoch(ndd.ExternalSource(itertools.repeat(batch), device="gpu").captured(n))
    lam_t = torch.linspace(0.2, 0.8, n, device=stacked.device).view(n, 1, 1, 1)

    def mixup(x: Any) -> Any:  # eager: 4 launches (flip, x * lam, y * (1 - lam), +); compiled: 2
        lam = ndd.random.uniform(batch_size=n, range=[0.2, 0.8])  # (`1 - lam` on the host)
        return x * lam + ndd.flip(x, horizontal=1) * (1.0 - lam)

    mixed = _Epoch(ndd.ExternalSource(itertools.repeat(batch), device="gpu").captured(n))

    def to_u8(x: Any) -> Any:  # eager: 4 launches (mul, sub, clamp, cast); compiled: 1
        return ndd.cast(ndd.math.clamp(x * 1.5 - 20, 0, 255), dtype=ndd.uint8)

    adjusted = _Epoch(ndd.ExternalSource(itertools.repeat(batch), device="gpu").captured(n))
    lh, lw = round(h * 512 / max(h, w)), round(w * 512 / max(h, w))

    def torch_letterbox() -> Any:  # interpolate, normalise, pad to the centred square
        x = torch.nn.functional.interpolate(nchw.float(), size=(lh, lw), mode="bilinear",
                                            antialias=True).round_().clamp_(0, 255)
        x = (x - mean) / std
        top, left = (512 - lh) // 2, (512 - lw) // 2
        return torch.nn.functional.pad(x, (left, 512 - lw - left, top, 512 - lh - top))

    rows: list[Case] = [
        ("flip horizontal", lambda: ndd.flip(batch, horizontal=1).evaluate(),
         lambda: stacked.flip(2), 2 * u8),
        ("flip vertical", lambda: ndd.flip(batch, horizontal=0, vertical=1).evaluate(),
         lambda: stacked.flip(1), 2 * u8),
        ("cast u8 -> f32", lambda: ndd.cast(batch, dtype=ndd.float32).evaluate(),
         lambda: stacked.float(), u8 + f32),
        ("crop 224x224", lambda: ndd.crop(batch, crop=(min(h, 224), min(w, 224))).evaluate(),
         lambda: stacked[:, 128:352, 208:432].contiguous(), 2 * n * 224 * 224 * c),
        ("pad to 512x704", lambda: ndd.pad(batch, shape=[512, 704], axis_names="HW").evaluate(),
         lambda: torch.nn.functional.pad(stacked, (0, 0, 0, 64, 0, 32)),
         u8 + n * 512 * 704 * c),
        ("transpose HWC -> CHW", lambda: ndd.transpose(batch, perm=[2, 0, 1]).evaluate(),
         lambda: nchw.contiguous(), 2 * u8),
        ("brightness_contrast", lambda: ndd.brightness_contrast(
            batch, brightness=1.2, contrast=0.8).evaluate(),
         (lambda: tv.adjust_contrast(tv.adjust_brightness(nchw, 1.2), 0.8)) if tv else None,
         2 * u8),
        ("color_twist", lambda: ndd.color_twist(batch, hue=10.0, saturation=1.2).evaluate(),
         (lambda: tv.adjust_saturation(tv.adjust_hue(nchw, 10 / 360), 1.2)) if tv else None,
         2 * u8),
        ("color_space_conversion RGB -> GRAY", lambda: ndd.color_space_conversion(
            batch, image_type=ndd.types.RGB, output_type=ndd.types.GRAY).evaluate(),
         (lambda: tv.rgb_to_grayscale(nchw)) if tv else None, u8 + size // 3),
        ("erase 3 regions", lambda: ndd.erase(
            batch, anchor=[10, 10, 100, 100, 200, 200], shape=[50, 50, 50, 50, 50, 50],
            axis_names="HW").evaluate(), None, 2 * u8),
        ("noise.gaussian", lambda: ndd.noise.gaussian(batch, stddev=10.0).evaluate(),
         None, 2 * u8),
        ("grid_mask", lambda: ndd.grid_mask(batch, tile=50, ratio=0.5).evaluate(), None, 2 * u8),
        ("gaussian_blur sigma 2 (13 taps)", lambda: ndd.gaussian_blur(
            batch, sigma=2.0).evaluate(),
         (lambda: tv.gaussian_blur(nchw, [13, 13], [2.0, 2.0])) if tv else None, 2 * u8),
        ("laplacian window 3", lambda: ndd.laplacian(batch, window_size=3).evaluate(),
         None, 2 * u8),
        ("rotate 15 deg LINEAR", lambda: ndd.rotate(
            batch, angle=15.0, interp_type=ndd.types.INTERP_LINEAR).evaluate(),
         (lambda: tv.rotate(nchw, 15.0, interpolation=tv.InterpolationMode.BILINEAR,
                            expand=True)) if tv else None, None),
        ("warp_affine LINEAR", lambda: ndd.warp_affine(
            batch, matrix=[0.9, 0.1, 10.0, -0.1, 0.9, 20.0],
            interp_type=ndd.types.INTERP_LINEAR).evaluate(),
         (lambda: tv.affine(nchw, angle=6.0, translate=[10, 20], scale=0.9, shear=[0.0],
                            interpolation=tv.InterpolationMode.BILINEAR)) if tv else None, None),
        ("water", lambda: ndd.water(batch).evaluate(), None, None),
        ("sphere", lambda: ndd.sphere(batch).evaluate(), None, None),
        ("jitter", lambda: ndd.jitter(batch).evaluate(), None, None),
        ("resize 224x224 LINEAR antialias", lambda: ndd.resize(batch, size=[224, 224]).evaluate(),
         lambda: torch.nn.functional.interpolate(nchw.float(), size=(224, 224), mode="bilinear",
                                                 antialias=True).round_().clamp_(0, 255).byte(),
         None),
        ("random_resized_crop 224 (tables on device)", lambda: ndd.random_resized_crop(
            batch, size=[224, 224]).evaluate(), None, None),
        ("(x / 255 - mean) / std, eager (3 launches)", lambda: normalize(batch).evaluate(),
         lambda: (stacked.float() / 255 - mean.view(3)) / std.view(3), u8 + f32),
        ("(x / 255 - mean) / std, compile (1 launch)",
         lambda: normalize(next(compiled)).evaluate(),
         lambda: (stacked.float() / 255 - mean.view(3)) / std.view(3), u8 + f32),
        ("rotate 15 -> flip -> cmn 224, eager (3 launches)",
         lambda: rotate_crop(batch).evaluate(), None, None),
        ("rotate 15 -> flip -> cmn 224, compile (1 launch)",
         lambda: rotate_crop(next(rotated)).evaluate(), None, None),
        ("rrc 224 -> flip -> cmn, eager (5 launches)", lambda: rn50(batch).evaluate(), None,
         None),
        ("rrc 224 -> flip -> cmn, compile (1 launch)", lambda: rn50(next(trained)).evaluate(),
         None, None),
        ("letterbox 512 (resize -> padded cmn), eager (4 launches)",
         lambda: letterbox(batch).evaluate(), torch_letterbox, None),
        ("letterbox 512 (resize -> padded cmn), compile (1 launch)",
         lambda: letterbox(next(boxed)).evaluate(), torch_letterbox, None),
        ("mixup x * lam + flip(x) * (1 - lam), eager (4 launches)",
         lambda: mixup(batch).evaluate(),
         lambda: stacked * lam_t + stacked.flip(2) * (1.0 - lam_t), None),
        ("mixup x * lam + flip(x) * (1 - lam), compile (2 launches)",
         lambda: mixup(next(mixed)).evaluate(),
         lambda: stacked * lam_t + stacked.flip(2) * (1.0 - lam_t), None),
        ("cast(clamp(x * 1.5 - 20, 0, 255), u8), eager (4 launches)",
         lambda: to_u8(batch).evaluate(),
         lambda: (stacked * 1.5 - 20).clamp_(0, 255).round_().to(torch.uint8), 2 * u8),
        ("cast(clamp(x * 1.5 - 20, 0, 255), u8), compile (1 launch)",
         lambda: to_u8(next(adjusted)).evaluate(),
         lambda: (stacked * 1.5 - 20).clamp_(0, 255).round_().to(torch.uint8), 2 * u8),
        ("crop_mirror_normalize 224 f32 CHW", lambda: ndd.crop_mirror_normalize(
            small, crop=[224, 224], mean=MEAN, std=STD).evaluate(),
         lambda: ((small_t[:, 16:240, 16:240].permute(0, 3, 1, 2).float() - mean) / std
                  ).contiguous(), n * 224 * 224 * c * 5),
    ]
    return rows


def kernel_table(opts: argparse.Namespace) -> None:
    import torch

    import ndd_triton as ndd

    try:
        from torchvision.transforms.v2 import functional as tv
    except Exception:
        tv = None
    h, w = (480, 640) if not opts.dry else (12, 17)
    gen = torch.Generator().manual_seed(0)
    host = torch.randint(0, 256, (opts.kbatch, h, w, 3), dtype=torch.uint8, generator=gen)
    batch = ndd.as_batch([host[i].numpy() for i in range(opts.kbatch)], layout="HWC").gpu()
    stacked = host.cuda() if torch.cuda.is_available() else host
    bandwidth = copy_bandwidth() if not opts.dry else 1.0
    print(f"\n## Kernels: batch of {opts.kbatch} {h}x{w}x3 uint8 HWC on the GPU; copy bandwidth "
          f"{bandwidth / 1e9:.0f} GB/s (read + write)")
    print(f"{'op':<36} {'ndd dev µs':>10} {'torch dev':>10} {'roof µs':>8} {'dev/roof':>8} "
          f"{'ndd/torch':>9} {'ndd wall':>9} {'torch wall':>10}")
    for name, ndd_fn, torch_fn, moved in cases(batch, stacked, tv):
        if opts.only and not any(key in name for key in opts.only.split(",")):
            continue
        try:
            if opts.dry:
                ndd_fn()
                if torch_fn is not None:
                    torch_fn()
                print(f"{name:<36} ran")
                continue
            dev = device_us(ndd_fn)
            ref = device_us(torch_fn) if torch_fn is not None else float("nan")
            roof = 1e6 * moved / bandwidth if moved else float("nan")
            wall = wall_us(ndd_fn)
            twall = wall_us(torch_fn) if torch_fn is not None else float("nan")
            print(f"{name:<36} {dev:10.1f} {ref:10.1f} {roof:8.1f} {dev / roof:8.2f} "
                  f"{dev / ref:9.2f} {wall:9.1f} {twall:10.1f}")
        except Exception as e:
            print(f"{name:<36} FAILED {type(e).__name__}: {str(e)[:200]}")
        finally:
            _Epoch.close_started()
        sys.stdout.flush()


def host_table(opts: argparse.Namespace) -> None:
    """µs of host work per tiny call (4 x 8x8x3), sync_cpu and eager, vs a torch.flip loop."""
    import torch

    import ndd_triton as ndd

    samples = [np.random.default_rng(i).integers(0, 255, (8, 8, 3), dtype=np.uint8)
               for i in range(4)]  # fmt: skip
    tiny = ndd.as_batch(samples, layout="HWC").gpu()
    tensors = [torch.from_numpy(s).to(tiny.device.torch_device) for s in samples]
    reps = 20 if opts.dry else 2000
    calls = {
        "flip": lambda: ndd.flip(tiny, horizontal=1),
        "cast": lambda: ndd.cast(tiny, dtype=ndd.float32),
        "brightness_contrast": lambda: ndd.brightness_contrast(tiny, brightness=1.1),
        "crop_mirror_normalize": lambda: ndd.crop_mirror_normalize(tiny, crop=[4, 4]),
        "resize": lambda: ndd.resize(tiny, size=[4, 4]),
        "rotate": lambda: ndd.rotate(tiny, angle=10.0),
        "gaussian_blur": lambda: ndd.gaussian_blur(tiny, sigma=1.0),
    }
    print(f"\n## Host time of a tiny GPU call (4 x 8x8x3 uint8), µs per call, {reps} calls")
    print(f"{'call':<28} {'sync_cpu':>9} {'eager':>9}")

    def per_call(fn: Callable[[], Any]) -> float:
        for _ in range(20):
            fn().evaluate()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(reps):
            fn().evaluate()
        elapsed = time.perf_counter() - start
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        return 1e6 * elapsed / reps

    for name, fn in calls.items():
        try:
            with ndd.EvalMode.sync_cpu:
                sync = per_call(fn)
            eager = per_call(fn)
            print(f"{name:<28} {sync:9.1f} {eager:9.1f}")
        except Exception as e:
            print(f"{name:<28} FAILED {type(e).__name__}: {str(e)[:200]}")

    def torch_loop() -> Any:
        out = [t.flip(1) for t in tensors]

        class Done:
            def evaluate(self) -> None:
                return None

        del out
        return Done()

    print(f"{'torch.flip x 4 (loop)':<28} {per_call(torch_loop):9.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kbatch", type=int, default=32)
    parser.add_argument("--only", default="", help="comma-separated name fragments of kernel rows")
    parser.add_argument("--dry", action="store_true", help="run each row once, tiny, no timing")
    parser.add_argument("--skip-host", action="store_true")
    opts = parser.parse_args()
    import torch

    if not torch.cuda.is_available() and not opts.dry:
        sys.exit("perf/bench_gpu_kernels.py: no CUDA device; use --dry on the emulated gpu")
    import ndd_triton as ndd

    name = torch.cuda.get_device_name() if torch.cuda.is_available() else "emulated gpu"
    print(f"# {name}, torch {torch.__version__}, ndd_triton {ndd.__version__}")
    kernel_table(opts)
    if not opts.skip_host:
        host_table(opts)


if __name__ == "__main__":
    main()
