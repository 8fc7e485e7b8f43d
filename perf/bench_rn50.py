"""ResNet-50 training data path, images/s: ndd_triton vs plain libraries, DataLoader and DALI.

Run: `python perf/bench_rn50.py [--count 256] [--batch 64] [--threads 2] [--epochs 5]
[--dali-python /work/dali-venv/bin/python]`. Prints one table.

Generates an ImageNet-like folder in a temporary directory (`--count` JPEGs cut from the
packaged photos, sizes around 500x375 in a few aspect ratios, quality 90, 4:2:0, 4 class
sub-folders) and measures, in one run and on the same files, images/s (median of `--epochs`
epochs after one warm-up epoch) and CPU ms per image (all threads of the process) for:

* decode only: full-size `ndd.decoders.image` on batches of encoded files vs a Pillow
  `Image.open(...).convert("RGB")` loop on a `--threads` pool (and DALI's decoder); and the
  decoder fed by `readers.File` (both libraries), the way a training loop decodes;
* (a) ndd dynamic mode, the DALI ResNet-50 recipe written op by op: `readers.File(
  random_shuffle=True)` -> `decoders.image` -> `random_resized_crop(size=224)` ->
  `flip(horizontal=coin_flip)` -> `crop_mirror_normalize(mean, std)` -> `.torch()`;
* (b) ndd best recipe: `decoders.image_random_crop` -> `resize(size=224)` ->
  `crop_mirror_normalize(mirror=coin_flip)` -> `.torch()`; with `--ablate-rows`, also (b')
  the same with the decoder's rows-only decode of early-ending windows switched off;
* (c) plain libraries on a `--threads` pool: Pillow decode + crop-resize (`resize(box=)`),
  flip, torch normalise into a preallocated `[N, 3, 224, 224]` float batch;
* (d) torch DataLoader(num_workers=`--threads`) + torchvision.transforms.v2, skipped with a
  note when torchvision does not import (it is not a dependency); the same DataLoader with
  the plain-library transform of (c) is measured instead;
* (e) DALI dynamic mode, rows (a) and (b) and decode only, when `nvidia.dali` imports here or
  in the interpreter given by `--dali-python` (run in a subprocess on the same folder; it
  needs only DALI and NumPy, so DALI's rows end with `.evaluate()` instead of `.torch()`).

On a shared machine wall-clock rates depend on the other load; CPU ms/image (all threads of
this process, or of DALI's subprocess; not of DataLoader's worker processes) says how much work
each image costs whatever the load. `--rounds` repeats all rows interleaved and reports the
medians, so a load change hits every row alike. The header records the machine and load.
"""

from __future__ import annotations

import argparse
import glob
import io
import json
import os
import platform
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]
# (W, H) of the generated files: ImageNet's common landscape, portrait and wider shapes.
SIZES = [(500, 375), (500, 333), (375, 500), (500, 400), (450, 338), (500, 281), (400, 300),
         (333, 500), (640, 427), (500, 500)]  # fmt: skip
CLASSES = 4


# ---- data -------------------------------------------------------------------------------------
def make_folder(root: str, count: int) -> list[str]:
    """`count` quality-90 JPEGs in `root/class_<k>/` cut from the packaged sample photos."""
    from _photos import photo_window, sample_photos

    sources = sample_photos()
    paths = []
    for i in range(count):
        image = photo_window(sources, i, SIZES[(i * 7) % len(SIZES)])
        folder = os.path.join(root, f"class_{i % CLASSES}")
        os.makedirs(folder, exist_ok=True)
        paths.append(os.path.join(folder, f"img_{i:04d}.jpg"))
        image.save(paths[-1], "JPEG", quality=90)
    return sorted(paths)


def timed(epoch: Callable[[], int], epochs: int) -> tuple[float, float]:
    """Median images/s over `epochs` timed epochs after one warm-up, and median CPU ms/image."""
    epoch()
    rates, cpu = [], []
    for _ in range(epochs):
        start, start_cpu = time.perf_counter(), time.process_time()
        n = epoch()
        rates.append(n / (time.perf_counter() - start))
        cpu.append(1e3 * (time.process_time() - start_cpu) / n)
    return statistics.median(rates), statistics.median(cpu)


