"""random_resized_crop's per-call draws (`OpSchema.draws`): windows drawn after infer, on the
host (`_draw_values`) or by the GPU kernel (`draws_on_device`), the same for a seed on every
backend and path, and repeated GPU calls replayed whole with their own RNG positions."""

from __future__ import annotations

import numpy as np
import pytest

import ndd_triton as ndd
from ndd_triton.ops import random_resized_crop as rrc_op
from ndd_triton.runtime import launch_memo

SHAPES = [(13, 17), (20, 9), (11, 11), (5, 30), (30, 4)]


def _images(seed: int = 3, shapes: list[tuple[int, int]] = SHAPES) -> list[np.ndarray]:
    gen = np.random.default_rng(seed)
    return [gen.integers(0, 256, (h, w, 3), dtype=np.uint8) for h, w in shapes]


def _arrays(batch) -> list[np.ndarray]:  # type: ignore[no-untyped-def]
    return [np.asarray(t) for t in batch.cpu()]


def _reference(images: list[np.ndarray], rng: ndd.random.RNG, device: str, **kw):  # type: ignore[no-untyped-def]
    """The crop as a resize of each reference window (drawn as infer used to draw them:
    `take_uniform` of `num_attempts * 4` float64 values per sample), and the windows."""
    n, attempts = len(images), kw.get("num_attempts", 10)
    draws = rng.take_uniform(n * attempts * 4, np.float64).reshape(n, attempts, 4)
    area = tuple(kw.get("random_area", (0.08, 1.0)))
    ratio = tuple(kw.get("random_aspect_ratio", (0.75, 4.0 / 3.0)))
    extents = np.array([im.shape[:2] for im in images])
    win = rrc_op._windows(extents, draws, area, ratio)  # type: ignore[arg-type]
    batch = ndd.as_batch(images, layout="HWC", device=device)
    extra = {k: v for k, v in kw.items()
             if k not in ("num_attempts", "random_area", "random_aspect_ratio")}  # fmt: skip
    out = ndd.resize(batch, roi_start=ndd.as_batch([w[:2].astype(np.float32) for w in win]),
                     roi_end=ndd.as_batch([(w[:2] + w[2:]).astype(np.float32) for w in win]),
                     **extra)  # fmt: skip
    return _arrays(out), win


CASES = [
    dict(size=[7, 6]),
    dict(size=[9, 25], antialias=False, num_attempts=3),
    dict(size=[4, 4], dtype=ndd.float32, random_area=[0.3, 0.5],
         random_aspect_ratio=[0.2, 5.0]),  # fmt: skip
    # nothing fits (a wide window of almost the whole area): the centred fallback window
    dict(size=[5, 8], random_area=[0.95, 1.0], random_aspect_ratio=[3.0, 4.0], num_attempts=2),
    dict(size=[6, 6], interp_type=ndd.types.INTERP_TRIANGULAR, num_attempts=17),
    dict(size=[3, 5], num_attempts=1),
]


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_windows_are_the_draws_that_infer_used_to_take(device: str, case: int) -> None:
    kw = CASES[case]
    images = _images()
    rng, ref_rng = ndd.random.RNG(seed=11 + case), ndd.random.RNG(seed=11 + case)
    with ndd.EvalMode.sync_cpu:
        for _ in range(3):  # first sight, infer memo, launch memo / whole-call replay
            got = _arrays(ndd.random_resized_crop(
                ndd.as_batch(images, layout="HWC", device=device), rng=rng, **kw))
            want, _ = _reference(images, ref_rng, device, **kw)
            for g, w in zip(got, want, strict=True):
                np.testing.assert_array_equal(g, w)
                assert g.dtype == w.dtype
            assert str(rng.state) == str(ref_rng.state)


def test_gpu_windows_drawn_on_the_device_match_the_host_path(monkeypatch) -> None:
    """Device-drawn windows and tables give the bits of the host-drawn ones (the emulated gpu
    evaluates float64 like NumPy), eager and sync, ragged batch, replayed calls included."""
    images = _images(5, [(31, 17), (8, 40), (12, 12), (50, 9)])
    batch = ndd.as_batch(images, layout="HWC", device="gpu")

    def run(on_device: bool, mode) -> list[list[np.ndarray]]:  # type: ignore[no-untyped-def]
        launch_memo.clear()
        if not on_device:
            monkeypatch.setattr(rrc_op, "_device_windows", lambda *a: False)
        rng = ndd.random.RNG(seed=99)
        outs = []
        with mode:
            for k in range(6):
                size = [6, 5] if k % 2 else [3, 9]
                outs.append(_arrays(ndd.random_resized_crop(batch, size=size, rng=rng)))
        monkeypatch.undo()
        outs.append([np.array(str(rng.state))])
        return outs

    for mode in (ndd.EvalMode.sync_cpu, ndd.EvalMode.eager):
        device, host = run(True, mode), run(False, mode)
        for a, b in zip(device, host, strict=True):
            for x, y in zip(a, b, strict=True):
                np.testing.assert_array_equal(x, y)


