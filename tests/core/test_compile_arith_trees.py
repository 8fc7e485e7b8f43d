"""Compile mode's arithmetic trees (`runtime/fusion_arith.py`): a chain member whose other
operand is the result of a second chain (or one chainable call) read nowhere else takes that
chain into its pass (`x * a + y * b`, a mixup `x * lam + y * (1 - lam)`): one launch on the
GPU, one pool job on the CPU, the bytes of the calls run one by one; what cannot run as one
pass falls back to a smaller tree or to the main chain alone."""

from __future__ import annotations

import numpy as np
import pytest
from test_compile_arith_fusion import _assert_same, _data
from test_compile_fusion import BS, _run

import ndd_triton as ndd


def _lam() -> ndd.Batch:
    return ndd.random.uniform(batch_size=BS, range=[0.2, 0.8])


def _blend(x):  # per-sample scalars on both sides; the second image flipped
    y = ndd.flip(x, horizontal=1)
    return x * _lam() + y * ndd.random.uniform(batch_size=BS, range=[0.1, 0.3])


def _mixup(x):  # `1 - lam` (per-sample scalars) runs on its own before the tree
    lam = _lam()
    y = ndd.flip(x, vertical=1)
    return x * lam + y * (1.0 - lam)


def _int_tree(x):  # integer steps on both sides (u8 -> i32 wrap-around, C division)
    return (x * 70001 + 3) - (x // 3 * 5 - 7)


def _float_sides(x):  # a chain of three on each side, uint8 -> float32, float64 constants
    y = ndd.flip(x, horizontal=1)
    return ((x / 255.0 - 0.5) * 2.0) + ((y - 127.5) / 127.5 * np.float64(0.25))


def _bool_tree(x):  # comparisons, a bool sub-chain, then arithmetic on the bool result
    return ((x > 100) & ((x < 200) | False)) * 3


def _three_images(x):  # two sub-chains (each read by one add), one kept register in turn
    y, z = ndd.flip(x, horizontal=1), ndd.flip(x, vertical=1)
    return x * 0.5 + y * 0.25 + (z - 3) * 0.25


CASES = [(_blend, np.uint8, ("__mul__", "__mul__", "__add__")),
         (_mixup, np.uint8, ("__mul__", "__mul__", "__add__")),
         (_int_tree, np.uint8, ("__mul__", "__add__", "__floordiv__", "__mul__", "__sub__",
                                "__sub__")),
         (_float_sides, np.uint8, ("__truediv__", "__sub__", "__mul__", "__sub__",
                                   "__truediv__", "__mul__", "__add__")),
         (_bool_tree, np.uint8, ("__gt__", "__lt__", "__or__", "__and__", "__mul__")),
         (_three_images, np.uint8, ("__mul__", "__mul__", "__add__", "__sub__", "__mul__",
                                    "__add__"))]  # fmt: skip


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0].__name__)
def test_arith_tree_is_one_pass(case, backend: str) -> None:
    body, dtype, ops = case
    data = _data(len(ops), dtype)
    eager, _, _ = _run(body, data, backend, False)
    compiled, prof, _ = _run(body, data, backend, True)
    _assert_same(eager, compiled)
    for it in prof.compiled:
        groups = {g.ops: g.gpu_launches for g in it.groups}
        assert ops in groups, groups  # the tree's calls in one pass
        if backend == "gpu":
            assert groups[ops] == 1, groups


def test_arith_tree_on_whole_tiles() -> None:
    """Samples of 30-50 x 30-50 x 3 (the kernel's unmasked tiles too): one launch, eager's
    bytes."""
    data = _data(23, np.uint8, big=True)
    eager, _, _ = _run(_float_sides, data, "gpu", False)
    compiled, prof, _ = _run(_float_sides, data, "gpu", True)
    _assert_same(eager, compiled)
    assert [it.gpu_launches for it in prof.compiled] == [2, 2]  # the flip and the tree


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_a_tree_that_cannot_be_one_pass_keeps_its_main_chain(backend: str) -> None:
    """A sub-chain whose value has another shape (per-sample (1, 1, 3) gains, broadcast by the
    add) runs on its own; the main chain is still one pass (GPU: one launch); eager's bytes."""
    data = _data(31, np.uint8)

    def body(x):
        c = ndd.as_batch([np.full((1, 1, 3), i + 1, np.float32) for i in range(BS)])
        return (x * 2.0 + 1.0) + c * 3.0

    eager, _, _ = _run(body, data, backend, False)
    compiled, prof, epoch = _run(body, data, backend, True)
    _assert_same(eager, compiled)
    assert any(g.subs for g in epoch.session.groups.values())  # planned as a tree
    for it in prof.compiled:
        groups = {g.ops: g.gpu_launches for g in it.groups}
        assert set(groups) == {("__mul__",), ("__mul__", "__add__", "__add__")}, groups
        if backend == "gpu":
            assert groups[("__mul__", "__add__", "__add__")] == 1


def test_a_tree_over_the_step_limit_is_not_formed() -> None:
    """8 kernel steps at most (its calls and one START): a longer tree stays two chains."""
    data = _data(32, np.uint8)

    def body(x):
        a = x + 1
        for k in range(4):
            a = a * (k + 2)
        b = x - 1
        for k in range(3):
            b = b + k
        return a - b

    eager, _, _ = _run(body, data, "gpu", False)
    compiled, prof, epoch = _run(body, data, "gpu", True)
    _assert_same(eager, compiled)
    assert all(not g.subs for g in epoch.session.groups.values())
    assert [it.gpu_launches for it in prof.compiled] == [2, 2]
