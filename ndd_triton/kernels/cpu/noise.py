"""noise.* on the CPU: vectorised NumPy over Philox draws (key, base + index).

`kernels/gpu/noise.py` mirrors every formula (same draws, same float64/float32 steps).
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core.convert import convert_numpy
from ndd_triton.kernels import register
from ndd_triton.kernels.cpu.random_ops import standard_normal_f32
from ndd_triton.ops import noise as ops
from ndd_triton.ops.schema import SampleArgs
from ndd_triton.random._philox import (
    element_draws,
    pair_draws,
    to_unit_float32,
    to_unit_float64,
)

POISSON_SMALL = 10.0  # below: inversion; above: transformed rejection (PTRS)
INVERSION_STEPS = 64  # P(X > 64) for a mean below 10 is < 1e-30
PTRS_ATTEMPTS = ops.SHOT_DRAWS // 2
INV_2_32 = 1.0 / 4294967296.0
LOGGAM_SERIES = (8.333333333333333e-02, -2.777777777777778e-03, 7.936507936507937e-04,
                 -5.952380952380952e-04, 8.417508417508418e-04, -1.917526917526918e-03,
                 6.410256410256410e-03, -2.955065359477124e-02, 1.796443723688307e-01,
                 -1.39243221690590e00)  # fmt: skip
HALF_LOG_2PI = 0.9189385332046727


def _draws(arg: SampleArgs, count: int, per_element: int) -> np.ndarray:
    return element_draws(arg.rng_key, int(arg.rng_base), count, per_element)


def _store(out: np.ndarray, value: np.ndarray) -> None:
    convert_numpy(value, out.dtype, out=out.reshape(-1))


@register(ops.gaussian, "cpu")
def gaussian_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """in + mean + stddev * z (z: float32 Box-Muller), in float64, then converted."""
    if out.size == 0:
        return
    z = standard_normal_f32(_draws(arg, out.size, 2)).astype(np.float64)
    _store(out, inp.reshape(-1).astype(np.float64) + (arg.mean + arg.stddev * z))


@register(ops.salt_and_pepper, "cpu")
def salt_and_pepper_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """One (replace?, salt?) decision per unit: a pixel (all its channels) or one value."""
    size = out.size
    if size == 0:
        return
    extent, inner = int(arg.chan_extent), int(arg.chan_inner)
    outer = size // (extent * inner)
    d = _draws(arg, outer * inner, 2)  # unit = outer index * inner + inner index
    replace = (to_unit_float32(d[:, 0]).astype(np.float64) < arg.prob).reshape(outer, 1, inner)
    salt = (to_unit_float32(d[:, 1]).astype(np.float64) < arg.salt_vs_pepper).reshape(outer, 1,
                                                                                         inner)
    values = convert_numpy(np.array([arg.salt_val, arg.pepper_val]), out.dtype)
    shaped = inp.reshape(outer, extent, inner)
    out.reshape(outer, extent, inner)[...] = np.where(
        replace, np.where(salt, values[0], values[1]), shaped)


def loggam(x: np.ndarray) -> np.ndarray:
    """log Gamma(x) for x >= 1: Stirling series at max(x, 7), shifted down by a product."""
    x0 = np.maximum(x, 7.0)
    x2 = 1.0 / (x0 * x0)
    series = np.full_like(x0, LOGGAM_SERIES[9])
    for coefficient in LOGGAM_SERIES[8::-1]:
        series = series * x2 + coefficient
    gl = series / x0 + HALF_LOG_2PI + (x0 - 0.5) * np.log(x0) - x0
    shift = np.ones_like(x)
    for i in range(7):  # x (x+1) ... up to 7
        shift *= np.where(x + i < 7.0, x + i, 1.0)
    return gl - np.log(shift)  # type: ignore[no-any-return]


def poisson(lam: np.ndarray, key: int, first: np.ndarray) -> np.ndarray:
    """Poisson(lam) as float64; element e owns draws `first[e] .. first[e] + 15` (uint64).

    lam < 10: inversion with u = 53-bit float from draws 0, 1. Otherwise Hoermann's PTRS with
    attempt j using draws 2j, 2j+1 as 32-bit floats; if all attempts reject (p < 1e-8), the
    rounded mean is used. Draws are computed only for elements that still need them; the GPU
    kernel runs each step for every lane of a block until no lane needs more, with the same
    result.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        result = np.floor(lam + 0.5)
        small = np.flatnonzero(lam < POISSON_SMALL)
        if small.size:
            result[small] = _inversion(lam[small], *pair_draws(key, first[small]))
        big = np.flatnonzero(~(lam < POISSON_SMALL))
        if big.size:
            result[big] = _ptrs(lam[big], key, first[big], result[big])
    return result


def _inversion(lam: np.ndarray, d0: np.ndarray, d1: np.ndarray) -> np.ndarray:
    """Sequential search: count the steps while u exceeds the cumulative pmf."""
    u = to_unit_float64(d0, d1)
    term = np.exp(-lam)
    total = term
    count = np.zeros_like(lam)
    for step in range(1, INVERSION_STEPS + 1):
        more = u > total
        if not more.any():
            break  # `total` only grows: every later step would add 0 as well
        count += more
        term = term * lam / step
        total = total + term
    return count


def _ptrs(lam: np.ndarray, key: int, first: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    result = fallback.copy()
    slam = np.sqrt(lam)
    loglam = np.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    log_invalpha = np.log(1.1239 + 1.1328 / (b - 3.4))
    vr = 0.9277 - 3.6224 / (b - 2.0)
    pending = np.arange(len(lam))
    for j in range(PTRS_ATTEMPTS):
        if not pending.size:
            break
        e0, e1 = pair_draws(key, first[pending] + np.uint64(2 * j))
        uu = e0.astype(np.float64) * INV_2_32 - 0.5
        v = e1.astype(np.float64) * INV_2_32
        us = 0.5 - np.abs(uu)
        lam_p, a_p, b_p = lam[pending], a[pending], b[pending]
        k = np.floor((2.0 * a_p / us + b_p) * uu + lam_p + 0.43)
        quick = (us >= 0.07) & (v <= vr[pending])
        reject = (k < 0) | ((us < 0.013) & (v > us))
        lhs = np.log(v) + log_invalpha[pending] - np.log(a_p / (us * us) + b_p)
        rhs = -lam_p + k * loglam[pending] - loggam(np.maximum(k, 0.0) + 1.0)
        accept = quick | (~reject & (lhs <= rhs))
        result[pending[accept]] = k[accept]
        pending = pending[~accept]
    return result


@register(ops.shot, "cpu")
def shot_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Poisson(max(0, in / factor)) * factor; factor 0 copies the input."""
    if out.size == 0:
        return
    factor = float(arg.factor)
    if factor == 0.0:
        out[...] = inp
        return
    x = inp.reshape(-1).astype(np.float64) / factor
    lam = np.where(x > 0, x, 0.0)
    first = np.uint64(arg.rng_base) + np.arange(out.size, dtype=np.uint64) * np.uint64(
        ops.SHOT_DRAWS)
    _store(out, poisson(lam, arg.rng_key, first) * factor)
