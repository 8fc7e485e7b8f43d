"""Independent float64 references for resize and the crop family (slow and obvious).

Resampling follows the golden README: output pixel j of an axis samples source coordinate
`origin + (j + 0.5) * step`; a filter of radius R is widened by |step| when antialiasing a
downscale; samples outside the image are clamped to the edge; weights are normalised. Each
weight is computed in a plain loop from the analytic filter, with no shared code with the
package's tables.
"""

from __future__ import annotations

import math

import numpy as np

NN, LINEAR, CUBIC, LANCZOS3, TRIANGULAR, GAUSSIAN = range(6)


def _sinc(x: float) -> float:
    return 1.0 if x == 0 else math.sin(math.pi * x) / (math.pi * x)


def filter_value(interp: int, x: float) -> float:
    """The filter at offset x: analytic, except CUBIC and LANCZOS3, which DALI 2.4 samples every
    1/32 and interpolates linearly (its recorded weights fit that to 6e-6)."""
    if interp in (CUBIC, LANCZOS3):
        pos = abs(x) * 32
        k = math.floor(pos)
        return (1 - (pos - k)) * analytic_value(interp, k / 32) + \
            (pos - k) * analytic_value(interp, (k + 1) / 32)  # fmt: skip
    return analytic_value(interp, x)


def analytic_value(interp: int, x: float) -> float:
    """The analytic filter at offset x."""
    a = abs(x)
    if interp in (LINEAR, TRIANGULAR):
        return max(0.0, 1.0 - a)
    if interp == CUBIC:
        if a < 1:
            return 1.5 * a**3 - 2.5 * a**2 + 1
        return -0.5 * a**3 + 2.5 * a**2 - 4 * a + 2 if a < 2 else 0.0
    if interp == LANCZOS3:
        return _sinc(x) * _sinc(x / 3) if a < 3 else 0.0
    if interp == GAUSSIAN:
        return math.exp(-x * x / (2 * (1 / (2 * math.sqrt(2))) ** 2)) if a < 1 else 0.0
    raise ValueError(interp)


RADIUS = {LINEAR: 1, TRIANGULAR: 1, CUBIC: 2, LANCZOS3: 3, GAUSSIAN: 1}


def weight_matrix(n_in: int, n_out: int, origin: float, step: float, interp: int,
                  antialias: bool = True) -> np.ndarray:  # fmt: skip
    """Dense `[n_out, n_in]` resampling matrix of one axis."""
    m = np.zeros((n_out, n_in))
    for j in range(n_out):
        centre = origin + (j + 0.5) * step
        if interp == NN:
            m[j, min(max(math.floor(centre), 0), n_in - 1)] = 1.0
            continue
        scale = abs(step) if antialias and abs(step) > 1 else 1.0
        c = centre - 0.5
        r = RADIUS[interp] * scale
        total = 0.0
        for i in range(math.floor(c - r) - 1, math.ceil(c + r) + 2):
            w = filter_value(interp, (i - c) / scale)
            if interp == GAUSSIAN:
                # DALI's ceil(2 r) taps start at ceil(lo + (step/2 - 1/2 - r) + j * step) in
                # float32 (lo, hi rounded to float32, step = (hi - lo) / n_out; r = 1 - 2^-23,
                # or |step| one float32 ulp down when widened). Its table of exp(-4 x^2) ends
                # at |x| = 1 and fades to 0 over the next 1/32.
                f32 = np.float32
                lo32, hi32 = f32(origin), f32(origin + n_out * step)
                st = f32(hi32 - lo32) / f32(n_out)
                r = np.nextafter(abs(st), f32(0)) if scale > 1 else f32(1.0 - 2.0**-23)
                count = math.ceil(2 * float(r)) if scale > 1 else 2
                first = math.ceil(lo32 + (f32(0.5) * st - f32(0.5) - r) + f32(j) * st)
                a = abs(i - c) / scale
                g = math.exp(-4.0 * min(a, 1.0) ** 2) * max(0.0, 1.0 - max(a - 1.0, 0.0) * 32)
                w = g if first <= i < first + count else 0.0
            m[j, min(max(i, 0), n_in - 1)] += w
            total += w
        m[j] /= total
    return m


def to_dtype(value: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Round half away from zero and saturate for integer types."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        value = np.clip(np.copysign(np.floor(np.abs(value) + 0.5), value), info.min, info.max)
    return value.astype(dtype)


def resample(sample: np.ndarray, layout: str, axes: dict[str, tuple[int, float, float]],
             interp: int | tuple[int, int] = LINEAR, antialias: bool = True,
             dtype: np.dtype | None = None) -> np.ndarray:  # fmt: skip
    """Resample the axes named in `axes` ({letter: (n_out, origin, step)}).

    `interp` is one filter or (min_filter, mag_filter), chosen per axis by |step| >= 1.
    """
    out = sample.astype(np.float64)
    for letter, (n_out, origin, step) in axes.items():
        k = layout.index(letter)
        filt = interp if isinstance(interp, int) else interp[0 if abs(step) >= 1 else 1]
        m = weight_matrix(out.shape[k], n_out, origin, step, filt, antialias)
        out = np.moveaxis(np.tensordot(m, np.moveaxis(out, k, 0), axes=(1, 0)), 0, k)
    return to_dtype(out, dtype or sample.dtype)


def resize(sample: np.ndarray, layout: str = "HWC", size: tuple[int, ...] = (),
           **kwargs: object) -> np.ndarray:  # fmt: skip
    """Resize the spatial axes (outermost first) to `size`, whole image, no flip."""
    letters = [c for c in "DHW" if c in layout]
    axes = {c: (n, 0.0, sample.shape[layout.index(c)] / n)
            for c, n in zip(letters, size, strict=True)}
    return resample(sample, layout, axes, **kwargs)  # type: ignore[arg-type]


def crop_window(sample: np.ndarray, layout: str, start: dict[str, int], size: dict[str, int],
                fill: float | list[float] = 0.0, edge: bool = False) -> np.ndarray:  # fmt: skip
    """The window `[start, start + size)` per named axis, outside filled (or clamped)."""
    out_shape = [size.get(c, n) for c, n in zip(layout, sample.shape, strict=False)]
    index = np.indices(out_shape)
    inside = np.ones(out_shape, bool)
    src = []
    for k, c in enumerate(layout):
        coord = index[k] + start.get(c, 0)
        if edge:
            coord = np.clip(coord, 0, sample.shape[k] - 1)
        inside &= (coord >= 0) & (coord < sample.shape[k])
        src.append(np.clip(coord, 0, sample.shape[k] - 1))
    out = sample[tuple(src)].astype(np.float64)
    fills = np.broadcast_to(np.asarray(fill, np.float64), (sample.shape[layout.index("C")],)) \
        if "C" in layout else np.asarray([fill], np.float64).reshape(-1)  # fmt: skip
    fill_map = fills[index[layout.index("C")]] if "C" in layout else fills[0]
    return np.where(inside, out, fill_map)


def window_start(pos: float, n_in: int, n: int, rounding: str = "round") -> int:
    """The crop rule: round_half_away(pos * (in - crop)) or truncated; the position is a
    float32 (DALI's argument type), the product a double."""
    raw = float(np.float32(pos)) * (n_in - n)
    return math.trunc(raw) if rounding == "truncate" else \
        int(math.copysign(math.floor(abs(raw) + 0.5), raw))  # fmt: skip