# ---- ndd_triton (and DALI: the same code with the other module) ------------------------------
def dynamic_rows(ndd: Any, root: str, paths: list[str], opts: argparse.Namespace,
                 finish: Callable[[Any], Any]) -> dict[str, tuple[float, float]]:  # fmt: skip
    """Decode-only, (a) and (b) rows for a DALI-dynamic-mode-compatible module `ndd`."""
    ndd.set_num_threads(opts.threads)
    batch = opts.batch
    rng = ndd.random.RNG(seed=42)
    results = {}

    encoded = [np.fromfile(p, dtype=np.uint8) for p in paths]
    batches = [ndd.as_batch(encoded[i:i + batch]) for i in range(0, len(encoded), batch)]

    def decode() -> int:
        for b in batches:
            ndd.decoders.image(b, device="cpu").evaluate()
        return len(encoded)

    results["decode"] = timed(decode, opts.epochs)

    def read_decode(reader: Any) -> int:
        n = 0
        for jpegs, labels in reader.next_epoch(batch_size=batch):
            ndd.decoders.image(jpegs, device="cpu").evaluate()
            finish(labels)
            n += jpegs.batch_size
        return n

    reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=1)
    results["read_decode"] = timed(lambda: read_decode(reader), opts.epochs)

    def rn50(reader: Any) -> int:
        n = 0
        for jpegs, labels in reader.next_epoch(batch_size=batch):
            images = ndd.decoders.image(jpegs, device="cpu")
            images = ndd.random_resized_crop(images, size=224, rng=rng)
            flips = ndd.random.coin_flip(batch_size=jpegs.batch_size, rng=rng)
            images = ndd.flip(images, horizontal=flips)
            out = ndd.crop_mirror_normalize(images, mean=MEAN, std=STD)
            finish(out)
            finish(labels)
            n += jpegs.batch_size
        return n

    reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=1)
    results["rn50"] = timed(lambda: rn50(reader), opts.epochs)

    def best(reader: Any) -> int:
        n = 0
        for jpegs, labels in reader.next_epoch(batch_size=batch):
            images = ndd.decoders.image_random_crop(jpegs, device="cpu", rng=rng)
            images = ndd.resize(images, size=[224, 224])
            mirror = ndd.random.coin_flip(batch_size=jpegs.batch_size, rng=rng)
            out = ndd.crop_mirror_normalize(images, mean=MEAN, std=STD, mirror=mirror)
            finish(out)
            finish(labels)
            n += jpegs.batch_size
        return n

    reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=1)
    results["best"] = timed(lambda: best(reader), opts.epochs)
    if getattr(opts, "ablate_rows", False) and ndd.__name__ == "ndd_triton":
        from ndd_triton.decoders import _pillow  # (b) again without the rows-only decode

        shorten = _pillow.decode_top_rows
        _pillow.decode_top_rows = lambda data, rows: None
        try:
            reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=1)
            results["best_full"] = timed(lambda: best(reader), opts.epochs)
        finally:
            _pillow.decode_top_rows = shorten
    return results


# ---- plain libraries ------------------------------------------------------------------------
def rrc_window(w: int, h: int, rs: np.random.Generator) -> tuple[int, int, int, int]:
    """torchvision's RandomResizedCrop window (area 0.08-1, ratio 3/4-4/3, 10 attempts)."""
    area = w * h
    for _ in range(10):
        target = area * rs.uniform(0.08, 1.0)
        ratio = float(np.exp(rs.uniform(np.log(3 / 4), np.log(4 / 3))))
        cw, ch = round((target * ratio) ** 0.5), round((target / ratio) ** 0.5)
        if 0 < cw <= w and 0 < ch <= h:
            x0, y0 = int(rs.integers(0, w - cw + 1)), int(rs.integers(0, h - ch + 1))
            return x0, y0, x0 + cw, y0 + ch
    return 0, 0, w, h


def plain_sample(path: str, seed: int) -> Any:
    """One sample the plain way: Pillow decode, crop-resize, flip, torch normalise (CHW f32)."""
    import torch
    from PIL import Image

    rs = np.random.default_rng(seed)
    with open(path, "rb") as f:
        image = Image.open(io.BytesIO(f.read())).convert("RGB")
    image = image.resize((224, 224), Image.BILINEAR, box=rrc_window(*image.size, rs))
    if rs.integers(0, 2):
        image = image.transpose(Image.FLIP_LEFT_RIGHT)
    x = torch.from_numpy(np.asarray(image)).permute(2, 0, 1).float()
    return x.sub_(_MEAN_T).div_(_STD_T)


_MEAN_T: Any = None
_STD_T: Any = None


def _init_plain() -> None:
    import torch

    global _MEAN_T, _STD_T
    _MEAN_T = torch.tensor(MEAN).view(3, 1, 1)
    _STD_T = torch.tensor(STD).view(3, 1, 1)


class _PlainDataset:
    def __init__(self, paths: list[str]) -> None:
        self.paths = paths
        self.epoch = 0

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, i: int) -> Any:
        if _MEAN_T is None:
            _init_plain()
        return plain_sample(self.paths[i], i * 7919 + self.epoch), i % CLASSES


