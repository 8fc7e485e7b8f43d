"""Independent audio references written from spec/ops.md §6 (plain loops and explicit sums:
no numpy.fft, no shared code with ndd_triton.ops._audio)."""

from __future__ import annotations

import math

import numpy as np


def preemphasis(x, preemph_coeff=0.97, border="clamp", dtype=np.float32):
    flat = [float(v) for v in np.asarray(x).reshape(-1)]
    out = []
    for t, v in enumerate(flat):
        if t == 0:
            prev = {"zero": 0.0, "clamp": v, "reflect": flat[1] if len(flat) > 1 else v}[border]
        else:
            prev = flat[t - 1]
        out.append(v - float(np.float32(preemph_coeff)) * prev)
    y = np.array(out, dtype=np.float64).reshape(np.shape(x))
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        y = np.clip(np.sign(y) * np.floor(np.abs(y) + 0.5), info.min, info.max)
    return y.astype(dtype)


def dft_power(frame, nfft, power=2):
    """|DFT|^2 (or |DFT|) of `frame` zero-padded/truncated to nfft, bins 0..nfft//2."""
    x = np.zeros(nfft)
    m = min(len(frame), nfft)
    x[:m] = frame[:m]
    n = np.arange(nfft)
    out = []
    for k in range(nfft // 2 + 1):
        re = float(np.sum(x * np.cos(2 * np.pi * k * n / nfft)))
        im = float(np.sum(x * np.sin(2 * np.pi * k * n / nfft)))
        p = re * re + im * im
        out.append(math.sqrt(p) if power == 1 else p)
    return np.array(out)


def spectrogram(x, nfft=None, window_length=512, window_step=256, window_fn=None, power=2,
                center_windows=True, reflect_padding=True, layout="ft"):  # fmt: skip
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    n = len(x)
    nfft = nfft or window_length
    i = np.arange(window_length)
    window = np.asarray(window_fn, np.float64) if window_fn is not None else \
        0.5 - 0.5 * np.cos(2 * np.pi * (i + 0.5) / window_length)  # fmt: skip
    if center_windows:
        frames = 1 + n // window_step
        half = window_length // 2

        def at(p):
            if reflect_padding:
                if n == 1:
                    return x[0]
                while p < 0 or p >= n:  # np.pad(mode="reflect"), as often as needed
                    p = -p if p < 0 else 2 * (n - 1) - p
                return x[p]
            return x[p] if 0 <= p < n else 0.0
    else:
        frames = 1 + (n - window_length) // window_step if n >= window_length else 0
        half = 0

        def at(p):
            return x[p]

    cols = []
    for k in range(frames):
        frame = np.array([at(k * window_step - half + j) for j in range(window_length)])
        cols.append(dft_power(frame * window, nfft, power))
    out = np.array(cols).reshape(frames, nfft // 2 + 1)
    return (out.T if layout == "ft" else out).astype(np.float32)


def power_spectrum(x, nfft=None, axis=-1, power=2):
    x = np.moveaxis(np.asarray(x, np.float64), axis, -1)
    nfft = nfft or x.shape[-1]
    flat = x.reshape(-1, x.shape[-1])
    out = np.array([dft_power(r, nfft, power) for r in flat]).reshape(*x.shape[:-1], -1)
    return np.moveaxis(out, -1, axis).astype(np.float32)


def _hz_to_mel(f, htk):
    if htk:
        return 2595 * math.log10(1 + f / 700)
    return f / (200 / 3) if f < 1000 else 15 + math.log(f / 1000) / (math.log(6.4) / 27)


def _mel_to_hz(m, htk):
    if htk:
        return 700 * (10 ** (m / 2595) - 1)
    return m * 200 / 3 if m < 15 else 1000 * math.exp((m - 15) * math.log(6.4) / 27)


def mel_weights(nbins, nfilter, sample_rate, freq_low=0.0, freq_high=0.0, htk=False,
                normalize=True):  # fmt: skip
    high = freq_high or sample_rate / 2
    lo_m, hi_m = _hz_to_mel(freq_low, htk), _hz_to_mel(high, htk)
    edges = [_mel_to_hz(lo_m + (hi_m - lo_m) * i / (nfilter + 1), htk) for i in range(nfilter + 2)]
    nfft = 2 * (nbins - 1)
    w = np.zeros((nfilter, nbins))
    for m in range(nfilter):
        left, mid, right = edges[m], edges[m + 1], edges[m + 2]
        for k in range(nbins):
            f = k * sample_rate / nfft
            up = (f - left) / (mid - left)
            down = (right - f) / (right - mid)
            w[m, k] = max(0.0, min(up, down))
        if normalize:
            w[m] *= 2 / (right - left)
    return w


def mel_filter_bank(x, nfilter=128, sample_rate=44100.0, freq_low=0.0, freq_high=0.0,
                    mel_formula="slaney", normalize=True, axis=0):  # fmt: skip
    x = np.moveaxis(np.asarray(x, np.float64), axis, 0)
    w = mel_weights(x.shape[0], nfilter, sample_rate, freq_low, freq_high, mel_formula == "htk",
                    normalize)  # fmt: skip
    return np.moveaxis(np.tensordot(w, x, axes=(1, 0)), 0, axis).astype(np.float32)


def to_decibels(x, multiplier=10.0, reference=0.0, cutoff_db=-200.0):
    x = np.asarray(x, np.float64)
    ref = reference if reference else (x.max() if x.size else 1.0)
    floor = 10 ** (cutoff_db / multiplier)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.maximum(floor, np.nan_to_num(x / ref, nan=0.0) if ref else np.zeros_like(x))
    return (multiplier * np.log10(ratio)).astype(np.float32)


def dct(x, n_mfcc=20, dct_type=2, normalize=False, lifter=0.0, axis=0):
    x = np.moveaxis(np.asarray(x, np.float64), axis, 0)
    n_len = x.shape[0]
    k_len = min(n_mfcc, n_len)
    out = np.zeros((k_len, *x.shape[1:]))
    for k in range(k_len):
        acc = np.zeros(x.shape[1:])
        for n in range(n_len):
            if dct_type == 1:
                c = math.cos(math.pi * n * k / (n_len - 1)) * (0.5 if n in (0, n_len - 1) else 1)
            elif dct_type == 2:
                c = math.cos(math.pi / n_len * (n + 0.5) * k)
                if normalize:
                    c *= math.sqrt((1 if k == 0 else 2) / n_len)
            elif dct_type == 3:
                c = math.cos(math.pi / n_len * n * (k + 0.5))
                if normalize:
                    c *= math.sqrt((1 if n == 0 else 2) / n_len)
                elif n == 0:
                    c *= 0.5
            else:
                c = math.cos(math.pi / n_len * (n + 0.5) * (k + 0.5))
                if normalize:
                    c *= math.sqrt(2 / n_len)
            acc = acc + c * x[n]
        if lifter:
            acc = acc * (1 + lifter / 2 * math.sin(math.pi * (k + 1) / lifter))
        out[k] = acc
    return np.moveaxis(out, 0, axis).astype(np.float32)


def nonsilent_region(x, cutoff_db=-60.0, window_length=2048, reference_power=0.0):
    x = [float(v) for v in np.asarray(x).reshape(-1)]
    n = len(x)
    if n < window_length:
        return 0, n
    power = [sum(v * v for v in x[max(0, t - window_length + 1):t + 1]) / window_length
             for t in range(n)]  # fmt: skip
    ref = reference_power or max(power)
    loud = [t for t in range(n) if power[t] >= ref * 10 ** (cutoff_db / 10)]
    if not loud:
        return 0, 0
    begin = max(loud[0] - window_length + 1, 0)
    return begin, loud[-1] + 1 - begin


def resample(x, out_length, in_per_out, quality=50.0):
    """Windowed-sinc resampling with the exact (not tabulated) Hann-windowed sinc."""
    x = np.asarray(x, np.float64)
    lobes = round(0.007 * quality**2 - 0.09 * quality + 3)
    n = x.shape[0]
    out = np.zeros((out_length, *x.shape[1:]))
    for j in range(out_length):
        pos = j * in_per_out
        c = math.ceil(pos)
        for i in range(max(c - lobes, 0), min(c + lobes, n)):
            d = i - pos
            if abs(d) >= lobes:
                continue
            s = 1.0 if d == 0 else math.sin(math.pi * d) / (math.pi * d)
            out[j] += x[i] * s * 0.5 * (1 + math.cos(math.pi * d / lobes))
    return out
