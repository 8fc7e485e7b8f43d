"""CPU ms/image of the colour ops and gaussian_blur: ndd_triton, OpenCV and DALI in one run.

32 random 480x640x3 uint8 images (480x640x1 for gray sources), one thread everywhere
(`EvalContext(num_threads=1)` / `set_num_threads(1)`, `torch.set_num_threads(1)`,
`cv2.setNumThreads(1)`), best of `--repeat` after a warm-up. Columns per op:
* ndd: ndd_triton's CPU kernels as they are (uint8 fast paths: kernels/cpu/_color_u8.py,
  `blur_planes_u8` in kernels/cpu/gaussian_blur.py);
* ndd exact: the same call with the fast paths off (the float32 path, the kernels before them);
* OpenCV: the closest OpenCV calls (`*` = fixed-point uint8 arithmetic; `f32` = float32
  arithmetic rounded like DALI), each returning a new image kept to the end of the batch, as
  ndd and DALI do (writing 32 distinct outputs costs more than reusing one cached buffer);
* DALI: DALI 2.4's CPU op (`nvidia.dali.experimental.dynamic`), run on the same images and
  arguments in a subprocess with `--dali-python` (black box; skipped without it).
Every ndd output is also compared with ndd exact (max |difference| and the share of bytes
that differ): the fast paths promise max 1.
Usage: python perf/bench_color.py [--batch 32] [--repeat 5] [--dali-python PATH] [--all-ops]
       [--only "brightness,csc RGB->GRAY"]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

TWIST = {"hue": 30.0, "saturation": 0.8, "brightness": 1.1, "contrast": 0.9}


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


def op_calls(nd: Any, types: Any, rgb: Any, gray: Any, all_ops: bool,
             only: list[str]) -> dict[str, Callable]:  # fmt: skip
    """name -> call returning an unevaluated batch, for ndd_triton or DALI dynamic mode."""
    conv = nd.color_space_conversion
    calls = {
        "color_twist": lambda: nd.color_twist(rgb, **TWIST),
        "hsv": lambda: nd.hsv(rgb, hue=20.0, saturation=0.7, value=1.1),
        "hue": lambda: nd.hue(rgb, hue=45.0),
        "saturation": lambda: nd.saturation(rgb, saturation=0.6),
        "brightness": lambda: nd.brightness(rgb, brightness=1.2, brightness_shift=0.05),
        "contrast": lambda: nd.contrast(rgb, contrast=1.3),
        "brightness_contrast": lambda: nd.brightness_contrast(rgb, brightness=1.2, contrast=0.8),
        "csc RGB->YCbCr": lambda: conv(rgb, image_type=types.RGB, output_type=types.YCbCr),
        "csc YCbCr->RGB": lambda: conv(rgb, image_type=types.YCbCr, output_type=types.RGB),
        "csc RGB->GRAY": lambda: conv(rgb, image_type=types.RGB, output_type=types.GRAY),
        "csc RGB->BGR": lambda: conv(rgb, image_type=types.RGB, output_type=types.BGR),
        "csc GRAY->RGB": lambda: conv(gray, image_type=types.GRAY, output_type=types.RGB),
        "csc GRAY->YCbCr": lambda: conv(gray, image_type=types.GRAY, output_type=types.YCbCr),
        "csc YCbCr->GRAY": lambda: conv(rgb, image_type=types.YCbCr, output_type=types.GRAY),
        "gaussian_blur sigma 1": lambda: nd.gaussian_blur(rgb, sigma=1.0),
    }  # fmt: skip
    if all_ops:
        calls["laplacian"] = lambda: nd.laplacian(rgb)
        calls["filter 3x3"] = lambda: nd.filter(rgb, nd.as_tensor(np.full((3, 3), 1 / 9,
                                                                          np.float32)))
    if only:
        calls = {name: call for name, call in calls.items() if name in only}
    return calls


def opencv_rows(images: list[np.ndarray], grays: list[np.ndarray], opts: argparse.Namespace
                ) -> dict[str, list[tuple[str, tuple[float, float]]]]:  # fmt: skip
    """OpenCV's closest calls per op (1 thread)."""
    import cv2

    from ndd_triton.ops._color_matrix import hsv_matrices

    cv2.setNumThreads(1)
    n, r = len(images), opts.repeat
    m = (hsv_matrices(np.array([30.0]), np.array([0.8]), np.ones(1))[0] * 0.99).astype(np.float32)
    m34 = np.concatenate([m, np.full((3, 1), 1.1 * 0.1 * 128, np.float32)], axis=1)
    m34_half = m34 + np.array([0, 0, 0, 0.5], np.float32)  # + 0.5: truncation rounds half up
    scratch = np.empty(images[0].shape, np.float32)

    def f32_twist(im: np.ndarray) -> np.ndarray:  # DALI's float32 arithmetic, rounded half away
        np.copyto(scratch, im)
        values = cv2.transform(scratch, m34_half, dst=scratch)
        np.clip(values, 0.5, 255.5, out=values)
        return values.astype(np.uint8)

    lut = np.clip(np.arange(256) * 1.2 + 0.5, 0, 255).astype(np.uint8)

    def each(fn: Callable[[np.ndarray], Any], source: list[np.ndarray] = images
             ) -> tuple[float, float]:  # fmt: skip
        """Time `fn` over the batch; its outputs stay alive to the end, as a batch's do."""
        return best_ms(lambda: [fn(im) for im in source], n, r)

    colour = [("transform u8*", each(lambda im: cv2.transform(im, m34))),
              ("transform f32", each(f32_twist))]
    scale = [("convertScaleAbs", each(lambda im: cv2.convertScaleAbs(im, alpha=1.2,
                                                                     beta=12.75))),
             ("LUT", each(lambda im: cv2.LUT(im, lut)))]  # fmt: skip
    cvt = {code: each(lambda im, code=code: cv2.cvtColor(im, code))
           for code in (cv2.COLOR_RGB2YCrCb, cv2.COLOR_YCrCb2RGB, cv2.COLOR_RGB2GRAY,
                        cv2.COLOR_RGB2BGR)}  # fmt: skip
    gray_rgb = each(lambda im: cv2.cvtColor(im, cv2.COLOR_GRAY2RGB), grays)
    k = cv2.getGaussianKernel(7, 1.0).astype(np.float32)
    rows = {
        "color_twist": colour, "hsv": colour, "hue": colour, "saturation": colour,
        "brightness": scale, "contrast": scale, "brightness_contrast": scale,
        "csc RGB->YCbCr": [("cvtColor RGB2YCrCb*", cvt[cv2.COLOR_RGB2YCrCb])],
        "csc YCbCr->RGB": [("cvtColor YCrCb2RGB*", cvt[cv2.COLOR_YCrCb2RGB])],
        "csc RGB->GRAY": [("cvtColor RGB2GRAY*", cvt[cv2.COLOR_RGB2GRAY])],
        "csc RGB->BGR": [("cvtColor RGB2BGR", cvt[cv2.COLOR_RGB2BGR])],
        "csc GRAY->RGB": [("cvtColor GRAY2RGB", gray_rgb)],
        "csc GRAY->YCbCr": [("LUT+merge", each(lambda im: cv2.merge(
            [cv2.LUT(im, lut), np.full(im.shape, 128, np.uint8), np.full(im.shape, 128, np.uint8)]
        ), [g[..., 0] for g in grays]))],
        "csc YCbCr->GRAY": [("extractChannel+LUT", each(
            lambda im: cv2.LUT(cv2.extractChannel(im, 0), lut)))],
        "gaussian_blur sigma 1": [
            ("GaussianBlur u8*", each(lambda im: cv2.GaussianBlur(
                im, (7, 7), 1.0, borderType=cv2.BORDER_REFLECT_101))),
            ("sepFilter2D f32", each(lambda im: cv2.sepFilter2D(
                im, cv2.CV_32F, k, k, borderType=cv2.BORDER_REFLECT_101)))],
        "laplacian": [("Laplacian ksize 3", each(lambda im: cv2.Laplacian(
            im, -1, ksize=3, borderType=cv2.BORDER_REFLECT_101)))],
        "filter 3x3": [("filter2D", each(lambda im: cv2.filter2D(
            im, -1, np.full((3, 3), 1 / 9, np.float32), borderType=cv2.BORDER_REFLECT_101)))],
    }  # fmt: skip
    return rows


