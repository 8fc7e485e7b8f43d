"""Device time of the pointwise / colour GPU kernels against their memory roofline and torch.

Run on a machine with an NVIDIA GPU: `python perf/bench_pointwise_gpu.py [--batch 32] [--small]`.
For every op: the summed device time of its kernels per call (torch.profiler, table copies
listed apart), the bytes it must move (inputs read + output written), GB/s, the ratio to a
peak bandwidth (`--peak`, GB/s) and, where there is one, torch's equivalent on the stacked
batch. Batches: `--batch` uniform 480x640x3 images, and a ragged batch of odd sizes.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

import numpy as np


def device_us(fn: Callable[[], Any], reps: int) -> tuple[float, float]:
    """(kernel µs, memcpy µs) per call, from torch.profiler, after warm-ups."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    kern = copy = 0.0
    for ev in prof.events():
        if ev.device_type.name != "CUDA":
            continue
        t = ev.device_time if hasattr(ev, "device_time") else ev.cuda_time
        if "memcpy" in ev.name.lower() or "memset" in ev.name.lower():
            copy += t
        else:
            kern += t
    return kern / reps, copy / reps


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--peak", type=float, default=3350.0)
    p.add_argument("--small", action="store_true", help="tiny shapes (emulated device check)")
    p.add_argument("--only", default="")
    p.add_argument("--json", default="")
    opts = p.parse_args()
    import torch

    import ndd_triton as ndd

    gpu = torch.cuda.is_available()
    h, w = (24, 40) if opts.small else (480, 640)
    n = opts.batch
    rng = np.random.default_rng(0)
    shapes_u = [(h, w, 3)] * n
    shapes_r = [(h - (7 * i) % (h // 3), w - (13 * i) % (w // 3), 3) for i in range(n)]
    u8 = [rng.integers(0, 256, s, dtype=np.uint8) for s in shapes_u]
    u8r = [rng.integers(0, 256, s, dtype=np.uint8) for s in shapes_r]
    f32 = [a.astype(np.float32) / 255 for a in u8]
    B = lambda xs, layout="HWC": ndd.as_batch(xs, layout=layout).gpu()
    bu8, bu8r, bf32 = B(u8), B(u8r), B(f32)
    bf32b = B([a[::-1].copy() for a in f32])
    chan = B([np.array([0.5, 1.0, 2.0], np.float32)] * n, layout=None)
    lbl = B([rng.integers(0, 10, (h * w // 16,), dtype=np.int32) for _ in range(n)], None)
    dev = "cuda" if gpu else "cpu"
    tu8 = torch.from_numpy(np.stack(u8)).to(dev)
    tf32 = torch.from_numpy(np.stack(f32)).to(dev)
    tf32b = tf32.flip(1).contiguous()
    tch = torch.tensor([0.5, 1.0, 2.0], device=dev)
    mean = torch.tensor([0.4, 0.5, 0.6], device=tch.device)
    std = torch.tensor([0.2, 0.3, 0.25], device=tch.device)
    nb_u8 = sum(a.nbytes for a in u8)
    nb_u8r = sum(a.nbytes for a in u8r)
    nb_f = 4 * nb_u8
    keys = list(range(256))
    vals = [float((k * 7) % 256) for k in keys]
    T = ndd.types
    # name -> (ndd call, bytes moved, torch call or None)
    cases: dict[str, tuple[Callable[[], Any], int, Callable[[], Any] | None]] = {
        "cast u8->f32": (lambda: ndd.cast(bu8, dtype=T.FLOAT), nb_u8 + nb_f, lambda: tu8.float()),
        "cast f32->u8": (lambda: ndd.cast(bf32, dtype=T.UINT8), nb_f + nb_u8,
                         lambda: tf32.to(torch.uint8)),
        "cast u8->f32 ragged": (lambda: ndd.cast(bu8r, dtype=T.FLOAT), 5 * nb_u8r, None),
        "add f32+f32": (lambda: bf32 + bf32b, 3 * nb_f, lambda: tf32 + tf32b),
        "add u8+u8": (lambda: bu8 + bu8, 3 * nb_u8, lambda: tu8 + tu8),
        "mul f32*2.0": (lambda: bf32 * 2.0, 2 * nb_f, lambda: tf32 * 2.0),
        "add u8+1 ragged": (lambda: bu8r + 1, 2 * nb_u8r, None),
        "mul f32*chan(3,) bcast": (lambda: bf32 * chan, 2 * nb_f, lambda: tf32 * tch),
        "sqrt f32": (lambda: ndd.math.sqrt(bf32), 2 * nb_f, lambda: torch.sqrt(tf32)),
        "clamp f32": (lambda: ndd.math.clamp(bf32, 0.2, 0.8), 2 * nb_f,
                      lambda: torch.clamp(tf32, 0.2, 0.8)),
        "brightness_contrast u8": (
            lambda: ndd.brightness_contrast(bu8, brightness=1.2, contrast=0.8), 2 * nb_u8,
            lambda: (tu8.float() * 1.2).round_().clamp_(0, 255).to(torch.uint8)),
        "brightness_contrast u8 ragged": (
            lambda: ndd.brightness_contrast(bu8r, brightness=1.2, contrast=0.8), 2 * nb_u8r, None),
        "hsv u8": (lambda: ndd.hsv(bu8, hue=20.0, saturation=0.7, value=1.1), 2 * nb_u8, None),
        "color_twist u8": (lambda: ndd.color_twist(bu8, hue=30.0, saturation=0.8,
                                                   brightness=1.1, contrast=0.9), 2 * nb_u8, None),
        "csc RGB->GRAY u8": (lambda: ndd.color_space_conversion(
            bu8, image_type=T.RGB, output_type=T.GRAY), nb_u8 + nb_u8 // 3, None),
        "csc RGB->YCbCr u8": (lambda: ndd.color_space_conversion(
            bu8, image_type=T.RGB, output_type=T.YCbCr), 2 * nb_u8, None),
        "normalize f32 given mean/std": (
            lambda: ndd.normalize(bf32, mean=0.5, stddev=0.25), 2 * nb_f,
            lambda: (tf32 - 0.5) / 0.25),
        "normalize u8->f32 per-channel stats": (
            lambda: ndd.normalize(bu8, axes=[0, 1]), nb_u8 + nb_f,
            lambda: (tu8.float() - mean) / std),
        "grid_mask u8": (lambda: ndd.grid_mask(bu8, tile=40, ratio=0.4, angle=0.3), 2 * nb_u8,
                         None),
        "lookup_table u8->u8": (lambda: ndd.lookup_table(bu8, keys=keys, values=vals,
                                                         dtype=T.UINT8), 2 * nb_u8,
                                lambda: torch.take(tu8, tu8.long())),
        "one_hot i32->f32 (10)": (lambda: ndd.one_hot(lbl, num_classes=10),
                                  n * (h * w // 16) * 44, None),
        "full_like f32": (lambda: ndd.zeros_like(bf32), nb_f, lambda: torch.zeros_like(tf32)),
        "noise.gaussian u8": (lambda: ndd.noise.gaussian(bu8, stddev=10.0), 2 * nb_u8, None),
        "noise.salt_and_pepper u8": (lambda: ndd.noise.salt_and_pepper(bu8), 2 * nb_u8, None),
        "random.uniform f32": (lambda: ndd.random.uniform(bf32, range=[0.0, 1.0]), nb_f,
                               lambda: torch.rand_like(tf32)),
        "random.normal f32": (lambda: ndd.random.normal(bf32), nb_f,
                              lambda: torch.randn_like(tf32)),
        "random.coin_flip u8": (lambda: ndd.random.coin_flip(bu8, dtype=T.UINT8), nb_u8, None),
    }
    only = [s.strip() for s in opts.only.split(",") if s.strip()]
    rows = {}
    if gpu:
        print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, batch {n}x{h}x{w}x3")
    print(f"{'op':40s} {'kernel us':>10s} {'copy us':>8s} {'GB/s':>7s} {'x roofline':>10s}"
          f" {'torch us':>9s} {'x torch':>7s}")
    for name, (fn, nbytes, tfn) in cases.items():
        if only and not any(o in name for o in only):
            continue
        try:
            call = lambda fn=fn: fn().evaluate()
            if not gpu:
                call()
                print(f"{name:40s} ran (no CUDA: not timed)")
                continue
            kern, copy = device_us(call, opts.reps)
            tus = device_us(tfn, opts.reps)[0] if tfn is not None else float("nan")
            gbs = nbytes / kern / 1e3
            roof = nbytes / (opts.peak * 1e3)
            rows[name] = {"us": kern, "copy_us": copy, "GBs": gbs, "x_roof": kern / roof,
                          "torch_us": tus}
            print(f"{name:40s} {kern:10.1f} {copy:8.1f} {gbs:7.0f} {kern / roof:10.2f}"
                  f" {tus:9.1f} {kern / tus:7.2f}")
        except Exception as e:  # one broken row does not lose the others
            print(f"{name:40s} FAILED {type(e).__name__}: {str(e)[:200]}")
        sys.stdout.flush()
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
