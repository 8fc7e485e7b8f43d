"""random.* distributions on the CPU: vectorised NumPy over Philox draws (key, base + index).

Every formula here is mirrored by `kernels/gpu/random_ops.py` (same draws, same precision), so the
two backends give the same values; see `ops/random_ops.py` for the draw budgets.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core.convert import convert_numpy
from ndd_triton.kernels import register
from ndd_triton.ops import random_ops as ops
from ndd_triton.ops.schema import Call, SampleArgs
from ndd_triton.random._philox import (
    batch_draws,
    bounded_index,
    element_draws,
    single_draws,
    to_u64,
    to_unit_float32,
    to_unit_float64,
    to_unit_open_float32,
)

TWO_PI_F32 = np.float32(2.0 * np.pi)


def _flat(out: np.ndarray) -> np.ndarray:
    """A flat view of a (contiguous) output sample."""
    return out.reshape(-1)


def _draws(arg: SampleArgs, count: int, per_element: int) -> np.ndarray:
    return element_draws(arg.rng_key, int(arg.rng_base), count, per_element)


def standard_normal_f32(d: np.ndarray) -> np.ndarray:
    """Box-Muller on draw pairs `d[:, 0:2]` in float32: sqrt(-2 ln u1) cos(2 pi u2)."""
    u1 = to_unit_open_float32(d[:, 0])
    u2 = to_unit_float32(d[:, 1])
    radius = np.sqrt(np.float32(-2.0) * np.log(u1))
    return radius * np.cos(TWO_PI_F32 * u2)  # type: ignore[no-any-return]


@register(ops.uniform, "cpu")
def uniform_cpu(out: np.ndarray, _like: np.ndarray | None, arg: SampleArgs) -> None:
    """Continuous [lo, hi), closed integer [lo, hi], or a pick from `values`."""
    count = out.size
    if count == 0:
        return
    flat = _flat(out)
    if arg.mode == ops.MODE_FLOAT:
        if out.dtype == np.float32:
            u = to_unit_float32(_draws(arg, count, 1)[:, 0]).astype(np.float64)
        else:
            d = _draws(arg, count, 2)
            u = to_unit_float64(d[:, 0], d[:, 1])
        value = (arg.lo + u * (arg.hi - arg.lo)).astype(out.dtype)
        flat[:] = np.minimum(value, out.dtype.type(arg.below_hi))
        return
    d = _draws(arg, count, 2)
    pick = bounded_index(to_u64(d[:, 0], d[:, 1]), np.uint64(arg.span))
    if arg.mode == ops.MODE_INT:
        with np.errstate(over="ignore"):
            bits = np.uint64(arg.lo_bits) + pick
        flat[:] = bits if out.dtype == np.uint64 else bits.view(np.int64).astype(out.dtype)
        return
    start = int(arg.value_start)
    table = convert_numpy(arg.value_table[start:start + int(arg.span) + 1], out.dtype)
    flat[:] = table[pick.astype(np.int64)]


@register(ops.normal, "cpu")
def normal_cpu(out: np.ndarray, _like: np.ndarray | None, arg: SampleArgs) -> None:
    """mean + stddev * Box-Muller(f32), combined in float64, then converted to the dtype."""
    if out.size == 0:
        return
    z = standard_normal_f32(_draws(arg, out.size, 2)).astype(np.float64)
    convert_numpy(arg.mean + arg.stddev * z, out.dtype, out=_flat(out))


@register(ops.coin_flip, "cpu", batched=True)
def coin_flip_cpu(call: Call, outs: list[list[np.ndarray]], ins: list[list[np.ndarray | None]]
                  ) -> None:  # fmt: skip
    """1 where a [0, 1) float32 draw is below the probability.

    One Philox pass for the whole batch: a per-sample pass costs ~0.15 ms of NumPy call
    overhead, mostly for the one draw of a scalar coin flip (same draws either way)."""
    samples = outs[0]
    sizes = np.array([out.size for out in samples], dtype=np.int64)
    live = np.flatnonzero(sizes)
    if not len(live):
        return
    key = int(call.values["rng_key"])
    bases = np.asarray(call.values["rng_base"], dtype=np.uint64)[live]
    counts = sizes[live]
    # the comparisons of every sample at once, each draw with its sample's probability
    scalar = bool((counts == 1).all())  # a coin per sample (the common case)
    if scalar:  # no per-sample slicing
        draws = single_draws(key, bases)
    else:
        draws = np.concatenate(batch_draws(key, [int(b) for b in bases], counts.tolist()))
    u = to_unit_float32(draws).astype(np.float64)
    if "probability" in call.per_sample:
        values = np.asarray(call.values["probability"], dtype=np.float64)
        probability = np.repeat(values[live], counts)
    else:
        probability = float(call.values["probability"])
    heads = u < probability
    if scalar:
        for i, head in zip(live.tolist(), heads.tolist(), strict=True):
            samples[i][...] = head
        return
    at = 0
    for i, count in zip(live.tolist(), counts.tolist(), strict=True):
        out = samples[i]
        _flat(out)[:] = heads[at:at + count].astype(out.dtype)
        at += count


def choice_sample(out: np.ndarray, a: np.ndarray, arg: SampleArgs) -> None:
    """One sample of random.choice (also used by the GPU path, on the host)."""
    op = "random.choice"
    shape = tuple(int(s) for s in arg.draw_shapes)
    count = int(np.prod(shape, dtype=np.int64))
    if a.ndim == 0:
        n = int(a)
        if n < 1:
            raise RuntimeError(f"{op}: input 'a' sample {arg.index}: the number of choices must "
                               f"be positive; got {n}")  # fmt: skip
    else:
        n = a.shape[0]
    p = arg.p
    if p is not None and len(p) != n:
        raise RuntimeError(f"{op}: argument 'p' sample {arg.index}: expected {n} probabilities "
                           f"(one per choice); got {len(p)}")  # fmt: skip
    if count == 0:
        return
    d = _draws(arg, count, 2)
    if p is None:
        pick = bounded_index(to_u64(d[:, 0], d[:, 1]), np.uint64(n - 1)).astype(np.int64)
    else:
        cumulative = np.cumsum(np.asarray(p, dtype=np.float64))
        u = to_unit_float64(d[:, 0], d[:, 1]) * cumulative[-1]
        pick = np.minimum(np.searchsorted(cumulative, u, side="right"), n - 1)
    if a.ndim == 0:
        out[...] = pick.astype(np.int32).reshape(shape)
    else:
        out[...] = a[pick].reshape(out.shape)


@register(ops.choice, "cpu")
def choice_cpu(out: np.ndarray, a: np.ndarray, _like: np.ndarray | None, arg: SampleArgs) -> None:
    """Uniform (64-bit index) or weighted (cumulative p, float64 draw) picks from `a`."""
    choice_sample(out, a, arg)


def beta_sample(out: np.ndarray, arg: SampleArgs) -> None:
    """Beta draws from a NumPy Philox generator keyed by (RNG key, this sample's draw base)."""
    if out.size == 0:
        return
    gen = np.random.Generator(np.random.Philox(key=(int(arg.rng_key) << 64) | int(arg.rng_base)))
    out[...] = gen.beta(arg.alpha, arg.beta, size=out.shape).astype(out.dtype)


@register(ops.beta, "cpu")
def beta_cpu(out: np.ndarray, _like: np.ndarray | None, arg: SampleArgs) -> None:
    """Beta(alpha, beta) on the host."""
    beta_sample(out, arg)
