"""Window decoding on the CPU: region decode (nvImageCodec) vs rows-only vs the whole image.

Run: `python perf/bench_window_decode.py [--copies 8] [--rounds 8] [--reps 3] [--threads 2]`.
Prints one table.

The bundled photos (minus the progressive one; `--copies` of each) in one batch, decoded by
`decoders.image_random_crop` with its defaults (area 0.08-1, aspect 3/4-4/3; the photos of at
least 300 pixels a side) and by `decoders.image_slice` with a random window per image (each side
0.3-1 of the image, anchored uniformly; every photo). Each is timed with the region decode on
(`decoders/_roi_decode.py`), off (rows down to the window's end, `decoders/_jpeg_rows.py`), and
beside `decoders.image` (+ `slice` for the slice windows). The paths alternate in one process,
`--rounds` rounds of `--reps` calls each; the table gives the medians of the rounds' wall and
process CPU ms per batch. Without nvImageCodec installed the region column repeats rows-only.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import ndd_triton as ndd
from ndd_triton.decoders import _roi_decode


def _photos(copies: int, min_side: int = 0) -> list[np.ndarray]:
    folder = Path(ndd.__file__).parent / "data" / "images"
    files = [p for p in sorted(folder.glob("*.jpg")) if "progressive" not in p.name]
    datas = [np.fromfile(p, np.uint8) for p in files]
    if min_side:
        from PIL import Image

        datas = [d for d, p in zip(datas, files, strict=True)
                 if min(Image.open(p).size) >= min_side]  # fmt: skip
    return datas * copies


def _timed(fn: Callable[[], None], reps: int) -> tuple[float, float]:
    fn()
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - wall) / reps * 1e3, (time.process_time() - cpu) / reps * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    opts = parser.parse_args()
    ndd.set_num_threads(opts.threads)
    codec = _roi_decode._load()

    crops = ndd.as_batch(_photos(opts.copies, min_side=300))
    datas = _photos(opts.copies)
    gen = np.random.default_rng(0)
    shape = gen.uniform(0.3, 1.0, (len(datas), 2)).astype(np.float32)
    start = (gen.uniform(0, 1, (len(datas), 2)) * (1 - shape)).astype(np.float32)
    slices = ndd.as_batch(datas)
    start_b, shape_b = ndd.as_batch(list(start)), ndd.as_batch(list(shape))

    cases: dict[str, dict[str, Callable[[], None]]] = {
        f"image_random_crop, {crops.batch_size} photos": {
            "window": lambda: ndd.decoders.image_random_crop(
                crops, rng=ndd.random.RNG(seed=1)).evaluate(),
            "whole": lambda: ndd.decoders.image(crops).evaluate(),
        },
        f"image_slice (sides 0.3-1), {slices.batch_size} photos": {
            "window": lambda: ndd.decoders.image_slice(slices, start_b, shape_b).evaluate(),
            "whole": lambda: ndd.slice(ndd.decoders.image(slices), start_b,
                                       shape_b).evaluate(),  # fmt: skip
        },
    }
    columns = ("region decode", "rows only", "decoders.image (+ slice)")
    results: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for _ in range(opts.rounds):
        for case, fns in cases.items():
            for column in columns:
                _roi_decode._codec[:] = [codec if column == "region decode" else None]
                fn = fns["whole" if column.startswith("decoders") else "window"]
                results.setdefault((case, column), []).append(_timed(fn, opts.reps))
    _roi_decode._codec[:] = [codec]
    print(f"# window decoding, {opts.threads} threads, {opts.rounds} alternating rounds of "
          f"{opts.reps} calls; nvImageCodec {'installed' if codec else 'NOT installed'}; "
          f"wall / CPU ms per batch (medians)")
    print("| batch | " + " | ".join(columns) + " |")
    print("|---|" + "---:|" * len(columns))
    for case in cases:
        cells = []
        for column in columns:
            runs = results[(case, column)]
            cells.append(f"{statistics.median(r[0] for r in runs):.1f} / "
                         f"{statistics.median(r[1] for r in runs):.1f}")
        print(f"| {case} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
