"""Generate the bundled ASR example clips (ndd_triton/data/audio): synthetic tones, a chirp,
noise bursts and a two-tone "word", each with leading/trailing silence, plus their NeMo
manifest. Deterministic (fixed seed); run `python tools/make_audio_clips.py` to regenerate."""

from __future__ import annotations

import json
import os

import numpy as np
import soundfile as sf

RATE = 16000
OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ndd_triton",
                   "data", "audio")  # fmt: skip


def _envelope(n: int) -> np.ndarray:
    ramp = min(n // 8, 400)
    env = np.ones(n)
    env[:ramp] = np.linspace(0, 1, ramp)
    env[n - ramp:] = np.linspace(1, 0, ramp)
    return env


def _with_silence(sound: np.ndarray, before: float, after: float) -> np.ndarray:
    return np.concatenate([np.zeros(int(before * RATE)), sound * _envelope(len(sound)),
                           np.zeros(int(after * RATE))])  # fmt: skip


def clips() -> list[tuple[str, np.ndarray, str]]:
    """(file name, signal in [-1, 1], transcript)."""
    rng = np.random.default_rng(2026)
    t = np.arange(int(0.35 * RATE)) / RATE
    tone = 0.5 * np.sin(2 * np.pi * 440 * t)
    chirp = 0.4 * np.sin(2 * np.pi * (200 * t + 0.5 * (2400 - 200) / t[-1] * t**2))
    noise = 0.3 * rng.standard_normal(int(0.2 * RATE))
    word = np.concatenate([0.4 * np.sin(2 * np.pi * 330 * t[: len(t) // 2]),
                           0.4 * np.sin(2 * np.pi * 660 * t[: len(t) // 2])])  # fmt: skip
    return [
        ("tone_a440.wav", _with_silence(tone, 0.15, 0.2), "a tone at four forty"),
        ("chirp_up.flac", _with_silence(chirp, 0.1, 0.1), "a rising chirp"),
        ("noise_burst.flac", _with_silence(noise, 0.25, 0.05), "a burst of noise"),
        ("two_tones.wav", _with_silence(word, 0.05, 0.3), "two tones"),
    ]


def main() -> None:
    """Write the clips (16-bit PCM) and manifest.json."""
    os.makedirs(OUT, exist_ok=True)
    lines = []
    for name, signal, text in clips():
        sf.write(os.path.join(OUT, name), signal, RATE, subtype="PCM_16")
        lines.append(json.dumps({"audio_filepath": name, "duration": round(len(signal) / RATE, 4),
                                 "text": text}))  # fmt: skip
    with open(os.path.join(OUT, "manifest.json"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
