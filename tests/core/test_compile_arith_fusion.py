"""Compile mode's arithmetic chains (`runtime/fusion_arith.py`): a traced run of arithmetic
operators and `ndd.math` functions on one data operand and constants is one pass (one launch on
the GPU, counted in the interpreter) and gives the bytes of the calls run one by one, on both
backends: promotions, integer wrap-around, C division, bool results, float16 results, a
constant on either side."""

from __future__ import annotations

import numpy as np
import pytest
from test_compile_fusion import BS, _run  # (its epoch loop: profiled, fallbacks as errors)

import ndd_triton as ndd


def _data(seed: int, dtype: type, iterations: int = 3, big: bool = False
          ) -> list[list[np.ndarray]]:  # fmt: skip
    gen = np.random.default_rng(seed)
    lo, hi = (30, 50) if big else (2, 9)  # big: whole (unmasked) tiles of the GPU kernel too

    def sample() -> np.ndarray:
        shape = (int(gen.integers(lo, hi)), int(gen.integers(lo, hi)), 3)  # ragged, odd sizes
        if np.dtype(dtype).kind == "f":
            return (gen.random(shape) * 300 - 20).astype(dtype)
        info = np.iinfo(dtype)
        return gen.integers(max(info.min, -(1 << 40)), min(info.max, 1 << 40), shape,
                            endpoint=True).astype(dtype)  # fmt: skip

    return [[sample() for _ in range(BS)] for _ in range(iterations)]


def _normalise(x):  # u8 -> f32 (sub with a float constant), then f32 / f32
    return (x - 127.5) / 127.5


def _sqrt_plus(x):  # mul (f32), math.sqrt, then + an int constant (f32)
    return ndd.math.sqrt(x * 2.0) + 1


def _int_wrap(x):  # u8 + i32 -> i32, * (wraps), C // and %, unary -, abs
    return abs(-((x + 3) * 70001 // 7 % 1000))


def _bool_chain(x):  # a comparison, bool & bool (computed as uint8), bool * int -> i32
    return ((x > 100) & True) * 3


def _const_left(x):  # the data operand on the right
    return 255 - (2.0 / (x + 1.0))


def _half(x):  # float16 results (computed in float32, rounded to float16 between the steps)
    return x * np.float16(0.1) + np.float16(0.3)  # (a NumPy scalar keeps its dtype)


def _trig(x):  # the small-tile trig functions, then exp
    return ndd.math.exp(ndd.math.sin(x / 255.0))


def _wide(x):  # int64 and uint64 arithmetic, shifts, bitwise ops
    return ((x * np.int64(3)) >> 2) ^ np.int64(0x5555)


MEAN = np.array([0.485, 0.456, 0.406], np.float32)
STD = np.array([0.229, 0.224, 0.225], np.float32)


def _mean_std(x):  # per-channel arrays: operands that broadcast (one per step)
    return (x / 255.0 - MEAN) / STD


def _array_left(x):  # a broadcasting operand on the left, then a float64 one
    return (ndd.tensor(MEAN) - x * 0.5) * np.array([[2.0]])


def _per_sample(x):  # a per-sample int16 operand of shape (1, 1, 3) (two collapsed axes)
    gains = ndd.as_batch([np.array([[[1, 2, 3]]], np.int16) * (i + 1) for i in range(BS)])
    return ((x + 1) * gains) % 1000


def _cast_half(x):  # a cast to float16 is a step; float16 results after it
    return ndd.cast(x, dtype=ndd.float16) * np.float16(0.1) + np.float16(0.3)


def _cast_double(x):  # a cast to float64 (given as a NumPy type), float64 steps
    return (ndd.cast(x, dtype=np.float64) - 0.5) / 3.0


def _cast_up(x):  # float16 samples cast to float32 first
    return ndd.cast(x, dtype=ndd.float32) * 3.0


def _dense_other(x):  # the source itself as the other operand (a batch of the same shape)
    return (x * 2 + x) - 7


CASES = [(_normalise, np.uint8, 2), (_sqrt_plus, np.float32, 3), (_int_wrap, np.uint8, 6),
         (_bool_chain, np.uint8, 3), (_const_left, np.uint8, 3), (_half, np.float16, 2),
         (_trig, np.uint8, 3), (_wide, np.int64, 3), (_mean_std, np.uint8, 3),
         (_array_left, np.uint8, 3), (_per_sample, np.uint8, 3),
         (_dense_other, np.uint8, 3), (_cast_half, np.uint8, 3), (_cast_double, np.int16, 3),
         (_cast_up, np.float16, 2)]  # fmt: skip


def _assert_same(a, b) -> None:
    for xa, xb in zip(a, b, strict=True):
        for sa, sb in zip(xa, xb, strict=True):
            assert sa.dtype == sb.dtype
            assert sa.shape == sb.shape
            assert sa.tobytes() == sb.tobytes(), (sa, sb)


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0].__name__}")
def test_arith_chain_fused_bit_identical(case, backend: str) -> None:
    body, dtype, ops = case
    data = _data(ops, dtype)
    eager, _, _ = _run(body, data, backend, False)
    compiled, prof, epoch = _run(body, data, backend, True)
    _assert_same(eager, compiled)
    groups = {g.calls for g in epoch.session.groups.values()}
    assert len(groups) == 1
    assert len(next(iter(groups))) == ops  # the whole chain is one group
    for it in prof.compiled:
        assert [len(g.ops) for g in it.groups] == [ops]  # one pass
        if backend == "gpu":
            assert it.gpu_launches == 1  # the whole chain: one launch


