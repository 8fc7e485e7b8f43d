"""Log-mel features on the CPU, samples/s: ndd_triton vs DALI 2.4 dynamic mode vs torchaudio
(or librosa where torchaudio is not installed), same signals, same run.

Run: `python perf/bench_audio.py [--clips 64] [--batch 16] [--epochs 20] [--threads 2]
[--dali-python /work/dali_venv/bin/python] [--ta-python /work/tv_venv/bin/python]
[--per-op] [--rounds R] [--baseline-src DIR]`.

`--rounds R` (R > 1) runs ndd_triton in its own interpreter too, and every library once per
round, interleaved, R rounds (torchaudio or librosa too, from `--ta-python`): on a shared
machine whose speed drifts by 1.5x within minutes (measured here), only ratios taken in the
same round compare; the table then adds each library's per-round ratio (median, min-max).
`--baseline-src DIR` adds another ndd_triton checkout (e.g. the main branch) to every round.

Data: `--clips` synthetic 16 kHz utterances of 1-4 s (tones, chirps and noise between silences,
seed 0), decoded already (float32 arrays in memory: decoding is libsndfile in every library).
Each library runs the recipe of examples/asr.py minus the reader: preemphasis (0.97) ->
spectrogram (nfft 512, window 400, hop 160, centred, reflect padding, power 2) -> 64 Slaney mel
bands -> decibels (cutoff -80 dB) -> per-band normalisation over time. ndd_triton and DALI write
it op by op in dynamic mode on ragged batches of `--batch` (DALI's rows end with `.evaluate()`:
its venv has no torch); torchaudio runs `functional.preemphasis`, `MelSpectrogram` (same
window/hop/bands, `norm="slaney"`, `mel_scale="slaney"`), `AmplitudeToDB(top_db=80)` and
the normalisation per sample (its usual place: a Dataset's `__getitem__`), with
`torch.set_num_threads(--threads)`; librosa the same recipe with `effects.preemphasis`,
`feature.melspectrogram` and `power_to_db(ref=np.max, top_db=80)`. DALI and torchaudio
run in their own interpreters (subprocesses), one after the other. Median samples/s over
`--epochs` epochs after one warm-up. The default was 5 epochs (~0.15 s of work per library and
round) until 2026-11-27; the per-round ratios of such short windows spread 0.6-1.6x on this
machine, so it is 20 now (the same code's medians moved by 10% between runs of 5).

`--per-op` adds a second table: each op of the recipe alone (its input evaluated before), ms
per batch for ndd_triton and DALI: median wall time and median process CPU time (all threads),
over `--epochs` passes over the batches.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

DALI_CODE = r"""
import json, sys, time, statistics
import numpy as np
import nvidia.dali.experimental.dynamic as ndd
cfg = json.loads(sys.argv[1])
clips = list(np.load(cfg["data"]).values())
def epoch():
    for i in range(0, len(clips), cfg["batch"]):
        audio = ndd.as_batch(clips[i:i + cfg["batch"]])
        audio = ndd.preemphasis_filter(audio, preemph_coeff=0.97)
        spec = ndd.spectrogram(audio, nfft=512, window_length=400, window_step=160)
        mel = ndd.mel_filter_bank(spec, nfilter=64, sample_rate=16000.0)
        db = ndd.to_decibels(mel, cutoff_db=-80.0)
        ndd.normalize(db, axes=[1], epsilon=1e-5).evaluate()
epoch()
rates = []
for _ in range(cfg["epochs"]):
    t = time.perf_counter(); epoch(); rates.append(len(clips) / (time.perf_counter() - t))
print(json.dumps({"rate": statistics.median(rates)}))
"""

PER_OP_CODE = r"""
import json, os, sys, time, statistics
import numpy as np
cfg = json.loads(sys.argv[1])
if cfg.get("dali"):
    import nvidia.dali.experimental.dynamic as ndd
else:
    import ndd_triton as ndd
