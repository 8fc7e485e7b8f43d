"""Whole-call replay of repeated GPU calls (runtime/call_replay.py).

A call whose plan, input shapes, input packing and stream repeat is answered from the entry kept
after its launch-memo replay, without prepare: the results equal those of the normal path (the
launch memo off), in every eval mode that runs calls, for uniform and ragged batches, batches and
tensors; anything that changes the description, an evicted memo entry, a profile, takes the
normal path; a failing replay keeps the eval-mode contract."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import ndd_triton as ndd
from ndd_triton.kernels.gpu import _replay
from ndd_triton.runtime import call_replay, executor, launch_memo, plans
from ndd_triton.runtime import prepare as _prepare

RAGGED = [(5, 7, 3), (4, 9, 3), (6, 6, 3)]
UNIFORM = [(6, 5, 3)] * 3
MEAN, STD = [100.0, 110.0, 120.0], [50.0, 60.0, 70.0]
CALLS: dict[str, Callable[[ndd.Batch], ndd.Batch]] = {
    "flip": lambda b: ndd.flip(b, horizontal=1, vertical=1),
    "crop_mirror_normalize": lambda b: ndd.crop_mirror_normalize(
        b, crop=[3, 3], mean=MEAN, std=STD, mirror=1, dtype=ndd.float32, output_layout="CHW"),
    "resize": lambda b: ndd.resize(b, size=[5, 6]),
    "cast": lambda b: ndd.cast(b, dtype=ndd.float32),
}  # fmt: skip


def _data(seed: int, shapes: list[tuple[int, ...]]) -> ndd.Batch:
    rng = np.random.default_rng(seed)
    return ndd.as_batch([rng.integers(0, 256, s, dtype=np.uint8) for s in shapes],
                        layout="HWC").gpu()  # fmt: skip


def _host(out: ndd.Batch) -> list[np.ndarray]:
    return [np.asarray(s) for s in out.cpu()]


def _same(a: list[np.ndarray], b: list[np.ndarray]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(x, y)


@pytest.fixture
def prepares(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts prepare phases (a replayed call has none); plans and memo start empty."""
    count: list[int] = []
    real = _prepare.prepare
    monkeypatch.setattr(_prepare, "prepare", lambda *a, **k: count.append(1) or real(*a, **k))
    plans.PLANS.clear()
    launch_memo.clear()
    return count


def _unreplayed(fn: Callable[[ndd.Batch], ndd.Batch], data: list[ndd.Batch],
                prepares: list[int], monkeypatch: pytest.MonkeyPatch) -> list[list[np.ndarray]]:  # fmt: skip
    """`fn`'s results on `data` with the launch memo off (so no replay of any kind), then the
    memo back on with no plans and no prepare counted: the reference of a test."""
    monkeypatch.setattr(launch_memo, "ENABLED", False)
    expected = [_host(fn(d)) for d in data]
    monkeypatch.setattr(launch_memo, "ENABLED", True)
    plans.PLANS.clear()
    prepares.clear()
    return expected