def test_repeated_gpu_calls_are_replayed_with_their_own_draws(monkeypatch) -> None:
    """After two calls the launches are replayed (no table building), each call reading its
    own RNG position: results equal those of the same calls with the launch memo off."""
    images = _images(7)
    batch = ndd.as_batch(images, layout="HWC", device="gpu")
    built = []

    def reference(enabled: bool) -> list[list[np.ndarray]]:
        launch_memo.clear()
        monkeypatch.setattr(launch_memo, "ENABLED", enabled)
        rng = ndd.random.RNG(seed=4)
        with ndd.EvalMode.sync_cpu:
            out = [_arrays(ndd.random_resized_crop(batch, size=[5, 7], rng=rng))
                   for _ in range(6)]  # fmt: skip
        return out

    from ndd_triton.kernels.gpu import random_resized_crop as gpu_rrc

    device_tables = gpu_rrc.device_tables

    def counted(call):  # type: ignore[no-untyped-def]
        built.append(call.draw_at)
        return device_tables(call)

    monkeypatch.setattr(gpu_rrc, "device_tables", counted)
    replayed = reference(True)
    assert 1 <= len(built) <= 2, built  # the rest replayed (whole-call or launch memo)
    assert launch_memo.stats["hits"] >= 4
    monkeypatch.setattr(gpu_rrc, "device_tables", device_tables)
    plain = reference(False)
    for a, b in zip(replayed, plain, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)
    assert any(not np.array_equal(replayed[0][0], r[0]) for r in replayed[1:])  # new windows


def test_replays_rewrite_the_recorded_tables_unless_another_replay_holds_them(monkeypatch
                                                                              ) -> None:  # fmt: skip
    """A replay relaunches the tables kernel into the tap tables its recording allocated (one
    scratch allocation per call: the pass's intermediate image); one that finds them taken
    (another thread replaying the same recording at that moment) allocates its own. Both
    give the results of the same calls with the launch memo off."""
    from ndd_triton.kernels.gpu._replay import Replay
    from ndd_triton.kernels.gpu._tables import GpuRun

    batch = ndd.as_batch(_images(11), layout="HWC", device="gpu")
    allocations: list[int] = []
    empty = GpuRun.empty

    def counted(self, numel, dtype):  # type: ignore[no-untyped-def]
        allocations.append(numel)
        return empty(self, numel, dtype)

    def calls(enabled: bool) -> list[list[np.ndarray]]:
        launch_memo.clear()
        monkeypatch.setattr(launch_memo, "ENABLED", enabled)
        rng = ndd.random.RNG(seed=9)
        out = []
        with ndd.EvalMode.sync_cpu:
            for k in range(6):
                if k == 3:  # recorded by now: count the replays' allocations
                    allocations.clear()
                out.append(_arrays(ndd.random_resized_crop(batch, size=[6, 5], rng=rng)))
        return out

    monkeypatch.setattr(GpuRun, "empty", counted)
    replayed = calls(True)
    assert len(allocations) == 3  # the intermediate image only
    assert len(set(allocations)) == 1
    launch = Replay._launch
    kept_seen: list[bool] = []

    def held_elsewhere(self, run, inputs, outputs, draws, kept):  # type: ignore[no-untyped-def]
        kept_seen.append(kept is not None)
        if kept is not None:  # this replay took the buffers: hold them while replaying again
            return self.replay(run, inputs, outputs, draws)
        return launch(self, run, inputs, outputs, draws, kept)

    monkeypatch.setattr(Replay, "_launch", held_elsewhere)
    contended = calls(True)
    assert kept_seen[-2:] == [True, False]  # the inner replay found the buffers taken
    assert len(allocations) == 9  # so it allocated the tables and the image
    monkeypatch.setattr(Replay, "_launch", launch)
    plain = calls(False)
    for got in (replayed, contended):
        for a, b in zip(got, plain, strict=True):
            for x, y in zip(a, b, strict=True):
                np.testing.assert_array_equal(x, y)


