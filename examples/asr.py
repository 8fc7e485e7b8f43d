"""ASR training features: NemoAsr (decodes with decoders.audio) -> nonsilent_region + slice
(trim silence) -> preemphasis_filter -> spectrogram -> mel_filter_bank -> to_decibels ->
normalize (per mel band) -> padded torch batch of log-mel features + lengths + transcripts.

Run: `python examples/asr.py [--device cpu|gpu] [--batch 2] [--epochs 1]`. Reads the bundled
synthetic clips (`ndd_triton/data/audio/manifest.json`), so it runs offline; point
`--manifest` at a NeMo manifest for real data. See docs/audio.md.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Iterator

import numpy as np
import torch

import ndd_triton as ndd

MANIFEST = os.path.join(os.path.dirname(ndd.__file__), "data", "audio", "manifest.json")


def log_mel(audio: ndd.Batch, sample_rate: float = 16000.0, nfft: int = 512, window: int = 400,
            step: int = 160, nfilter: int = 64) -> ndd.Batch:  # fmt: skip
    """Trimmed, preemphasised, normalised log-mel features `(nfilter, frames)` per sample."""
    begin, length = ndd.nonsilent_region(audio, cutoff_db=-60.0, window_length=256,
                                         reset_interval=-1)  # fmt: skip
    audio = ndd.slice(audio, begin, length, axes=[0])
    audio = ndd.preemphasis_filter(audio, preemph_coeff=0.97)
    spec = ndd.spectrogram(audio, nfft=nfft, window_length=window, window_step=step)
    mel = ndd.mel_filter_bank(spec, nfilter=nfilter, sample_rate=sample_rate)
    db = ndd.to_decibels(mel, multiplier=10.0, cutoff_db=-80.0)
    return ndd.normalize(db, axes=[1], epsilon=1e-5)  # per band over time (NeMo "per_feature")


def asr_batches(batch_size: int = 2, device: str = "cpu", manifest: str = MANIFEST,
                sample_rate: float = 16000.0, shuffle: bool = False, seed: int = 0
                ) -> Iterator[tuple[torch.Tensor, torch.Tensor, list[str]]]:  # fmt: skip
    """One epoch of `(features [N, nfilter, max frames] float32 (zero padded), frames [N] int64,
    transcripts)`."""
    reader = ndd.readers.NemoAsr(manifest_filepaths=[manifest], sample_rate=sample_rate,
                                 downmix=True, random_shuffle=shuffle, seed=seed)  # fmt: skip
    for audio, _rate, text in reader.next_epoch(batch_size=batch_size):
        if device == "gpu":
            audio = audio.gpu()
        features = log_mel(audio, sample_rate)
        frames = torch.tensor([shape[1] for shape in features.shape], dtype=torch.int64)
        transcripts = [bytes(np.asarray(t)).decode("utf-8") for t in text.tensors]
        yield features.torch(pad=True), frames, transcripts


def main() -> None:
    """Print the batches' shapes and transcripts, and samples/s per epoch."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--manifest", default=MANIFEST)
    args = parser.parse_args()
    for epoch in range(args.epochs):
        start, count = time.perf_counter(), 0
        for features, frames, texts in asr_batches(args.batch, args.device, args.manifest):
            count += len(texts)
            print(f"features {tuple(features.shape)} frames {frames.tolist()} texts {texts}")
        rate = count / (time.perf_counter() - start)
        print(f"epoch {epoch}: {count} samples, {rate:.1f} samples/s")


if __name__ == "__main__":
    main()
