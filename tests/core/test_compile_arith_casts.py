"""Compile mode's arithmetic chains with casts to every type and with `clamp`
(`runtime/fusion_arith.py`): a cast is a step of the chain kernel (`x.to(DST)` to a float type,
DALI's rounding and saturation to an integer or bool, `arith_chain._helper_cast`) and a clamp
two (`max` with `lo`, `min` with `hi`), so `ndd.cast(ndd.math.clamp(x * 1.5 - 20, 0, 255),
dtype=ndd.uint8)` is one pass (one launch on the GPU, counted in the interpreter) with the
bytes of the calls run one by one, on both backends."""

from __future__ import annotations

import numpy as np
import pytest
from test_compile_fusion import BS, _assert_same, _run

import ndd_triton as ndd

# Each conversion's edges: NaN, infinities, halves (round half away from zero), the limits of
# every integer type and the float32 roundings next to them (2**31 - 1 and 2**32 - 1 are not
# float32 values), beyond every limit.
EDGES = np.array([
    np.nan, np.inf, -np.inf, 0.0, -0.0, 0.49999997, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 126.5,
    127.5, 128.0, 254.5, 255.5, 256.0, -127.5, -128.5, -129.0, 32767.5, 32768.0, -32768.5,
    -32769.0, 65535.5, 65536.0, 2147483647.0, 2147483647.5, 2147483648.0, -2147483648.5,
    -2147483649.0, 4294967295.0, 4294967295.5, 4294967296.0, 2.0 ** 53, 2.0 ** 63,
    -(2.0 ** 63), 2.0 ** 64, 2.0 ** 65, -(2.0 ** 64), 1e30, -1e30, 3.4e38, 1e300,
])  # fmt: skip
TYPES = [ndd.bool, ndd.uint8, ndd.uint16, ndd.uint32, ndd.uint64, ndd.int8, ndd.int16,
         ndd.int32, ndd.int64, ndd.float16, ndd.float32, ndd.float64]  # fmt: skip


def _edges(iterations: int = 2) -> list[list[np.ndarray]]:
    """Ragged float64 samples of the edges (shapes (k, 1, 3)), rolled per sample."""
    out = []
    for it in range(iterations):
        batch = []
        for i in range(BS):
            values = np.roll(EDGES, 5 * i + it)[: 3 * (15 - 2 * i)]
            batch.append(values.reshape(-1, 1, 3))
        out.append(batch)
    return out


def _assert_all_same(a, b) -> None:
    for ia, ib in zip(a, b, strict=True):
        for ya, yb in zip(ia, ib, strict=True):
            for sa, sb in zip(ya, yb, strict=True):
                assert sa.dtype == sb.dtype
                assert sa.shape == sb.shape
                assert sa.tobytes() == sb.tobytes(), (sa.ravel(), sb.ravel())


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize("source", TYPES, ids=lambda t: str(t))
def test_casts_from_every_type_to_every_type(source, backend: str) -> None:
    """`cast(cast(x, source), target)` of the edges, float64 data: two cast steps, one pass
    per target (12 chains of one input, each one launch), the cast op's bytes."""

    def body(x):
        mid = [ndd.cast(x, dtype=source) for _ in TYPES]
        return [ndd.cast(m, dtype=t) for m, t in zip(mid, TYPES, strict=True)]

    data = _edges()
    eager, _, _ = _run(body, data, backend, False)
    compiled, prof, epoch = _run(body, data, backend, True)
    _assert_all_same(eager, compiled)
    assert len({g.calls for g in epoch.session.groups.values()}) == len(TYPES)
    for it in prof.compiled:
        assert [len(g.ops) for g in it.groups] == [2] * len(TYPES)
        if backend == "gpu":
            assert it.gpu_launches == len(TYPES)


def _data(seed: int, dtype: type, big: bool = False) -> list[list[np.ndarray]]:
    gen = np.random.default_rng(seed)
    lo, hi = (30, 50) if big else (2, 9)
    return [[gen.integers(0, 256, (int(gen.integers(lo, hi)), int(gen.integers(lo, hi)), 3))
             .astype(dtype) for _ in range(BS)] for _ in range(3)]  # fmt: skip


