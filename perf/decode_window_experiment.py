"""How much the crop decoders' rows-only decode saves, next to DALI's window decode.

Run: `python perf/decode_window_experiment.py [--count 256] [--rounds 7]
[--dali-python /work/dali-venv/bin/python]`.

DALI's `image_random_crop` decodes only the window (libjpeg-turbo's `jpeg_crop_scanline` and
`jpeg_skip_scanlines`). Neither call is reachable from Python here: simplejpeg (TurboJPEG
`tjDecompress2`) has no cropping; Pillow's bundled libjpeg exports them but only through the
libjpeg C API (a struct layout and a longjmp error handler, not callable from ctypes safely);
PyTurboJPEG and jpeg4py need a system libturbojpeg; Pillow's `draft` changes pixels.

The one exact trick within reach (shipped in `ndd_triton/decoders/_jpeg_rows.py`) decodes
fewer *rows*: rewrite the frame height in the SOF segment to the window's last row rounded up
to an MCU row plus one more MCU row (so 4:2:0 fancy upsampling sees the same chroma
neighbours), cut the scan data at a guessed byte fraction (else libjpeg spends as long
skipping the unused entropy data byte by byte as decoding it) followed by EOI, and decode
with simplejpeg in strict mode; the only accepted warning is "extraneous bytes before marker
0xd9" (raised after the last row is written), anything else falls back to a full decode.
Progressive and restart-interval files are not tried.

This script checks that trick bit-exactly against full decode + crop on RRC windows of the
`bench_rn50.py` images and times, per image (process CPU, best of `--rounds` interleaved):
full decode + crop, the rows-only trick, and (with `--dali-python`) DALI's full vs window
decode on the same files.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import numpy as np
import simplejpeg

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_rn50

from ndd_triton.decoders._jpeg_rows import decode_top_rows


def rows_decode(data: np.ndarray, last_row: int, stats: dict[str, int]) -> np.ndarray:
    """RGB rows [0, last_row) (at least) of a JPEG, by the shipped rows-only decode
    (`ndd_triton/decoders/_jpeg_rows.py`), or a full decode where it declines."""
    rows = decode_top_rows(data, last_row)
    stats["rows" if rows is not None else "full"] += 1
    if rows is None:
        return simplejpeg.decode_jpeg(data, colorspace="RGB")  # type: ignore[no-any-return]
    return rows


def best_ms(fns: dict[str, Callable[[], int]], rounds: int) -> dict[str, float]:
    """Best-of-`rounds` process CPU ms per image of each fn, interleaved."""
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(rounds):
        for name, fn in fns.items():
            start = time.process_time()
            n = fn()
            best[name] = min(best[name], 1e3 * (time.process_time() - start) / n)
    return best


_DALI = """
import glob, json, sys, time, numpy as np
import nvidia.dali.experimental.dynamic as ndd
ndd.set_num_threads(1)
enc = [np.fromfile(p, np.uint8) for p in sorted(glob.glob(sys.argv[1] + "/*/*.jpg"))]
batches = [ndd.as_batch(enc[i:i + 64]) for i in range(0, len(enc), 64)]
rng = ndd.random.RNG(seed=3)
fns = {"full": lambda: [ndd.decoders.image(b).evaluate() for b in batches],
       "window": lambda: [ndd.decoders.image_random_crop(b, rng=rng).evaluate() for b in batches]}
best = dict.fromkeys(fns, 1e9)
for _ in range(int(sys.argv[2])):
    for k, f in fns.items():
        t = time.process_time(); f()
        best[k] = min(best[k], 1e3 * (time.process_time() - t) / len(enc))
print(json.dumps(best))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--dali-python", default=None)
    opts = parser.parse_args()
    rs = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as root:
        paths = bench_rn50.make_folder(root, opts.count)
        files = [np.fromfile(p, np.uint8) for p in paths]
        shapes = [simplejpeg.decode_jpeg_header(d)[:2] for d in files]
        windows = [bench_rn50.rrc_window(w, h, rs) for h, w in shapes]
        stats = dict.fromkeys(("rows", "full"), 0)
        exact = 0
        for data, (x0, y0, x1, y1) in zip(files, windows, strict=True):
            full = simplejpeg.decode_jpeg(data, colorspace="RGB")
            got = rows_decode(data, y1, stats)
            exact += bool(np.array_equal(got[y0:y1, x0:x1], full[y0:y1, x0:x1]))

        def full_crop() -> int:
            for data, (x0, y0, x1, y1) in zip(files, windows, strict=True):
                np.ascontiguousarray(simplejpeg.decode_jpeg(data, colorspace="RGB")[y0:y1, x0:x1])
            return len(files)

        def rows_crop() -> int:
            for data, (x0, y0, x1, y1) in zip(files, windows, strict=True):
                np.ascontiguousarray(rows_decode(data, y1, stats)[y0:y1, x0:x1])
            return len(files)

        ms = best_ms({"full decode + crop": full_crop, "rows-only decode + crop": rows_crop},
                     opts.rounds)  # fmt: skip
        dali = None
        if opts.dali_python:
            out = subprocess.run([opts.dali_python, "-c", _DALI, root, str(opts.rounds)],
                                 capture_output=True, text=True, check=False)  # fmt: skip
            dali = json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 \
                else out.stderr.strip().splitlines()[-1]  # fmt: skip
    mean_last = np.mean([w[3] / h for w, (h, _) in zip(windows, shapes, strict=True)])
    print(f"# {opts.count} bench_rn50 JPEGs, RRC windows (mean last row {mean_last:.2f} of H); "
          f"load avg {os.getloadavg()[0]:.1f}; one thread, best of {opts.rounds}")
    print(f"bit-exact windows: {exact}/{len(files)}; rows-only decodes {stats['rows']}, full "
          f"decodes {stats['full']} (window reaches the last MCU row, or not applicable)")
    for name, value in ms.items():
        print(f"{name:<40} {value:6.3f} CPU ms/img")
    if isinstance(dali, dict):
        print(f"{'DALI decoders.image (full)':<40} {dali['full']:6.3f} CPU ms/img")
        print(f"{'DALI decoders.image_random_crop':<40} {dali['window']:6.3f} CPU ms/img")
    elif dali is not None:
        print(f"DALI: {dali}")


if __name__ == "__main__":
    main()
