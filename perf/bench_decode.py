"""JPEG decode throughput: ndd_triton's CPU decoder (thread pool) vs a plain Pillow loop.

Run: `python perf/bench_decode.py [--threads 2] [--count 64] [--batch 64] [--repeat 5]`.
Generates ImageNet-like JPEGs (500x375, quality 90, 4:2:0) from the packaged sample photos in a
temporary directory, then prints images/s for:
  * Pillow, one thread: `Image.open(...).convert("RGB")` + `np.asarray` per file, and the
    same over a `ThreadPoolExecutor` with `--threads` workers;
  * `ndd.decoders.image` on Batches of encoded files (cpu, `--threads` workers), header
    parsing included; plus `ndd.imread` (file reading included);
  * `ndd.peek_image_shape` (header parsing only) with the plain JPEG header parser
    (`decoders/_jpeg_header.py`) and with Pillow's `Image.open`, interleaved;
  * `ndd.decoders.image_random_crop` (RN50 windows, same seed) with the rows-only decode of
    windows that end early (`decoders/_jpeg_rows.py`) and without it (full decode + crop),
    interleaved pass by pass;
  * DALI dynamic mode's CPU decoder on the same batches, when `nvidia.dali` is importable.
Numbers are the median of `--repeat` passes over all files.
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from _photos import photo_window, sample_photos
from PIL import Image

import ndd_triton as ndd

SIZE = (500, 375)  # W x H: the typical ImageNet validation image


def make_jpegs(folder: str, count: int) -> list[str]:
    """`count` 500x375 quality-90 JPEGs cut from the packaged photos (varied content)."""
    sources = sample_photos()
    paths = []
    for i in range(count):
        image = photo_window(sources, i, SIZE)
        paths.append(os.path.join(folder, f"img_{i:03d}.jpg"))
        image.save(paths[-1], "JPEG", quality=90)
    return paths


def rate(fn: Callable[[], None], images: int, repeat: int) -> tuple[float, float]:
    """Median images/s of `repeat` timed calls (after a warm-up call), and CPU ms per image.

    CPU time (all threads of the process) says how much work each image costs, which stays
    meaningful on a shared machine where wall-clock rates depend on the other load.
    """
    fn()
    times, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return images / statistics.median(times), 1e3 * statistics.median(cpu) / images


def rates_interleaved(fns: dict[str, Callable[[], None]], images: int, repeat: int
                      ) -> dict[str, tuple[float, float]]:  # fmt: skip
    """`rate` for several functions, alternating them pass by pass (load drift hits all)."""
    samples: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in fns}
    for fn in fns.values():
        fn()
    for _ in range(repeat):
        for name, fn in fns.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            fn()
            samples[name][0].append(time.perf_counter() - start)
            samples[name][1].append(time.process_time() - start_cpu)
    return {name: (images / statistics.median(t), 1e3 * statistics.median(c) / images)
            for name, (t, c) in samples.items()}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--count", type=int, default=64)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=5)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        paths = make_jpegs(folder, opts.count)
        encoded = [np.fromfile(p, dtype=np.uint8) for p in paths]
        batches = [ndd.as_batch(encoded[i:i + opts.batch])
                   for i in range(0, len(encoded), opts.batch)]  # fmt: skip
        results: dict[str, tuple[float, float]] = {}

        def decode_one(data: np.ndarray) -> np.ndarray:
            return np.asarray(Image.open(io.BytesIO(data.tobytes())).convert("RGB"))

        def pillow_loop() -> None:
            for data in encoded:
                decode_one(data)

        results["Pillow loop (1 thread)"] = rate(pillow_loop, len(paths), opts.repeat)
        with ThreadPoolExecutor(opts.threads) as pool:

            def pillow_pool() -> None:
                list(pool.map(decode_one, encoded))

            results[f"Pillow ThreadPoolExecutor ({opts.threads} threads)"] = rate(
                pillow_pool, len(paths), opts.repeat)
        ndd.set_num_threads(opts.threads)

        def ndd_decode() -> None:
            for batch in batches:
                ndd.decoders.image(batch).evaluate()

        results[f"ndd.decoders.image cpu ({opts.threads} threads)"] = rate(
            ndd_decode, len(paths), opts.repeat)

        def ndd_imread() -> None:
            for i in range(0, len(paths), opts.batch):
                ndd.imread(paths[i:i + opts.batch]).evaluate()

        results[f"ndd.imread cpu ({opts.threads} threads)"] = rate(ndd_imread, len(paths),
                                                                   opts.repeat)  # fmt: skip
        from ndd_triton.decoders import _pillow

        shorten = _pillow.decode_top_rows

        def random_crop(rows_only: bool) -> Callable[[], None]:
            def run() -> None:
                _pillow.decode_top_rows = shorten if rows_only else (lambda data, rows: None)
                rng = ndd.random.RNG(seed=7)  # the same windows in both variants
                try:
                    for batch in batches:
                        ndd.decoders.image_random_crop(batch, rng=rng).evaluate()
                finally:
                    _pillow.decode_top_rows = shorten
            return run

        plain_header = _pillow.read_jpeg_header

        def peek(plain: bool) -> Callable[[], None]:
            def run() -> None:
                _pillow.read_jpeg_header = plain_header if plain else (lambda data, limit: None)
                try:
                    for batch in batches:
                        ndd.peek_image_shape(batch).evaluate()
                finally:
                    _pillow.read_jpeg_header = plain_header
            return run

        results.update(rates_interleaved({
            "ndd peek_image_shape, plain JPEG parser": peek(True),
            "ndd peek_image_shape, Pillow Image.open": peek(False),
            "ndd image_random_crop, rows-only decode": random_crop(True),
            "ndd image_random_crop, full decode + crop": random_crop(False)},
            len(paths), opts.repeat))  # fmt: skip
        try:
            import nvidia.dali.experimental.dynamic as dali_ndd
        except ImportError:
            dali_ndd = None
        if dali_ndd is not None:
            dali_ndd.set_num_threads(opts.threads)
            dali_batches = [dali_ndd.as_batch(encoded[i:i + opts.batch])
                            for i in range(0, len(encoded), opts.batch)]  # fmt: skip

            def dali_decode() -> None:
                for batch in dali_batches:
                    dali_ndd.decoders.image(batch, device="cpu").evaluate()

            results[f"DALI decoders.image cpu ({opts.threads} threads)"] = rate(
                dali_decode, len(paths), opts.repeat)
    print(f"# {len(paths)} JPEGs {SIZE[0]}x{SIZE[1]} q90, batch {opts.batch}; "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python "
          f"{platform.python_version()}, Pillow {Image.__version__}, ndd_triton "
          f"{ndd.__version__}")  # fmt: skip
    base = results["Pillow loop (1 thread)"][0]
    for name, (value, cpu_ms) in results.items():
        print(f"{name:<44} {value:8.1f} images/s  ({value / base:4.2f}x Pillow loop)  "
              f"{cpu_ms:6.3f} CPU ms/image")


if __name__ == "__main__":
    main()