@pytest.mark.parametrize("mode", ["sync_cpu", "sync_full", "eager"])
@pytest.mark.parametrize("shapes", [RAGGED, UNIFORM], ids=["ragged", "uniform"])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_repeated_calls_are_replayed_whole_with_the_normal_paths_results(
        name: str, shapes: list[tuple[int, ...]], mode: str, prepares: list[int],
        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    fn = CALLS[name]
    data = [_data(seed, shapes) for seed in range(5)]
    expected = _unreplayed(fn, data, prepares, monkeypatch)
    with getattr(ndd.EvalMode, mode):
        got = [_host(fn(d)) for d in data]
    for g, e in zip(got, expected, strict=True):
        _same(g, e)
    # the first call misses the launch memo, the second records it: the rest are replayed
    assert len(prepares) == 2, prepares


def test_tensors_in_tensors_out(prepares: list[int]) -> None:
    rng = np.random.default_rng(1)
    images = [ndd.as_tensor(rng.integers(0, 256, (5, 7, 3), dtype=np.uint8), layout="HWC").gpu()
              for _ in range(4)]  # fmt: skip
    with ndd.EvalMode.sync_cpu:
        outs = [ndd.flip(t, horizontal=1) for t in images]
    assert len(prepares) == 2
    for out, image in zip(outs, images, strict=True):
        assert isinstance(out, ndd.Tensor)
        np.testing.assert_array_equal(np.asarray(out.cpu()), np.asarray(image.cpu())[:, ::-1])


def test_other_shapes_arguments_or_an_evicted_replay_take_the_normal_path(
        prepares: list[int]) -> None:  # fmt: skip
    with ndd.EvalMode.sync_cpu:
        for _ in range(3):
            ndd.flip(_data(0, RAGGED), horizontal=1)
        assert len(prepares) == 2
        out = ndd.flip(_data(1, UNIFORM), horizontal=1)  # other shapes
        assert len(prepares) == 3
        _same(_host(out), [np.asarray(s)[:, ::-1] for s in _data(1, UNIFORM).cpu()])
        ndd.flip(_data(0, RAGGED), horizontal=0)  # another argument value: another plan
        assert len(prepares) == 4
        launch_memo.clear()  # the entry's replay is gone with the memo's
        out = ndd.flip(_data(2, RAGGED), horizontal=1)
        assert len(prepares) == 5
        _same(_host(out), [np.asarray(s)[:, ::-1] for s in _data(2, RAGGED).cpu()])


def test_limits_changed_since_take_the_normal_path(prepares: list[int]) -> None:
    with ndd.EvalMode.sync_cpu:
        for _ in range(3):
            ndd.flip(_data(0, RAGGED), horizontal=1)
        previous = ndd.set_limits(max_sample_elements=2**40)
        try:
            ndd.flip(_data(0, RAGGED), horizontal=1)
            assert len(prepares) == 3
        finally:
            ndd.set_limits(**previous)


def test_a_profiled_call_is_not_replayed(prepares: list[int]) -> None:
    with ndd.EvalMode.sync_cpu:
        for _ in range(3):
            ndd.flip(_data(0, RAGGED), horizontal=1)
        with ndd.profile() as prof:
            ndd.flip(_data(0, RAGGED), horizontal=1)
    assert len(prepares) == 3
    assert [r.op for r in prof.records] == ["flip"]


def test_eager_with_a_busy_worker_queues_the_replay(prepares: list[int],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    with ndd.EvalMode.eager:
        for _ in range(3):
            ndd.flip(_data(0, RAGGED), horizontal=1).evaluate()
        monkeypatch.setattr(executor.Worker, "idle", property(lambda self: False))
        out = ndd.flip(_data(3, RAGGED), horizontal=1)
        monkeypatch.undo()
        _same(_host(out), [np.asarray(s)[:, ::-1] for s in _data(3, RAGGED).cpu()])


def test_a_failing_replay_raises_at_the_call_or_the_read(prepares: list[int],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    with ndd.EvalMode.sync_cpu:
        for _ in range(3):
            ndd.flip(_data(0, RAGGED), horizontal=1)

    def broken(self, run, inputs, outputs, draws=None):  # type: ignore[no-untyped-def]
        raise RuntimeError("flip: the device ran out of patience")

    monkeypatch.setattr(_replay.Replay, "replay", broken)
    with ndd.EvalMode.sync_cpu, pytest.raises(RuntimeError, match="ran out of patience"):
        ndd.flip(_data(0, RAGGED), horizontal=1)
    with ndd.EvalMode.eager:
        result = ndd.flip(_data(0, RAGGED), horizontal=1)  # raises nothing here
        with pytest.raises(RuntimeError, match="ran out of patience"):
            result.evaluate()
    monkeypatch.undo()
    with ndd.EvalMode.sync_cpu:  # later calls are unaffected
        out = ndd.flip(_data(4, RAGGED), horizontal=1)
    _same(_host(out), [np.asarray(s)[:, ::-1] for s in _data(4, RAGGED).cpu()])


def _chain(b: ndd.Batch) -> ndd.Batch:
    return ndd.crop_mirror_normalize(ndd.flip(b, horizontal=1), crop=[3, 3], mean=MEAN, std=STD,
                                     dtype=ndd.float32, output_layout="CHW")  # fmt: skip


def test_eager_inputs_still_queued_are_replayed_after_their_producer(
        prepares: list[int], monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """A busy executor queues every call: the second op's input is pending when it is called."""
    data = [_data(seed, RAGGED) for seed in range(5)]
    expected = _unreplayed(_chain, data, prepares, monkeypatch)
    normally: list[int] = []
    real = call_replay._run_normally
    monkeypatch.setattr(call_replay, "_run_normally", lambda *a: normally.append(1) or real(*a))
    with ndd.EvalMode.eager:
        monkeypatch.setattr(executor.Worker, "idle", property(lambda self: False))
        got = []
        for d in data:  # (each read before the next: entries are kept when a run ends)
            got.append(_chain(d))
            got[-1].evaluate()
        monkeypatch.setattr(executor.Worker, "idle", executor.Worker.__dict__["idle"])
        got = [_host(g) for g in got]
    for g, e in zip(got, expected, strict=True):
        _same(g, e)
    assert len(prepares) == 4 and not normally, (prepares, normally)


def test_a_pending_input_laid_out_otherwise_runs_normally(
        prepares: list[int], monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """The layout predicted for a pending input is checked when it is computed."""
    monkeypatch.setattr(launch_memo, "ENABLED", False)
    expected = _host(_chain(_data(7, RAGGED)))
    monkeypatch.setattr(launch_memo, "ENABLED", True)
    plans.PLANS.clear()
    with ndd.EvalMode.sync_cpu:
        for seed in range(3):
            _chain(_data(seed, RAGGED))
    launch = call_replay._launch

    def scattered(*args):  # type: ignore[no-untyped-def]
        outs = launch(*args)
        for storage in outs:
            storage.contiguous = False  # (as a view into a larger buffer would be)
        return outs

    monkeypatch.setattr(call_replay, "_launch", scattered)
    normally: list[int] = []
    real = call_replay._run_normally
    monkeypatch.setattr(call_replay, "_run_normally", lambda *a: normally.append(1) or real(*a))
    with ndd.EvalMode.eager:
        monkeypatch.setattr(executor.Worker, "idle", property(lambda self: False))
        out = _chain(_data(7, RAGGED))
        monkeypatch.setattr(executor.Worker, "idle", executor.Worker.__dict__["idle"])
        _same(_host(out), expected)
    assert normally == [1]


def test_an_empty_batch_never_takes_an_earlier_calls_replay(prepares: list[int]) -> None:
    """A call that launches nothing keeps no entry, even right after a call whose recorded
    replay no whole-call entry took (per-sample flags read from a batch: no kept infer)."""
    images = _data(0, RAGGED)
    empty = images.select([])
    flags = ndd.as_batch([np.array(1, np.int32)] * 3)
    with ndd.EvalMode.sync_cpu:
        for _ in range(4):
            ndd.flip(images, horizontal=flags)  # recorded and replayed by the launch memo
            assert ndd.flip(empty, horizontal=1).batch_size == 0
    kept = [known.calls for plan in plans.PLANS.values() if plan.n == 0
            for known in (plan.infer_memo or {}).values()]  # fmt: skip
    assert kept and not any(kept)


def test_the_launch_memo_switch_turns_whole_call_replay_off(prepares: list[int],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    with ndd.EvalMode.sync_cpu:
        for _ in range(3):
            ndd.flip(_data(0, RAGGED), horizontal=1)
        assert len(prepares) == 2
        monkeypatch.setattr(launch_memo, "ENABLED", False)  # (NDD_TRITON_LAUNCH_MEMO=0)
        ndd.flip(_data(0, RAGGED), horizontal=1)
        assert len(prepares) == 3


def test_a_replayed_resize_keeps_its_tap_tables(prepares: list[int], monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The tap-tables launch (a `table_kernel`) runs when the call is recorded; replays keep its
    tables and launch only the two passes, with the same results on new pixels."""
    from ndd_triton.kernels.gpu._tables import GpuRun

    launched: list[str] = []
    real, real_compiled = GpuRun.launch_device, GpuRun.launch_compiled

    def counted(self, kernel, grid, args, meta):  # type: ignore[no-untyped-def]
        launched.append(kernel.__name__)
        return real(self, kernel, grid, args, meta)

    def counted_compiled(self, kernel, *rest):  # type: ignore[no-untyped-def]
        launched.append(kernel.__name__)  # (on a GPU, replays relaunch the compiled kernel)
        return real_compiled(self, kernel, *rest)

    monkeypatch.setattr(GpuRun, "launch_device", counted)
    monkeypatch.setattr(GpuRun, "launch_compiled", counted_compiled)
    with ndd.EvalMode.sync_cpu:
        for seed in range(3):  # first sight, recorded, replayed
            ndd.resize(_data(seed, RAGGED), size=[5, 6])
        got = []
        for seed in range(3, 6):
            launched.clear()
            got.append(_host(ndd.resize(_data(seed, RAGGED), size=[5, 6])))
            assert launched == ["_resample_axis_kernel"] * 2, launched
    monkeypatch.setattr(launch_memo, "ENABLED", False)
    with ndd.EvalMode.sync_cpu:
        for seed, out in zip(range(3, 6), got, strict=True):
            _same(out, _host(ndd.resize(_data(seed, RAGGED), size=[5, 6])))
