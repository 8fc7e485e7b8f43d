"""The RN50 epoch through `ndd_triton.pytorch.Loader` vs the plain ndd loop vs DataLoader + tv.v2.

Run: `python perf/bench_loader.py [--count 256] [--batch 64] [--threads 2] [--epochs 3]
[--rounds 3] [--tv-python /work/tv_venv/bin/python]`. Prints one table.

Same generated ImageNet-like folder as `bench_rn50.py`, same recipe (File reader with
random_shuffle -> decoders.image -> random_resized_crop(224) -> flip(coin_flip) ->
crop_mirror_normalize -> torch tensors, labels squeezed to (N,)), measured in one run:

* plain loop: `for jpegs, labels in reader.next_epoch(batch_size=N)` + the ops + `.torch()`;
* Loader: `Loader(reader, fn, batch_size=N, squeeze=[1])` (prefetch 1, the default; 0; 2);
* `--step-ms T`: the consumer sleeps T ms per batch, a training step whose GPU work leaves the
  CPU free (the ndd rows only): what prefetching is for;
* torch DataLoader(num_workers=`--threads`, ImageFolder-style dataset) + torchvision.transforms.v2
  (RandomResizedCrop, RandomHorizontalFlip, ToDtype, Normalize), in a subprocess of the
  interpreter given by `--tv-python` when torchvision does not import here.

The ndd rows use `--threads` pool threads; the DataLoader row the same number of worker
processes. `--rounds` interleaves all rows and reports medians (a load change hits every row).
The loader's overhead is its img/s relative to the plain loop's (the ratio of the medians, and
the median of the per-round ratios) and its CPU ms per image (this process's threads: on a
shared machine the CPU time per image says what the loader costs whatever the other load).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_rn50 import MEAN, STD, make_folder  # noqa: E402


def timed_epochs(epoch: Any, epochs: int) -> tuple[float, float]:
    """Median images/s over `epochs` epochs (after one warm-up epoch) and median CPU ms per
    image (all threads of this process)."""
    epoch()
    rates, cpu = [], []
    for _ in range(epochs):
        start, start_cpu = time.perf_counter(), time.process_time()
        n = epoch()
        rates.append(n / (time.perf_counter() - start))
        cpu.append(1e3 * (time.process_time() - start_cpu) / n)
    return statistics.median(rates), statistics.median(cpu)


def ndd_rows(root: str, opts: argparse.Namespace) -> dict[str, Any]:
    """Epoch callables of the ndd rows (each keeps its own reader across epochs)."""
    import ndd_triton as ndd
    from ndd_triton.pytorch import Loader

    ndd.set_num_threads(opts.threads)

    def augment(jpegs: Any, labels: Any) -> tuple[Any, Any]:
        images = ndd.decoders.image(jpegs, device="cpu")
        images = ndd.random_resized_crop(images, size=224)
        images = ndd.flip(images, horizontal=ndd.random.coin_flip(batch_size=jpegs.batch_size))
        return ndd.crop_mirror_normalize(images, mean=MEAN, std=STD), labels

    plain_reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=1)

    def plain() -> int:
        n = 0
        for jpegs, labels in plain_reader.next_epoch(batch_size=opts.batch):
            images, labels = augment(jpegs, labels)
            x, _ = images.torch(), labels.torch().squeeze(-1)
            n += x.shape[0]
            step()
        return n

    def step() -> None:  # the training step the consumer runs per batch (GPU work: sleeps)
        if opts.step_ms:
            time.sleep(opts.step_ms / 1e3)

    def loader_epoch(prefetch: int) -> Any:
        reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=1)
        loader = Loader(reader, augment, batch_size=opts.batch, squeeze=[1], prefetch=prefetch,
                        seed=1)  # fmt: skip

        def epoch() -> int:
            n = 0
            for x, _ in loader:
                n += x.shape[0]
                step()
            return n

        return epoch

    return {"plain ndd loop (reader.next_epoch + ops + .torch())": plain,
            "ndd_triton.pytorch.Loader (prefetch=1, default)": loader_epoch(1),
            "ndd_triton.pytorch.Loader (prefetch=0)": loader_epoch(0),
            "ndd_triton.pytorch.Loader (prefetch=2)": loader_epoch(2)}  # fmt: skip


_TV_SCRIPT = r"""
import json, os, statistics, sys, time
import torch
from PIL import Image
from torchvision.transforms import v2
root, batch, workers, epochs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
MEAN, STD = json.loads(sys.argv[5]), json.loads(sys.argv[6])
torch.set_num_threads(1)
classes = sorted(os.listdir(root))
items = [(os.path.join(root, c, f), k) for k, c in enumerate(classes)
         for f in sorted(os.listdir(os.path.join(root, c)))]
