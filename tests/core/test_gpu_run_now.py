"""GPU calls launched on the caller's thread without an invocation (`run_now.run_gpu_now`:
sync modes, eager with an idle worker and tiny work) keep the eval-mode contract: a failing run
raises at the call in sync modes and at the first read in eager mode (wrapped, with the call
site), later calls are unaffected, and results equal those of the invocation path."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import ndd_triton as ndd
from ndd_triton.kernels import _registry
from ndd_triton.runtime import launch_memo, plans


def _images() -> ndd.Batch:
    rng = np.random.default_rng(3)
    return ndd.as_batch([rng.integers(0, 255, (5 + i, 7, 3), dtype=np.uint8) for i in range(3)],
                        layout="HWC").gpu()  # fmt: skip


@pytest.fixture
def failing_flip(monkeypatch: pytest.MonkeyPatch) -> None:
    """The GPU flip kernel raises in its run (plans and launch memo forgotten, so the calls
    reach it)."""
    from ndd_triton.ops.flip import schema

    entry = _registry.lookup(schema, "gpu")

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("flip: the device ran out of patience")

    monkeypatch.setitem(_registry._KERNELS, ("flip", "gpu"), dataclasses.replace(entry, fn=broken))
    monkeypatch.setattr(launch_memo, "ENABLED", False)
    plans.PLANS.clear()
    yield
    plans.PLANS.clear()


def test_a_failing_run_raises_at_the_call_in_sync_modes(failing_flip):
    images = _images()
    for mode in (ndd.EvalMode.sync_cpu, ndd.EvalMode.sync_full):
        with mode, pytest.raises(RuntimeError, match="ran out of patience") as info:
            ndd.flip(images, horizontal=1)
        assert "An error happened" not in str(info.value)


def test_a_failing_run_raises_at_the_read_in_eager_mode(failing_flip, monkeypatch):
    from ndd_triton.runtime import run_now

    direct = []
    run = run_now.run_gpu_call
    monkeypatch.setattr(run_now, "run_gpu_call", lambda *a: direct.append(1) or run(*a))
    images = _images()
    with ndd.EvalMode.eager:
        result = ndd.flip(images, horizontal=1)  # tiny, worker idle: launched right here
        assert direct  # (the direct launch failed; the invocation path ran it again)
        with pytest.raises(RuntimeError) as info:
            result.evaluate()
    assert str(info.value).startswith("An error happened during asynchronous execution")
    assert "ran out of patience" in str(info.value.__cause__)
    assert __file__ in str(info.value)  # the user's call site


def test_later_calls_and_results_are_those_of_the_invocation_path():
    images = _images()
    expected = [np.asarray(s)[:, ::-1] for s in images.cpu()]
    for mode in (ndd.EvalMode.eager, ndd.EvalMode.sync_cpu, ndd.EvalMode.sync_full):
        with mode:
            direct = ndd.flip(images, horizontal=1)
            with ndd.profile():  # profiling keeps the invocation path (it records them)
                invoked = ndd.flip(images, horizontal=1)
            for a, b, want in zip(direct.cpu(), invoked.cpu(), expected, strict=True):
                np.testing.assert_array_equal(np.asarray(a), want)
                np.testing.assert_array_equal(np.asarray(b), want)


@pytest.mark.parametrize("counts", [[3], [20], [20, 20], [0], [9, 2]])
def test_tiny_work_is_counted_exactly(counts: list[int]) -> None:
    """`is_tiny` adds the bytes read and written as a plain sum does, at the budget's edge too
    (its shortcut for a first sample over the budget, its per-sample loop for a few samples)."""
    from ndd_triton.ops.schema import InputMeta, OutputSpec
    from ndd_triton.runtime import run_now

    budget = run_now._INLINE_MAX_BYTES
    rng = np.random.default_rng(len(counts) * 10 + counts[0])
    seen = set()
    side = 2 * (budget / (2.5 * sum(counts) + 1)) ** (1 / 3)  # totals around the budget
    for _ in range(200):
        shapes = [rng.integers(1, int(side) + 2, (n, 3)) for n in counts]
        if shapes[0].size and rng.random() < 0.2:
            shapes[0][0] = [200, 200, 3]  # a first sample over the budget alone
        metas = [InputMeta(ndd.uint8, "HWC", s) for s in shapes[:1]]
        specs = [OutputSpec(ndd.float32, s, "HWC") for s in shapes[1:]]
        expected = int(shapes[0].prod(axis=1).sum()) + \
            sum(4 * int(s.prod(axis=1).sum()) for s in shapes[1:])  # fmt: skip
        batches = [ndd.as_batch(np.zeros((1,), np.uint8))] * len(metas)
        assert run_now.is_tiny(batches, metas, specs) == (expected <= budget)
        seen.add(expected <= budget)
    assert seen == {True, False} or counts == [0]