clips = list(np.load(cfg["data"]).values())
OPS = [("preemphasis_filter", lambda a: ndd.preemphasis_filter(a, preemph_coeff=0.97)),
       ("spectrogram", lambda a: ndd.spectrogram(a, nfft=512, window_length=400, window_step=160)),
       ("mel_filter_bank", lambda a: ndd.mel_filter_bank(a, nfilter=64, sample_rate=16000.0)),
       ("to_decibels", lambda a: ndd.to_decibels(a, cutoff_db=-80.0)),
       ("normalize", lambda a: ndd.normalize(a, axes=[1], epsilon=1e-5))]
def ev(b):
    b.evaluate()
    return b
inputs = [ev(ndd.as_batch(clips[i:i + cfg["batch"]])) for i in range(0, len(clips), cfg["batch"])]
result = {}
for name, op in OPS:
    outs = [ev(op(x)) for x in inputs]
    walls, cpus = [], []
    for _ in range(cfg["epochs"]):
        for x in inputs:
            t, c = time.perf_counter(), time.process_time()
            ev(op(x))
            walls.append(time.perf_counter() - t)
            cpus.append(time.process_time() - c)
    result[name] = (statistics.median(walls) * 1e3, statistics.median(cpus) * 1e3)
    inputs = outs
print(json.dumps(result))
"""

TA_CODE = r"""
import json, sys, time, statistics
import numpy as np
cfg = json.loads(sys.argv[1])
clips = list(np.load(cfg["data"]).values())
try:
    import torch, torchaudio
    torch.set_num_threads(cfg["threads"])
    mel = torchaudio.transforms.MelSpectrogram(sample_rate=16000, n_fft=512, win_length=400,
        hop_length=160, n_mels=64, center=True, pad_mode="reflect", power=2.0, norm="slaney",
        mel_scale="slaney")
    to_db = torchaudio.transforms.AmplitudeToDB(stype="power", top_db=80.0)
    clips = [torch.from_numpy(c) for c in clips]
    name = f"torchaudio {torchaudio.__version__} (torch {torch.__version__})"
    def features(x):
        x = torchaudio.functional.preemphasis(x, 0.97)
        db = to_db(mel(x))
        return (db - db.mean(dim=1, keepdim=True)) / (db.std(dim=1, keepdim=True) + 1e-5)
except ImportError:  # librosa: NumPy/SciPy, single sample at a time
    import librosa
    name = f"librosa {librosa.__version__}"
    def features(x):
        x = librosa.effects.preemphasis(x, coef=0.97)
        s = librosa.feature.melspectrogram(y=x, sr=16000, n_fft=512, hop_length=160,
            win_length=400, n_mels=64, center=True, pad_mode="reflect", power=2.0)
        db = librosa.power_to_db(s, ref=np.max, top_db=80.0)
        return (db - db.mean(axis=1, keepdims=True)) / (db.std(axis=1, keepdims=True) + 1e-5)
def epoch():
    for i in range(0, len(clips), cfg["batch"]):
        batch = [features(x) for x in clips[i:i + cfg["batch"]]]
epoch()
rates = []
for _ in range(cfg["epochs"]):
    t = time.perf_counter(); epoch(); rates.append(len(clips) / (time.perf_counter() - t))
