"""Shared audio math (host side, NumPy): windows, mel filter banks, DCT matrices, the
windowed-sinc resampling table. CPU kernels use them directly, GPU kernels upload them.

Formulas follow DALI 2.4 as observed (spec/ops.md §6) and cross-checked on the golden cases:
the default spectrogram window is the Hann window sampled at half-sample offsets
`0.5 - 0.5 cos(2 pi (i + 0.5) / L)`; the mel bank is librosa's (`htk` or Slaney scale,
`norm="slaney"`); DCTs are unnormalised sums (no factor 2) or orthonormal.
"""

from __future__ import annotations

import functools
import math

import numpy as np

RESAMPLE_LUT_PER_LOBE = 64  # lookup-table points per sinc lobe (DALI: lobes * 64 + 1 points)


def hann_window(length: int) -> np.ndarray:
    """DALI's default spectrogram window (float32, symmetric about the frame centre)."""
    i = np.arange(length, dtype=np.float64)
    return (0.5 - 0.5 * np.cos(2 * np.pi * (i + 0.5) / length)).astype(np.float32)


def _hz_to_mel(freq: np.ndarray, slaney: bool) -> np.ndarray:
    freq = np.asarray(freq, dtype=np.float64)
    if not slaney:
        return 2595.0 * np.log10(1.0 + freq / 700.0)
    step = math.log(6.4) / 27.0  # Slaney: linear below 1 kHz (200/3 Hz per mel), log above
    log_part = 15.0 + np.log(np.maximum(freq, 1e-10) / 1000.0) / step
    return np.where(freq >= 1000.0, log_part, freq * 3.0 / 200.0)


def _mel_to_hz(mel: np.ndarray, slaney: bool) -> np.ndarray:
    if not slaney:
        return 700.0 * (10.0 ** (mel / 2595.0) - 1.0)
    step = math.log(6.4) / 27.0
    return np.where(mel >= 15.0, 1000.0 * np.exp(step * (mel - 15.0)), mel * 200.0 / 3.0)


@functools.lru_cache(maxsize=64)
def mel_matrix(nbins: int, nfilter: int, sample_rate: float, freq_low: float, freq_high: float,
               slaney: bool, normalize: bool) -> np.ndarray:  # fmt: skip
    """`[nfilter, nbins]` float64 triangular filters over FFT bins `k * sr / nfft`."""
    nfft = max(2 * (nbins - 1), 1)
    high = freq_high if freq_high > 0 else sample_rate / 2.0
    fft_freqs = np.arange(nbins, dtype=np.float64) * sample_rate / nfft
    low_mel = _hz_to_mel(np.float64(freq_low), slaney)
    high_mel = _hz_to_mel(np.float64(high), slaney)
    edges = _mel_to_hz(np.linspace(low_mel, high_mel, nfilter + 2), slaney)
    width = np.diff(edges)
    with np.errstate(divide="ignore", invalid="ignore"):
        rising = (fft_freqs[None, :] - edges[:nfilter, None]) / width[:nfilter, None]
        falling = (edges[2:, None] - fft_freqs[None, :]) / width[1:, None]
        weights = np.nan_to_num(np.maximum(0.0, np.minimum(rising, falling)))
        if normalize:
            weights *= (2.0 / (edges[2:] - edges[:nfilter]))[:, None]
    weights = np.nan_to_num(weights, posinf=0.0, neginf=0.0)
    weights.setflags(write=False)
    return weights