def time_module(nd: Any, types: Any, images: list[np.ndarray], grays: list[np.ndarray],
                opts: argparse.Namespace, outputs: dict[str, list[np.ndarray]] | None = None,
                context: Any = None) -> dict[str, tuple[float, float]]:  # fmt: skip
    """Time every op of `op_calls` on `nd`; keep its outputs in `outputs` when given."""
    rgb = nd.as_batch(images, layout="HWC")
    gray = nd.as_batch(grays, layout="HWC")
    times = {}
    for name, call in op_calls(nd, types, rgb, gray, opts.all_ops, opts.only).items():
        with context() if context else _null():
            times[name] = best_ms(lambda call=call: call().evaluate(), len(images), opts.repeat)
            if outputs is not None:
                result = call().evaluate()
                outputs[name] = [np.asarray(result.select(i)) for i in range(len(images))]
    return times


class _null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def load_images(folder: str) -> tuple[list[np.ndarray], list[np.ndarray]]:
    rgb, gray = np.load(os.path.join(folder, "rgb.npy")), np.load(os.path.join(folder, "gray.npy"))
    return list(rgb), list(gray)


def dali_worker(folder: str, opts: argparse.Namespace) -> dict[str, Any]:
    """DALI's CPU ops on the saved images (run in an interpreter that has nvidia.dali)."""
    import nvidia.dali as dali
    import nvidia.dali.experimental.dynamic as dali_nd
    import nvidia.dali.types as types

    dali_nd.set_num_threads(1)
    images, grays = load_images(folder)
    outputs: dict[str, list[np.ndarray]] = {}
    times = time_module(dali_nd, types, images, grays, opts, outputs)
    np.savez(os.path.join(folder, "dali.npz"),
             **{f"{k}|{i}": v for k, vs in outputs.items() for i, v in enumerate(vs)})  # fmt: skip
    return {"version": dali.__version__, "times": times}