def _to_u8(x):  # mul (f32), sub, clamp (f32: two steps), cast to uint8 (rounds, saturates)
    return ndd.cast(ndd.math.clamp(x * 1.5 - 20, 0, 255), dtype=ndd.uint8)


def _per_sample_lo(x):  # i32 value, per-sample int16 lo of shape (1, 1, 3), constant hi
    lo = ndd.as_batch([np.array([[[10, 40, 90]]], np.int16) + i for i in range(BS)])
    return ndd.math.clamp(x + 3, lo, 200) * 2


def _mixed_types(x):  # i32 value, float lo: computed in float32; then a cast to int16
    return ndd.cast(ndd.math.clamp(x - 100, -20.5, 60) * 3.0, dtype=ndd.int16)


def _clamp_first(x):  # the chain enters at the clamp's value
    return ndd.math.clamp(x, 10, 200) * 2 - 1


def _dense_bounds(x):  # lo and hi batches of the result's shape (computed by calls of their
    # own: a clamp takes no sub-chain, so `x // 2` and `x + 100` are two more launches)
    return ndd.math.clamp(x * 2, x // 2, x + 100) - 7


def _clamp_in_sub_chain(x):  # a tree: x * 0.5 + (clamp(flip(x) * 2.0, 0.0, 300.0))
    y = ndd.flip(x, horizontal=1)
    return x * 0.5 + ndd.math.clamp(y * 2.0, 0.0, 300.0)


CASES = [(_to_u8, np.uint8, 4, 1), (_per_sample_lo, np.uint8, 3, 1),
         (_mixed_types, np.uint8, 4, 1), (_clamp_first, np.uint8, 3, 1),
         (_dense_bounds, np.uint8, 3, 3), (_clamp_in_sub_chain, np.uint8, 4, 2)]  # fmt: skip


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0].__name__)
def test_clamp_in_a_chain(case, backend: str) -> None:
    body, dtype, ops, launches = case
    data = _data(ops, dtype)
    eager, _, _ = _run(body, data, backend, False)
    compiled, prof, epoch = _run(body, data, backend, True)
    _assert_same(eager, compiled)
    chains = {g.calls for g in epoch.session.groups.values()}
    assert [len(c) for c in chains] == [ops]
    for it in prof.compiled:
        if backend == "gpu":
            assert it.gpu_launches == launches


def test_clamp_on_whole_tiles() -> None:
    """30-50 x 30-50 x 3 samples: unmasked tiles too, one launch, eager's bytes."""
    data = _data(7, np.uint8, big=True)
    eager, _, _ = _run(_to_u8, data, "gpu", False)
    compiled, prof, _ = _run(_to_u8, data, "gpu", True)
    _assert_same(eager, compiled)
    assert [it.gpu_launches for it in prof.compiled] == [1, 1]


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_clamp_of_nan_and_infinities(backend: str) -> None:
    """NaN passes through both steps (max and min propagate it, as the clamp kernel's), the
    infinities are clamped; then a cast to int32 (NaN -> INT32_MIN, as the cast op)."""

    def body(x):
        return [ndd.cast(ndd.math.clamp(x * 0.5, -1e20, 1e20), dtype=ndd.int32),
                ndd.math.clamp(x - 1.0, -np.inf, 7.5)]

    data = _edges()
    eager, _, _ = _run(body, data, backend, False)
    compiled, prof, _ = _run(body, data, backend, True)
    _assert_all_same(eager, compiled)
    if backend == "gpu":
        assert [it.gpu_launches for it in prof.compiled] == [2]


def test_the_planner_chains_casts_to_the_types_the_kernel_has() -> None:
    from ndd_triton.kernels.gpu.arith_chain import TYPE_CODES
    from ndd_triton.runtime.fusion_arith import _CAST_TYPES

    assert set(TYPE_CODES) == _CAST_TYPES