@functools.lru_cache(maxsize=64)
def dct_matrix(length: int, n_out: int, dct_type: int, normalize: bool, lifter: float
               ) -> np.ndarray:  # fmt: skip
    """`[n_out, length]` float64 DCT (types 1-4) with optional liftering of the outputs."""
    n = np.arange(length, dtype=np.float64)[None, :]
    k = np.arange(n_out, dtype=np.float64)[:, None]
    if dct_type == 1:
        mat = np.cos(np.pi / max(length - 1, 1) * n * k)
        mat[:, 0] *= 0.5
        if length > 1:
            mat[:, -1] *= 0.5
    elif dct_type == 2:
        mat = np.cos(np.pi / length * (n + 0.5) * k)
        if normalize:
            mat *= math.sqrt(2.0 / length)
            mat[0] /= math.sqrt(2.0)
    elif dct_type == 3:
        mat = np.cos(np.pi / length * n * (k + 0.5))
        if normalize:
            mat *= math.sqrt(2.0 / length)
            mat[:, 0] /= math.sqrt(2.0)
        else:
            mat[:, 0] *= 0.5
    else:
        mat = np.cos(np.pi / length * (n + 0.5) * (k + 0.5))
        if normalize:
            mat *= math.sqrt(2.0 / length)
    if lifter:
        mat *= 1.0 + lifter / 2.0 * np.sin(np.pi * (k + 1.0) / lifter)
    mat.setflags(write=False)
    return mat