def dali_rows(folder: str, opts: argparse.Namespace) -> dict[str, Any] | str:
    if not opts.dali_python:
        return "no --dali-python"
    cmd = [opts.dali_python, os.path.abspath(__file__), "--dali-worker", folder,
           "--repeat", str(opts.repeat), "--only", ",".join(opts.only)]  # fmt: skip
    cmd += ["--all-ops"] if opts.all_ops else []
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode:
        return f"failed: {done.stderr.strip()[-300:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def diff(a: list[np.ndarray], b: list[np.ndarray]) -> str:
    """max |a - b| and the share of elements that differ, over all samples."""
    d = [np.abs(x.astype(np.int64) - y.astype(np.int64)) for x, y in zip(a, b, strict=True)]
    return f"{max(int(x.max()) for x in d)} ({np.mean([(x != 0).mean() for x in d]):.1%})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dali-python", default=None,
                        help="interpreter with nvidia.dali for the DALI column (subprocess)")
    parser.add_argument("--all-ops", action="store_true", help="also laplacian and filter")
    parser.add_argument("--only", default="", help="comma-separated op names (default: all)")
    parser.add_argument("--dali-worker", metavar="FOLDER", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    opts.only = [name for name in opts.only.split(",") if name]
    if opts.dali_worker:
        print(json.dumps(dali_worker(opts.dali_worker, opts)))
        return
    import cv2
    import torch

    import ndd_triton as ndd
    from ndd_triton.kernels.cpu import _color_u8, gaussian_blur

    torch.set_num_threads(1)
    cv2.setNumThreads(1)  # ndd_triton's kernels set this too (kernels/cpu/_opencv.py)
    rng = np.random.default_rng(0)
    images = [rng.integers(0, 256, (480, 640, 3), dtype=np.uint8) for _ in range(opts.batch)]
    grays = [np.ascontiguousarray(im[..., :1]) for im in images]
    with tempfile.TemporaryDirectory() as folder:
        np.save(os.path.join(folder, "rgb.npy"), np.stack(images))
        np.save(os.path.join(folder, "gray.npy"), np.stack(grays))
        ctx = lambda: ndd.EvalContext(num_threads=1)
        fast_out: dict[str, list[np.ndarray]] = {}
        exact_out: dict[str, list[np.ndarray]] = {}
        fast = time_module(ndd, ndd.types, images, grays, opts, fast_out, ctx)
        min_elements, blur_probe = _color_u8.MIN_ELEMENTS, gaussian_blur.u8_blur_is_float
        _color_u8.MIN_ELEMENTS = 1 << 62  # fast paths off: the exact float32 paths
        gaussian_blur.u8_blur_is_float = lambda: False  # type: ignore[assignment]
        exact = time_module(ndd, ndd.types, images, grays, opts, exact_out, ctx)
        _color_u8.MIN_ELEMENTS, gaussian_blur.u8_blur_is_float = min_elements, blur_probe
        cv_rows = opencv_rows(images, grays, opts)
        dali = dali_rows(folder, opts)
        dali_out = (np.load(os.path.join(folder, "dali.npz")) if isinstance(dali, dict)
                    else None)  # fmt: skip
        dali_times = dali["times"] if isinstance(dali, dict) else {}
        print(f"{platform.machine()}, python {sys.version.split()[0]}, torch {torch.__version__}, "
              f"numpy {np.__version__}, opencv {cv2.__version__}, DALI "
              f"{dali['version'] if isinstance(dali, dict) else dali}; {opts.batch}x480x640 "
              f"uint8, 1 thread, best of {opts.repeat}; load average "
              f"{os.getloadavg()[0]:.1f}; CPU ms/image (wall in brackets)")
        print("| op | ndd | ndd exact | OpenCV (fastest) | DALI | ndd / fastest OpenCV | "
              "ndd / DALI | ndd vs exact: max (share) | ndd vs DALI |")
        print("|---|---|---|---|---|---|---|---|---|")
        for name, (wall, cpu) in fast.items():
            cv_name, (_, cv_cpu) = min(cv_rows[name], key=lambda row: row[1][1])
            d = dali_times.get(name)
            d_cell = f"{d[1]:.2f} ({d[0]:.2f})" if d else "-"
            ratio_d = f"{cpu / d[1]:.2f}x" if d else "-"
            vs_dali = "-"
            if dali_out is not None:
                vs_dali = diff(fast_out[name], [dali_out[f"{name}|{i}"]
                                                for i in range(opts.batch)])  # fmt: skip
            print(f"| {name} | {cpu:.2f} ({wall:.2f}) | {exact[name][1]:.2f} | {cv_name} "
                  f"{cv_cpu:.2f} | {d_cell} | {cpu / cv_cpu:.2f}x | {ratio_d} | "
                  f"{diff(fast_out[name], exact_out[name])} | {vs_dali} |")
        others = [f"{op}: " + ", ".join(f"{n} {c:.2f}" for n, (_, c) in rows)
                  for op, rows in cv_rows.items() if len(rows) > 1 and op in fast]  # fmt: skip
        print("OpenCV rows: " + "; ".join(dict.fromkeys(others)))


if __name__ == "__main__":
    main()
