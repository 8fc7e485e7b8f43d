"""Soak / stress run: N threads x M seconds of a small augmentation pipeline, with resource
figures per epoch (issue #22).

Each thread runs its own loop (its own reader or synthetic batch, eager mode, its own results);
an "epoch" is `--epoch-s` seconds of wall time. Per epoch it prints: batches done (all threads),
resident set size (RSS, MiB, from /proc/self/status), Python threads, open file descriptors,
and how many results were checked against the first epoch's (the same input and seed must give
the same bytes: no wrong result under concurrency). Some calls are deliberately bad (NaN
arguments, oversize requests) and must raise cleanly without poisoning later calls. The last line
says whether RSS grew, and by how much, between the second epoch and the last.

    .venv/bin/python perf/soak.py --threads 4 --seconds 60 [--epoch-s 5] [--device cpu]
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import ndd_triton as ndd


def rss_mib() -> float:
    """Resident set size of this process, MiB (Linux /proc)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def make_batch(seed: int, n: int = 8) -> ndd.Batch:
    rng = np.random.default_rng(seed)
    shapes = [(int(rng.integers(48, 96)), int(rng.integers(48, 96)), 3) for _ in range(n)]
    return ndd.as_batch([rng.integers(0, 255, s, dtype=np.uint8) for s in shapes], layout="HWC")


def pipeline(images: ndd.Batch, device: str, seed: int) -> np.ndarray:
    """A typical augmentation chain; returns a small digest of the output."""
    rng = ndd.random.RNG(seed=seed)
    x = images.gpu() if device == "gpu" else images
    x = ndd.random_resized_crop(x, size=[32, 32], rng=rng)
    x = ndd.flip(x, horizontal=ndd.random.coin_flip(batch_size=x.batch_size, rng=rng))
    x = ndd.hsv(x, saturation=1.2, hue=5.0)
    x = ndd.gaussian_blur(x, sigma=0.8)
    x = ndd.crop_mirror_normalize(x, crop=[28, 28], mean=[120.0, 115.0, 100.0],
                                  std=[60.0, 60.0, 60.0], dtype=ndd.float32)  # fmt: skip
    out = np.stack([np.asarray(s) for s in x.cpu()])
    flat = out.reshape(len(out), -1)
    return np.array([flat.sum(dtype=np.float64), flat[:, 1::97].sum(dtype=np.float64)])


BAD_CALLS = [
    lambda b: ndd.resize(b, size=[float("nan"), 8]),
    lambda b: ndd.gaussian_blur(b, sigma=1e6),
    lambda b: ndd.resize(b, size=[1e6, 1e6]),
    lambda b: ndd.crop(b, crop_h=10, crop_w=-10),
]


class Worker(threading.Thread):
    """One thread's loop; counts batches, mismatches and unexpected errors."""

    def __init__(self, index: int, device: str, stop: threading.Event) -> None:
        super().__init__(daemon=True, name=f"soak-{index}")
        self.index, self.device, self.stop = index, device, stop
        self.batches = self.checked = self.wrong = self.bad_ok = 0
        self.errors: list[str] = []
        self.expected: dict[int, np.ndarray] = {}

    def run(self) -> None:
        inputs = [make_batch(1000 * self.index + k) for k in range(4)]
        k = 0
        while not self.stop.is_set():
            slot = k % len(inputs)
            try:
                digest = pipeline(inputs[slot], self.device, seed=slot)
                if slot in self.expected:
                    self.checked += 1
                    if not np.array_equal(digest, self.expected[slot]):
                        self.wrong += 1
                else:
                    self.expected[slot] = digest
                if k % 5 == 4:  # a bad call must raise cleanly, naming the op
                    try:
                        with ndd.EvalMode.sync_cpu:
                            BAD_CALLS[(k // 5) % len(BAD_CALLS)](inputs[slot]).evaluate()
                    except (ValueError, RuntimeError) as e:
                        self.bad_ok += ":" in str(e)
            except Exception as e:
                self.errors.append(f"{type(e).__name__}: {e}"[:200])
            self.batches += 1
            k += 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--epoch-s", type=float, default=5.0)
    ap.add_argument("--device", default="cpu", choices=("cpu", "gpu"))
    args = ap.parse_args()
    stop = threading.Event()
    workers = [Worker(i, args.device, stop) for i in range(args.threads)]
    start = time.perf_counter()
    print(f"soak: {args.threads} threads x {args.seconds:.0f} s on {args.device}, "
          f"ndd_threads={ndd.get_num_threads()}, pid {os.getpid()}")  # fmt: skip
    print(f"{'epoch':>5} {'t(s)':>6} {'batches':>8} {'RSS MiB':>8} {'threads':>7} {'fds':>4} "
          f"{'checked':>7} {'wrong':>5} {'bad ok':>6} {'errors':>6}")  # fmt: skip
    for w in workers:
        w.start()
    rss: list[float] = []
    epoch = 0
    while time.perf_counter() - start < args.seconds:
        time.sleep(min(args.epoch_s, max(0.0, args.seconds - (time.perf_counter() - start))))
        epoch += 1
        rss.append(rss_mib())
        print(f"{epoch:>5} {time.perf_counter() - start:>6.1f} "
              f"{sum(w.batches for w in workers):>8} {rss[-1]:>8.1f} "
              f"{threading.active_count():>7} {open_fds():>4} "
              f"{sum(w.checked for w in workers):>7} {sum(w.wrong for w in workers):>5} "
              f"{sum(w.bad_ok for w in workers):>6} {sum(len(w.errors) for w in workers):>6}",
              flush=True)  # fmt: skip
    stop.set()
    for w in workers:
        w.join(timeout=30)
    errors = [e for w in workers for e in w.errors]
    for e in errors[:5]:
        print("error:", e)
    base = rss[1] if len(rss) > 2 else rss[0]
    print(f"RSS from epoch 2 to the last: {base:.1f} -> {rss[-1]:.1f} MiB "
          f"({rss[-1] - base:+.1f}); wrong results: {sum(w.wrong for w in workers)}; "
          f"unexpected errors: {len(errors)}")  # fmt: skip


if __name__ == "__main__":
    main()