@pytest.mark.parametrize("case", [c for c in CASES if c[0] in (_mean_std, _per_sample,
                                                                _dense_other, _cast_half)],
                         ids=lambda c: f"{c[0].__name__}")  # fmt: skip
def test_arith_chain_on_whole_tiles(case) -> None:
    """Samples of 30-50 x 30-50 x 3: the GPU kernel's whole tiles (unmasked loads and stores)
    besides the partial ones, the same bytes as eager mode in one launch."""
    body, dtype, _ = case
    data = _data(21, dtype, big=True)
    eager, _, _ = _run(body, data, "gpu", False)
    compiled, prof, _ = _run(body, data, "gpu", True)
    _assert_same(eager, compiled)
    assert [it.gpu_launches for it in prof.compiled] == [1, 1]


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_what_is_and_is_not_an_arith_chain(backend: str) -> None:
    """A result read twice ends a chain; of a call's two operands the first that is a
    chainable result carries the chain and the other, a chainable result read only there,
    joins as a sub-chain (test_compile_arith_trees.py); a member's result the caller reads is
    computed on that read by its own call. Same bytes as eager."""
    data = _data(5, np.uint8)
    seen: list = []

    def body(x):
        y = x * 2  # read twice: in no chain
        z = (y + 1) + (y - 1)  # y + 1 carries the chain, y - 1 is the add's sub-chain
        w = (z * 3) / 4.0
        seen.append([np.array(s) for s in w.cpu()])  # read: computed by its own call
        return w + 0.5

    eager, _, _ = _run(body, data, backend, False)
    eager_seen, seen[:] = list(seen), []
    compiled, _, epoch = _run(body, data, backend, True)
    _assert_same(eager, compiled)
    _assert_same(eager_seen, seen)
    chains = {g.calls for g in epoch.session.groups.values()}
    names = [[epoch.session.program[p].name for p in calls] for calls in chains]
    assert names == [["__add__", "__sub__", "__add__", "__mul__", "__truediv__", "__add__"]]


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_a_cast_to_an_integer_type_is_a_step(backend: str) -> None:
    """A cast to uint8 (the cast kernel's rounding and saturation) is the chain's last step:
    one pass, one launch (test_compile_arith_casts.py: every type's edges)."""
    data = _data(12, np.uint8)

    def body(x):
        return ndd.cast((x - 1.0) * 2.5, dtype=ndd.uint8)

    eager, _, _ = _run(body, data, backend, False)
    compiled, prof, epoch = _run(body, data, backend, True)
    _assert_same(eager, compiled)
    chains = {g.calls for g in epoch.session.groups.values()}
    assert [[epoch.session.program[p].name for p in c] for c in chains] == [
        ["__sub__", "__mul__", "cast"]]
    for it in prof.compiled:
        assert [g.ops for g in it.groups] == [("__sub__", "__mul__", "cast")]
        if backend == "gpu":
            assert it.gpu_launches == 1


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_an_operand_that_widens_the_value_runs_the_chain_call_by_call(backend: str) -> None:
    """A chain's value must keep the result's shape: `(c * 2.0) + x` with per-sample `c` of
    shape (1, 1, 3) widens it at the add, so the two calls run one by one (same bytes)."""
    data = _data(14, np.uint8)

    def body(x):
        c = ndd.as_batch([np.full((1, 1, 3), i + 1, np.float32) for i in range(BS)])
        return (c * 2.0) + x

    eager, _, _ = _run(body, data, backend, False)
    compiled, prof, epoch = _run(body, data, backend, True)
    _assert_same(eager, compiled)
    assert len({g.calls for g in epoch.session.groups.values()}) == 1  # planned as a chain
    for it in prof.compiled:
        assert [g.ops for g in it.groups] == [("__mul__",), ("__add__",)]  # run one by one


def test_a_float16_computation_is_not_one_launch() -> None:
    """Steps computing in float16 do not exist (float16 computes in float32), and a chain of
    more than 8 steps runs call by call on the GPU: same bytes, no fused pass."""
    data = _data(9, np.uint8)

    def body(x):
        for k in range(9):
            x = x + k
        return x

    eager, _, _ = _run(body, data, "gpu", False)
    compiled, prof, _ = _run(body, data, "gpu", True)
    _assert_same(eager, compiled)
    for it in prof.compiled:
        assert it.gpu_launches == 9