print(json.dumps({"rate": statistics.median(rates), "name": name}))
"""


def make_clips(count: int, seed: int = 0) -> list[np.ndarray]:
    """Synthetic utterances: 1-4 s, a few sounds separated by silence."""
    rng = np.random.default_rng(seed)
    clips = []
    for _ in range(count):
        n = int(rng.uniform(1.0, 4.0) * 16000)
        x = np.zeros(n, np.float32)
        for _ in range(rng.integers(2, 5)):
            length = int(rng.uniform(0.1, 0.4) * 16000)
            start = int(rng.integers(0, max(n - length, 1)))
            t = np.arange(length) / 16000
            kind = rng.integers(3)
            f0 = rng.uniform(150, 2000)
            sound = (np.sin(2 * np.pi * f0 * t) if kind == 0 else
                     np.sin(2 * np.pi * (f0 * t + 800 * t**2)) if kind == 1 else
                     rng.standard_normal(length) * 0.5)  # fmt: skip
            x[start : start + length] += 0.3 * sound[: n - start].astype(np.float32)
        clips.append(x)
    return clips


def run_ndd(clips: list[np.ndarray], batch: int, epochs: int) -> float:
    import ndd_triton as ndd

    def epoch() -> None:
        for i in range(0, len(clips), batch):
            audio = ndd.as_batch(clips[i : i + batch])
            audio = ndd.preemphasis_filter(audio, preemph_coeff=0.97)
            spec = ndd.spectrogram(audio, nfft=512, window_length=400, window_step=160)
            mel = ndd.mel_filter_bank(spec, nfilter=64, sample_rate=16000.0)
            db = ndd.to_decibels(mel, cutoff_db=-80.0)
            ndd.normalize(db, axes=[1], epsilon=1e-5).evaluate()

    epoch()
    rates = []
    for _ in range(epochs):
        start = time.perf_counter()
        epoch()
        rates.append(len(clips) / (time.perf_counter() - start))
    return statistics.median(rates)


NDD_CODE = DALI_CODE.replace("import nvidia.dali.experimental.dynamic as ndd",
                             "import ndd_triton as ndd")


def run_ndd_src(src: str, cfg: dict) -> dict | None:
    """The recipe of `run_ndd` in a fresh interpreter, importing ndd_triton from `src`."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (src, os.environ.get("PYTHONPATH")) if p)}  # fmt: skip
    return run_other(sys.executable, NDD_CODE, cfg, env)


def interleaved(rounds: int, libs: dict[str, Any]) -> dict[str, list[float]]:
    """samples/s of every library, once per round, in the same order each round."""
    rates: dict[str, list[float]] = {name: [] for name in libs}
    for r in range(rounds):
        for name, run in libs.items():
            out = run()
            rates[name].append(out["rate"] if out else float("nan"))
        print(f"# round {r + 1}/{rounds}: " + ", ".join(f"{k} {v[-1]:.0f}"
                                                      for k, v in rates.items()),
              file=sys.stderr, flush=True)  # fmt: skip
    return rates