def band_limits(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the first and one-past-last nonzero column (`[0, 0)` for an all-zero row)."""
    nonzero = matrix != 0
    any_nz = nonzero.any(axis=1)
    first = np.where(any_nz, nonzero.argmax(axis=1), 0)
    last = np.where(any_nz, matrix.shape[1] - nonzero[:, ::-1].argmax(axis=1), 0)
    return first.astype(np.int64), last.astype(np.int64)


def resample_lobes(quality: float) -> int:
    """Sinc lobes of the resampling window: 0 -> 3, 50 -> 16, 100 -> 64 (DALI's formula)."""
    return round(0.007 * quality * quality - 0.09 * quality + 3)


@functools.lru_cache(maxsize=16)
def resample_table(lobes: int) -> tuple[np.ndarray, float, float]:
    """Hann-windowed sinc sampled at `lobes * 64 + 1` points: `(lut, center, points per unit)`.

    A tap at distance x from the output position weighs `lut[i] + f (lut[i+1] - lut[i])` with
    `i + f = x * per_unit + center` (linear interpolation; the table has a zero on each side).
    """
    coeffs = lobes * RESAMPLE_LUT_PER_LOBE + 1
    scale = np.float32(2.0 * lobes / (coeffs - 1))
    envelope_scale = np.float32(2.0 / coeffs)
    center = int((coeffs - 1) * 0.5)
    i = np.arange(coeffs) - center
    x = (i * scale).astype(np.float32)
    y = (i * envelope_scale).astype(np.float32).astype(np.float64)
    # sinc in float32 as DALI computes it: sin(float32(pi x)) is ~3e-8, not 0, at integer x,
    # which shows in the outputs (0.5 resampled at scale 1 is 0.49999997 -> int16 16383)
    px = np.where(x == 0, np.float32(1), np.float32(np.pi) * x).astype(np.float32)
    sinc = np.where(x == 0, np.float32(1), np.sin(px) / px).astype(np.float32)
    lut = np.zeros(coeffs + 5, dtype=np.float32)
    envelope = (0.5 * (1.0 + np.cos(np.pi * y))).astype(np.float32)
    lut[1 : coeffs + 1] = sinc * envelope
    lut.setflags(write=False)
    return lut, float(center + 1), float(np.float32(1.0) / scale)


RESAMPLE_BLOCK = 256  # outputs whose input positions accumulate in float32 from one origin


def resample_positions(begin: int, end: int, ratio: float) -> tuple[np.ndarray, np.ndarray]:
    """Input positions of outputs `[begin, end)` (begin a multiple of RESAMPLE_BLOCK) as DALI
    computes them: per block of 256 outputs an integer origin `floor(j0 * ratio)` (float64)
    and a float32 offset advanced by `float32(ratio)` per output (sequential float32 sums: the
    rounding drift is part of DALI's result). Returns (int64 origins, float32 offsets)."""
    origins, offsets = batch_resample_positions(np.array([end - begin]), np.array([ratio]),
                                                first=begin)  # fmt: skip
    return origins, offsets


def batch_resample_positions(lengths: np.ndarray, ratios: np.ndarray, first: int = 0
                             ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """`resample_positions` of several signals at once (outputs `first .. first + lengths[i]`
    of signal i, concatenated), vectorised over all their 256-output blocks."""
    lengths = np.asarray(lengths, dtype=np.int64)
    ratios = np.asarray(ratios, dtype=np.float64)
    blocks = -(-lengths // RESAMPLE_BLOCK)
    owner = np.repeat(np.arange(len(lengths)), blocks)
    local = np.arange(int(blocks.sum()), dtype=np.int64) - np.repeat(np.cumsum(blocks) - blocks,
                                                                     blocks)  # fmt: skip
    exact = (first + local * RESAMPLE_BLOCK).astype(np.float64) * ratios[owner]
    origin = np.floor(exact)
    steps = np.repeat(ratios[owner].astype(np.float32)[:, None], RESAMPLE_BLOCK, axis=1)
    steps[:, 0] = (exact - origin).astype(np.float32)
    offsets = np.add.accumulate(steps, axis=1, dtype=np.float32)
    origins = np.repeat(origin.astype(np.int64), RESAMPLE_BLOCK)
    used = (np.arange(RESAMPLE_BLOCK)[None, :] < (lengths[owner] - local * RESAMPLE_BLOCK)[:, None])
    return origins[used.reshape(-1)], offsets[used]


def resample(signal: np.ndarray, out_length: int, ratio: float, lobes: int,
             chunk: int = 8192) -> np.ndarray:  # fmt: skip
    """Windowed-sinc resampling along axis 0 (float32 out): output j sits at input position
    `j * ratio` (`resample_positions`), taps `ceil(pos) - lobes ... ceil(pos) + lobes - 1`
    inside the signal, weights interpolated from `resample_table`."""
    lut, center, per_unit = resample_table(lobes)
    x = np.asarray(signal, dtype=np.float32)
    n = x.shape[0]
    flat = x.reshape(n, -1)
    out = np.zeros((out_length, flat.shape[1]), dtype=np.float32)
    if n == 0:
        return out.reshape((out_length, *x.shape[1:]))
    taps = np.arange(-lobes, lobes, dtype=np.int64)
    for begin in range(0, out_length, chunk):  # bounded memory: [chunk, 2 * lobes] taps
        stop = min(begin + chunk, out_length)
        origin, offset = resample_positions(begin, stop, ratio)
        rel = np.ceil(offset).astype(np.int64)[:, None] + taps[None, :]
        dist = rel.astype(np.float32) - offset[:, None]
        fi = dist * np.float32(per_unit) + np.float32(center)
        lo = np.floor(fi)
        frac = fi - lo
        lo_i = np.clip(lo.astype(np.int64), 0, len(lut) - 2)
        weight = lut[lo_i] + frac * (lut[lo_i + 1] - lut[lo_i])
        idx = origin[:, None] + rel
        weight[(idx < 0) | (idx >= n)] = 0.0
        gathered = flat[np.clip(idx, 0, n - 1)]
        acc = np.zeros((stop - begin, flat.shape[1]), dtype=np.float32)
        for t in range(2 * lobes):  # tap by tap in float32, the order DALI sums in
            acc += weight[:, t, None] * gathered[:, t]
        out[begin:stop] = acc
    return out.reshape((out_length, *x.shape[1:]))


def axis_split(shapes: np.ndarray, axis: int) -> np.ndarray:
    """`[N, 3]` (outer, axis extent, inner) of each sample: the view a transform along `axis`
    walks (elements `(o * extent + j) * inner + t`)."""
    outer = shapes[:, :axis].prod(axis=1, dtype=np.int64)
    inner = shapes[:, axis + 1 :].prod(axis=1, dtype=np.int64)
    return np.stack([outer, shapes[:, axis], inner], axis=1)