transform = v2.Compose([v2.PILToTensor(), v2.RandomResizedCrop(224, antialias=True),
                        v2.RandomHorizontalFlip(), v2.ToDtype(torch.float32),
                        v2.Normalize(MEAN, STD)])
class Data(torch.utils.data.Dataset):
    def __len__(self):
        return len(items)
    def __getitem__(self, i):
        path, label = items[i]
        return transform(Image.open(path).convert("RGB")), label
loader = torch.utils.data.DataLoader(Data(), batch_size=batch, shuffle=True, num_workers=workers,
                                     persistent_workers=True)
def epoch():
    return sum(x.shape[0] for x, _ in loader)
epoch()
rates = []
for _ in range(epochs):
    start = time.perf_counter()
    n = epoch()
    rates.append(n / (time.perf_counter() - start))
print(json.dumps({"rate": statistics.median(rates), "torch": torch.__version__,
                  "torchvision": __import__("torchvision").__version__}))
"""


def tv_row(root: str, opts: argparse.Namespace) -> dict[str, Any] | str:
    """The DataLoader + torchvision v2 row, run in `--tv-python` (or this interpreter)."""
    python = sys.executable
    try:
        import torchvision  # noqa: F401
    except ImportError:
        python = opts.tv_python
        if not python or not os.path.exists(python):
            return "skipped: torchvision does not import (give --tv-python)"
    cmd = [python, "-c", _TV_SCRIPT, root, str(opts.batch), str(opts.threads), str(opts.epochs),
           json.dumps(MEAN), json.dumps(STD)]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if done.returncode:
        return f"failed: {done.stderr.strip().splitlines()[-1] if done.stderr else done.returncode}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=256)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tv-python", default="/work/tv_venv/bin/python")
    parser.add_argument("--step-ms", type=float, default=0.0,
                        help="a training step per batch (sleep, as GPU work frees the CPU)")
    opts = parser.parse_args()
    import torch

    import ndd_triton

    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as root:
        make_folder(root, opts.count)
        rows = ndd_rows(root, opts)
        rates: dict[str, list[float]] = {name: [] for name in rows}
        cpus: dict[str, list[float]] = {name: [] for name in rows}
        ratios: dict[str, list[float]] = {name: [] for name in rows}
        tv_rates: list[float] = []
        tv_note: str | None = None
        tv_versions = ""
        for _ in range(opts.rounds):
            for name, epoch in rows.items():
                rate, cpu = timed_epochs(epoch, opts.epochs)
                rates[name].append(rate)
                cpus[name].append(cpu)
                ratios[name].append(rate / rates[next(iter(rows))][-1])
            tv = tv_row(root, opts)
            if isinstance(tv, str):
                tv_note = tv
            else:
                tv_rates.append(tv["rate"])
                tv_versions = (f", DataLoader row: torch {tv['torch']}, "
                               f"torchvision {tv['torchvision']}")
    load1 = os.getloadavg()[0]
    step = f", a {opts.step_ms:g} ms training step per batch (ndd rows)" if opts.step_ms else ""
    print(f"# RN50 epoch: {opts.count} JPEGs (~500x375, q90), batch {opts.batch}{step}, "
          f"{opts.threads} threads / workers; median of {opts.rounds} interleaved rounds of the "
          f"median of {opts.epochs} epochs after a warm-up")
    print(f"# {platform.machine()}, {os.cpu_count()} CPUs, load avg {load0:.1f} -> {load1:.1f}; "
          f"Python {platform.python_version()}, torch {torch.__version__}, ndd_triton "
          f"{ndd_triton.__version__}{tv_versions}")
    base = statistics.median(rates[next(iter(rows))])
    base_cpu = statistics.median(cpus[next(iter(rows))])
    print(f"{'':58s}{'img/s':>8s}  {'vs plain':>8s}  {'per round':>9s}  {'CPU ms/img':>10s}"
          f"  {'vs plain':>8s}")  # fmt: skip
    for name, values in rates.items():
        rate, cpu = statistics.median(values), statistics.median(cpus[name])
        ratio = statistics.median(ratios[name])
        print(f"  {name:56s}{rate:8.1f}  {rate / base:7.3f}x  {ratio:8.3f}x"
              f"  {cpu:10.2f}  {cpu / base_cpu:7.3f}x")  # fmt: skip
    name = f"torch DataLoader({opts.threads} workers) + torchvision v2"
    if tv_rates:
        rate = statistics.median(tv_rates)
        print(f"  {name:56s}{rate:8.1f}  {rate / base:7.3f}x  {'':9s}  {'(workers)':>10s}")
    else:
        print(f"  {name:56s}{tv_note}")


if __name__ == "__main__":
    main()