def run_other(python: str, code: str, cfg: dict, env: dict | None = None) -> dict | None:
    if not os.path.exists(python):
        return None
    res = subprocess.run([python, "-c", code, json.dumps(cfg)], capture_output=True, text=True,
                         timeout=1800, env=env, cwd=os.path.dirname(cfg["data"]))  # fmt: skip
    if res.returncode:
        print(f"{python} failed:\n{res.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(res.stdout.strip().splitlines()[-1])


def print_per_op(results: list[tuple[str, dict | None]], batch: int) -> None:
    """Per-op table: ms per batch, median wall / median process CPU, each library."""
    found = [(name, r) for name, r in results if r]
    if not found:
        return
    print(f"\nper op, ms per batch of {batch} (median wall / median process CPU)")
    print("| op | " + " | ".join(name for name, _ in found) + " |")
    print("|---|" + "---:|" * len(found))
    for op in found[0][1]:
        cells = [f"{r[op][0]:.2f} / {r[op][1]:.2f}" if op in r else "-" for _, r in found]
        print(f"| {op} | " + " | ".join(cells) + " |")


def print_rounds(rates: dict[str, list[float]], args: argparse.Namespace, seconds: float) -> None:
    """Table of interleaved rounds: median samples/s and per-round ratios to ndd_triton."""
    ours = rates["ndd_triton"]
    print(f"log-mel recipe, {args.clips} clips ({seconds:.0f} s of 16 kHz audio), batch "
          f"{args.batch}, {args.threads} threads, {os.cpu_count()} CPUs, {args.rounds} "
          f"interleaved rounds (one interpreter per library and round), load "
          f"{os.getloadavg()[0]:.1f}")  # fmt: skip
    print("| library | samples/s (median) | ndd_triton / this, per round: median (min-max) | "
          "rounds ndd_triton is ahead |\n|---|---:|---:|---:|")
    for name, values in rates.items():
        ratios = [a / b for a, b in zip(ours, values, strict=True)]
        ahead = sum(r > 1.0 for r in ratios)
        print(f"| {name} | {statistics.median(values):.1f} | {statistics.median(ratios):.2f}x "
              f"({min(ratios):.2f}-{max(ratios):.2f}) | "
              f"{'-' if name == 'ndd_triton' else f'{ahead} of {len(ratios)}'} |")


def main() -> None:
    """Print one side-by-side table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=64)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--dali-python", default="/work/dali_venv/bin/python")
    parser.add_argument("--ta-python", default="/work/tv_venv/bin/python")
    parser.add_argument("--per-op", action="store_true", help="also time each op alone")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--baseline-src", default=None, metavar="DIR")
    args = parser.parse_args()
    clips = make_clips(args.clips)
    seconds = sum(len(c) for c in clips) / 16000
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "clips.npz")
        np.savez(data, *clips)
        cfg = {"data": data, "batch": args.batch, "epochs": args.epochs, "threads": args.threads}
        if args.rounds > 1 or args.baseline_src:
            import ndd_triton

            here = os.path.dirname(os.path.dirname(os.path.abspath(ndd_triton.__file__)))
            libs: dict[str, Any] = {"ndd_triton": lambda: run_ndd_src(here, cfg)}
            if args.baseline_src:
                src = os.path.abspath(args.baseline_src)
                libs[f"ndd_triton at {args.baseline_src}"] = lambda: run_ndd_src(src, cfg)
            if os.path.exists(args.dali_python):
                libs["DALI 2.4 dynamic"] = lambda: run_other(args.dali_python, DALI_CODE, cfg)
            if os.path.exists(args.ta_python):
                libs["torchaudio (or librosa)"] = lambda: run_other(args.ta_python, TA_CODE, cfg)
            rates = interleaved(max(args.rounds, 1), libs)
            print_rounds(rates, args, seconds)
            return
        rows = [("ndd_triton", run_ndd(clips, args.batch, args.epochs))]
        dali = run_other(args.dali_python, DALI_CODE, cfg)
        if dali:
            rows.append(("DALI 2.4 dynamic", dali["rate"]))
        ta = run_other(args.ta_python, TA_CODE, cfg)
        if ta:
            rows.append((ta["name"], ta["rate"]))
        per_op = None
        if args.per_op:
            import ndd_triton  # the same package in the subprocess

            where = os.path.dirname(os.path.dirname(os.path.abspath(ndd_triton.__file__)))
            path = os.pathsep.join(p for p in (where, os.environ.get("PYTHONPATH")) if p)
            env = {**os.environ, "PYTHONPATH": path}
            per_op = [("ndd_triton", run_other(sys.executable, PER_OP_CODE, cfg, env))]
            per_op.append(("DALI 2.4", run_other(args.dali_python, PER_OP_CODE,
                                                 {**cfg, "dali": True})))  # fmt: skip
    print(
        f"log-mel recipe, {args.clips} clips ({seconds:.0f} s of 16 kHz audio), batch "
        f"{args.batch}, {args.threads} threads, {os.cpu_count()} CPUs"
    )
    print("| library | samples/s | audio s per s | vs ndd_triton |\n|---|---:|---:|---:|")
    for name, rate in rows:
        print(
            f"| {name} | {rate:.1f} | {rate * seconds / args.clips:.0f} | "
            f"{rate / rows[0][1]:.2f}x |"
        )
    if per_op:
        print_per_op(per_op, args.batch)


if __name__ == "__main__":
    main()