def test_other_filters_draw_on_the_host_and_are_not_replayed() -> None:
    images = _images(9)
    rng, ref = ndd.random.RNG(seed=2), ndd.random.RNG(seed=2)
    with ndd.EvalMode.sync_cpu:
        for _ in range(3):
            got = _arrays(ndd.random_resized_crop(
                ndd.as_batch(images, layout="HWC", device="gpu"), size=[6, 6], rng=rng,
                min_filter=ndd.types.INTERP_CUBIC))  # fmt: skip
            want, _ = _reference(images, ref, "gpu", size=[6, 6],
                                 min_filter=ndd.types.INTERP_CUBIC)  # fmt: skip
            for g, w in zip(got, want, strict=True):
                np.testing.assert_array_equal(g, w)


def test_a_failing_call_reserves_no_draws() -> None:
    rng = ndd.random.RNG(seed=1)
    before = str(rng.state)
    batch = ndd.as_batch(_images(), layout="HWC", device="gpu")
    with ndd.EvalMode.sync_cpu, pytest.raises(ValueError, match="random_area"):
        ndd.random_resized_crop(batch, size=[4, 4], random_area=[0.5, 2.0], rng=rng)
    assert str(rng.state) == before


def test_a_failing_eager_replay_keeps_the_error_and_takes_its_draws_once(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from ndd_triton.kernels.gpu import _replay

    images = _images(4)
    batch = ndd.as_batch(images, layout="HWC", device="gpu")
    rng, ref = ndd.random.RNG(seed=8), ndd.random.RNG(seed=8)
    with ndd.EvalMode.sync_cpu:
        for _ in range(3):  # first sight, recorded, replayed
            ndd.random_resized_crop(batch, size=[4, 5], rng=rng).evaluate()
            _reference(images, ref, "gpu", size=[4, 5])

    def broken(self, run, inputs, outputs, draws=None):  # type: ignore[no-untyped-def]
        raise RuntimeError("random_resized_crop: the device ran out of patience")

    monkeypatch.setattr(_replay.Replay, "replay", broken)
    with ndd.EvalMode.eager:
        failed = ndd.random_resized_crop(batch, size=[4, 5], rng=rng)  # raises nothing here
        with pytest.raises(RuntimeError, match="ran out of patience"):
            failed.evaluate()
    monkeypatch.undo()
    _reference(images, ref, "gpu", size=[4, 5])  # the failed call's draws, taken once
    assert str(rng.state) == str(ref.state)
    with ndd.EvalMode.eager:
        got = _arrays(ndd.random_resized_crop(batch, size=[4, 5], rng=rng))
    want, _ = _reference(images, ref, "gpu", size=[4, 5])
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_replays_queued_behind_a_busy_executor_read_their_own_draws(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Eager replays queued on the executor (busy, or an input still being computed) keep the
    draws reserved at their call, in call order."""
    from ndd_triton.runtime import executor

    images = _images(6)
    rng, ref = ndd.random.RNG(seed=31), ndd.random.RNG(seed=31)
    with ndd.EvalMode.eager:
        batch = ndd.as_batch(images, layout="HWC", device="gpu")
        for _ in range(3):
            ndd.random_resized_crop(batch, size=[5, 4], rng=rng).evaluate()
            _reference(images, ref, "gpu", size=[5, 4])
        from ndd_triton.runtime import prepare as _prepare

        prepared: list[str] = []
        real = _prepare.prepare
        monkeypatch.setattr(_prepare, "prepare",
                            lambda schema, *a, **k: prepared.append(schema.name) or
                            real(schema, *a, **k))  # fmt: skip
        monkeypatch.setattr(executor.Worker, "idle", property(lambda self: False))
        outs = [ndd.random_resized_crop(ndd.flip(batch, horizontal=0), size=[5, 4], rng=rng)
                for _ in range(4)]  # fmt: skip
        monkeypatch.undo()
        assert "random_resized_crop" not in prepared, prepared  # replayed whole, queued
        got = [_arrays(o) for o in outs]
    for g in got:
        want, _ = _reference(images, ref, "gpu", size=[5, 4])
        for x, y in zip(g, want, strict=True):
            np.testing.assert_array_equal(x, y)
    assert str(rng.state) == str(ref.state)