def plain_rows(paths: list[str], opts: argparse.Namespace) -> dict[str, tuple[float, float] | str]:
    import torch

    torch.set_num_threads(1)  # the pool provides the parallelism
    _init_plain()
    results: dict[str, tuple[float, float] | str] = {}
    order = np.random.default_rng(0)

    def decode_one(path: str) -> np.ndarray:
        from PIL import Image

        with open(path, "rb") as f:
            return np.asarray(Image.open(io.BytesIO(f.read())).convert("RGB"))

    encoded = [np.fromfile(p, dtype=np.uint8) for p in paths]

    def decode_bytes(data: np.ndarray) -> np.ndarray:
        from PIL import Image

        return np.asarray(Image.open(io.BytesIO(data.tobytes())).convert("RGB"))

    with ThreadPoolExecutor(opts.threads) as pool:
        results["decode"] = timed(lambda: len(list(pool.map(decode_bytes, encoded))),
                                  opts.epochs)  # fmt: skip

        def epoch() -> int:
            perm = order.permutation(len(paths))
            for i in range(0, len(perm), opts.batch):
                chosen = perm[i:i + opts.batch]
                out = torch.empty(len(chosen), 3, 224, 224)

                def one(k: int, out: Any = out, chosen: Any = chosen, i: int = i) -> None:
                    out[k] = plain_sample(paths[chosen[k]], int(chosen[k]) * 7 + i)

                list(pool.map(one, range(len(chosen))))
            return len(perm)

        results["plain"] = timed(epoch, opts.epochs)
    del decode_one

    try:
        import torchvision  # noqa: F401
        from torchvision.transforms import v2
    except ImportError:
        results["torchvision"] = "skipped: torchvision does not import"
    else:
        results["torchvision"] = timed(_torchvision_epoch(paths, opts, v2), opts.epochs)

    dataset = _PlainDataset(paths)
    loader = torch.utils.data.DataLoader(dataset, batch_size=opts.batch, shuffle=True,
                                         num_workers=opts.threads, persistent_workers=True,
                                         prefetch_factor=2)  # fmt: skip

    def dl_epoch() -> int:
        n = 0
        for images, _ in loader:
            n += len(images)
        return n

    rate, _ = timed(dl_epoch, opts.epochs)
    results["dataloader_plain"] = (rate, float("nan"))  # the work is in worker processes
    return results


class _TvDataset:
    def __init__(self, paths: list[str], transform: Any) -> None:
        self.paths, self.transform = paths, transform

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, i: int) -> Any:
        from PIL import Image

        return self.transform(Image.open(self.paths[i]).convert("RGB")), i % CLASSES


def _torchvision_epoch(paths: list[str], opts: argparse.Namespace, v2: Any) -> Callable[[], int]:
    import torch

    transform = v2.Compose([v2.PILToTensor(), v2.RandomResizedCrop(224, antialias=True),
                            v2.RandomHorizontalFlip(), v2.ToDtype(torch.float32),
                            v2.Normalize(MEAN, STD)])  # fmt: skip
    loader = torch.utils.data.DataLoader(_TvDataset(paths, transform), batch_size=opts.batch,
                                         shuffle=True, num_workers=opts.threads,
                                         persistent_workers=True)  # fmt: skip

    def epoch() -> int:
        return sum(len(images) for images, _ in loader)

    return epoch


# ---- DALI (in this interpreter or a subprocess) ----------------------------------------------
def dali_worker(root: str, opts: argparse.Namespace) -> dict[str, Any]:
    """DALI rows, in an interpreter that has nvidia.dali (and NumPy)."""
    import nvidia.dali as dali
    import nvidia.dali.experimental.dynamic as dali_ndd

    paths = sorted(glob.glob(os.path.join(root, "*", "*.jpg")))
    rows = dynamic_rows(dali_ndd, root, paths, opts, lambda b: b.evaluate())
    return {"version": dali.__version__, "rows": rows}


def dali_rows(root: str, opts: argparse.Namespace) -> dict[str, Any] | str:
    if opts.dali_python:
        cmd = [opts.dali_python, os.path.abspath(__file__), "--dali-worker", root,
               "--batch", str(opts.batch), "--threads", str(opts.threads),
               "--epochs", str(opts.epochs)]  # fmt: skip
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode:
            return f"skipped: {opts.dali_python} failed: {done.stderr.strip()[-300:]}"
        return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]
    try:
        return dali_worker(root, opts)
    except ImportError:
        return "skipped: nvidia.dali does not import (see --dali-python)"


# ---- main -----------------------------------------------------------------------------------
def _rows(results: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    ndd_r, plain, dali = results["ndd"], results["plain"], results["dali"]
    t = results["threads"]
    dali_r = dali["rows"] if isinstance(dali, dict) else {}
    dali_note = dali if isinstance(dali, str) else None
    yield "decode only (full-size JPEG/s)", None
    yield f"  ndd decoders.image ({t} threads)", ndd_r["decode"]
    yield f"  Pillow open+convert ({t}-thread pool)", plain["decode"]
    yield f"  DALI decoders.image ({t} threads)", dali_r.get("decode", dali_note)
    yield "  ndd readers.File -> decoders.image", ndd_r["read_decode"]
    yield "  DALI readers.File -> decoders.image", dali_r.get("read_decode", dali_note)
    yield "RN50 training pipeline (224x224 f32 CHW, img/s)", None
    yield "  (a) ndd dynamic: image->rrc->flip->cmn", ndd_r["rn50"]
    yield "  (b) ndd best: image_random_crop->resize->cmn", ndd_r["best"]
    if "best_full" in ndd_r:
        yield "  (b') = (b) without the rows-only window decode", ndd_r["best_full"]
    yield f"  (c) Pillow + torch, {t}-thread pool", plain["plain"]
    yield f"  (d) DataLoader({t} workers) + tv.v2", plain["torchvision"]
    yield f"  (d') DataLoader({t} workers) + (c)'s transform", plain["dataloader_plain"]
    yield "  (e) DALI dynamic: image->rrc->flip->cmn", dali_r.get("rn50", dali_note)
    yield "  (e) DALI best: image_random_crop->resize->cmn", dali_r.get("best", dali_note)


def _median_rounds(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """Per row, the median rate and CPU time over rounds (notes from the first round)."""

    def merge(values: list[Any]) -> Any:
        if isinstance(values[0], dict):
            return {k: merge([v[k] for v in values]) for k in values[0]}
        if isinstance(values[0], (tuple, list)) and len(values[0]) == 2 and \
                all(isinstance(x, (int, float)) for x in values[0]):  # fmt: skip
            return (statistics.median(v[0] for v in values),
                    statistics.median(v[1] for v in values))
        return values[0]

    return merge(rounds)  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=256)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3,
                        help="repeat all rows this many times, interleaved; report the medians")
    parser.add_argument("--dali-python", default=None,
                        help="interpreter with nvidia.dali for the DALI rows (subprocess)")
    parser.add_argument("--only", default="ndd,plain,dali",
                        help="comma-separated subset of ndd, plain, dali")
    parser.add_argument("--ablate-rows", action="store_true",
                        help="also run (b) with full decode + crop instead of the rows-only "
                             "decode of windows that end early")
    parser.add_argument("--dali-worker", metavar="ROOT", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.dali_worker:
        print(json.dumps(dali_worker(opts.dali_worker, opts)))
        return

    import PIL
    import torch

    import ndd_triton as ndd

    only = set(opts.only.split(","))
    load = os.getloadavg()
    skipped = "skipped (--only)"
    rounds: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as root:
        paths = make_folder(root, opts.count)
        for _ in range(opts.rounds):  # rounds interleave the rows: load drifts hit all alike
            results: dict[str, Any] = {"threads": opts.threads}
            results["ndd"] = dynamic_rows(ndd, root, paths, opts, lambda b: b.torch()) \
                if "ndd" in only else dict.fromkeys(("decode", "read_decode", "rn50", "best"), skipped)
            results["dali"] = dali_rows(root, opts) if "dali" in only else skipped
            results["plain"] = plain_rows(paths, opts) if "plain" in only else \
                dict.fromkeys(("decode", "plain", "torchvision", "dataloader_plain"), skipped)
            rounds.append(results)
    results = _median_rounds(rounds)
    load_after = os.getloadavg()
    dali = results["dali"]
    print(f"# {opts.count} JPEGs (~500x375, q90, {CLASSES} classes), batch {opts.batch}, "
          f"{opts.threads} threads; median over {opts.rounds} interleaved rounds of the "
          f"median of {opts.epochs} epochs after a warm-up")
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, load avg "
          f"{load[0]:.1f} -> {load_after[0]:.1f}; Python {platform.python_version()}, "
          f"torch {torch.__version__}, Pillow {PIL.__version__}, ndd_triton {ndd.__version__}"
          + (f", DALI {dali['version']}" if isinstance(dali, dict) else ""))
    print(f"{'':<50} {'img/s':>9} {'CPU ms/img':>11}")
    for name, value in _rows(results):
        if value is None:
            print(name)
        elif isinstance(value, str):
            print(f"{name:<50} {value}")
        else:
            cpu = f"{value[1]:11.2f}" if value[1] == value[1] else f"{'(workers)':>11}"
            print(f"{name:<50} {value[0]:9.1f} {cpu}")


if __name__ == "__main__":
    main()
