"""Batched host-side tables and argument math of the GPU path against the per-sample formulas
they replace (bit for bit)."""

from __future__ import annotations

import numpy as np
import pytest

import ndd_triton as ndd
from ndd_triton.kernels._resample import (
    CUBIC,
    GAUSSIAN,
    LANCZOS3,
    LINEAR,
    NN,
    TRIANGULAR,
    AxisPlan,
    _axis_tables,
    axis_table,
    axis_tables,
)


def _per_sample(plans: list[AxisPlan]) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The concatenation the GPU resize built before `axis_tables`: one `axis_table` per sample,
    zero-padded to the most taps."""
    tables = [axis_table(p) for p in plans]
    taps = max((t.taps for t in tables), default=1)
    index = np.zeros((sum(p.n_out for p in plans), taps), np.int32)
    weight = np.zeros(index.shape, np.float32)
    first = np.zeros(len(plans), np.int64)
    row = 0
    for k, t in enumerate(tables):
        first[k] = row
        index[row:row + len(t.index), :t.taps] = t.index
        weight[row:row + len(t.index), :t.taps] = t.weight
        row += len(t.index)
    return index, weight, first, taps


def _random_plans(rng: np.random.Generator, n: int, interps: list[int], antialias: bool,
                  innermost: bool) -> list[AxisPlan]:  # fmt: skip
    plans = []
    for _ in range(n):
        n_in = int(rng.integers(1, 700))
        n_out = int(rng.integers(0, 300)) if rng.random() < 0.9 else int(rng.integers(0, 3))
        lo, hi = sorted(rng.uniform(-0.3 * n_in, 1.3 * n_in, 2))
        if rng.random() < 0.3:
            lo, hi = 0.0, float(n_in)
        if rng.random() < 0.2:
            lo, hi = hi, lo  # mirrored
        step = (hi - lo) / max(n_out, 1) if rng.random() < 0.8 else float(rng.choice([0.5, 2.0]))
        plans.append(AxisPlan(n_in, n_out, float(lo), float(step), int(rng.choice(interps)),
                              antialias, innermost))  # fmt: skip
    return plans


@pytest.mark.parametrize("interps", [[LINEAR], [NN], [CUBIC], [LANCZOS3], [TRIANGULAR],
                                     [GAUSSIAN], [NN, LINEAR, CUBIC, LANCZOS3, TRIANGULAR,
                                                  GAUSSIAN]])  # fmt: skip
@pytest.mark.parametrize("antialias", [True, False])
@pytest.mark.parametrize("innermost", [True, False])
def test_axis_tables_match_per_sample_tables(interps: list[int], antialias: bool,
                                             innermost: bool) -> None:  # fmt: skip
    rng = np.random.default_rng(sum(interps) * 4 + 2 * antialias + innermost)
    for n in (0, 1, 2, 7, 33):
        plans = _random_plans(rng, n, interps, antialias, innermost)
        want = _per_sample(plans)
        args = (np.array([p.n_in for p in plans], np.int64),
                np.array([p.n_out for p in plans], np.int64),
                np.array([p.origin for p in plans], np.float64),
                np.array([p.step for p in plans], np.float64),
                np.array([p.interp for p in plans], np.int64), antialias, innermost)
        # the public entry (a few samples: per-sample tables) and the batched builder itself
        for got in (axis_tables(*args), _axis_tables(*args)):
            assert got[3] == want[3]
            np.testing.assert_array_equal(got[2], want[2])
            np.testing.assert_array_equal(got[0], want[0])
            assert got[1].dtype == np.float32
            np.testing.assert_array_equal(got[1].view(np.int32), want[1].view(np.int32))


@pytest.mark.parametrize("mode", ["default", "stretch", "not_larger", "not_smaller"])
@pytest.mark.parametrize("d", [1, 2, 3])
def test_float_sizes_match_per_sample(mode: str, d: int) -> None:
    from ndd_triton.ops._resize_params import _float_sizes, float_sizes

    rng = np.random.default_rng(d * 10 + len(mode))
    for n in (0, 1, 5, 64):
        in_ext = rng.integers(1, 900, (n, d)).astype(np.float64)
        in_ext[rng.random((n, d)) < 0.1] += rng.random() * 0.75  # fractional ROIs
        req = np.round(rng.uniform(1, 500, (n, d)) * 4) / 4  # .25, .5, .75 requests too
        req[rng.random((n, d)) < 0.4] = 0.0  # missing extents
        for max_size in (None, np.full(d, 300.0), rng.choice([0.0, 250.0, 90.5], d)):
            want = np.stack([_float_sizes(req[i], in_ext[i], mode, max_size)
                             for i in range(n)]) if n else np.zeros((0, d))  # fmt: skip
            got = float_sizes(req, in_ext, mode, max_size)
            np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))


def test_rotated_canvases_match_per_sample() -> None:
    from ndd_triton.ops._affine import rotated_canvas, rotated_canvases

    rng = np.random.default_rng(5)
    for n in (0, 1, 3, 64):
        hw = rng.integers(1, 800, (n, 2))
        angles = [rng.uniform(-720, 720, n), np.full(n, 10.0),
                  rng.choice([0.0, 45.0, 90.0, 135.0, 180.0, 225.0, 270.0, 315.0, -45.0], n),
                  np.round(rng.uniform(-360, 360, n), 1)]  # fmt: skip
        for angle in angles:
            want = np.array([rotated_canvas(float(a), int(h), int(w))
                             for a, (h, w) in zip(angle, hw, strict=True)],
                            np.int64).reshape(-1, 2)  # fmt: skip
            np.testing.assert_array_equal(rotated_canvases(angle, hw), want)


def test_crop_windows_of_array_arguments_match_per_sample_rows() -> None:
    # `crop` as one [N, k] array takes the array path; the same values as a ragged (object)
    # array take the per-sample loop: the windows must agree.
    from ndd_triton.core.dtype import uint8
    from ndd_triton.ops import crop as crop_op
    from ndd_triton.ops.schema import Call, InputMeta

    rng = np.random.default_rng(11)
    for layout, d in (("HWC", 2), ("DHWC", 3)):
        for k in {1, 2, d}:
            n = 9
            shapes = np.concatenate([rng.integers(5, 60, (n, d)), np.full((n, 1), 3)], axis=1)
            values = np.round(rng.uniform(1, 40, (n, k)), 2)
            pos = rng.uniform(0, 1, n)
            results = []
            ragged = np.array([*values, None], object)[:-1]  # per-sample rows: the loop
            for crop_value in (values, ragged):
                call = Call(crop_op.schema, n, "gpu", [InputMeta(uint8, layout, shapes)],
                            {"crop": crop_value, "crop_pos_x": pos, "crop_pos_y": pos[::-1],
                             "crop_pos_z": pos, "rounding": "round",
                             "out_of_bounds_policy": "pad"})  # fmt: skip
                ext = crop_op.spatial_extents(call, layout)
                results.append(crop_op.crop_windows(call, layout, ext))
            for got, want in zip(results[0], results[1], strict=True):
                np.testing.assert_array_equal(got, want)


def test_upload_packs_tables_in_one_aligned_buffer() -> None:
    import torch

    from ndd_triton.kernels.gpu._tables import GpuRun

    rng = np.random.default_rng(3)
    tables = [rng.integers(-9, 9, (3, 5)), rng.integers(0, 9, 7).astype(np.int32),
              rng.random((2, 3)).astype(np.float32), np.zeros((0, 4), np.int64),
              np.asfortranarray(rng.integers(0, 9, (4, 3))), np.array([True, False])]  # fmt: skip
    views = GpuRun(torch.device("cpu")).upload(*tables)
    base = views[0].data_ptr()
    for table, view in zip(tables, views, strict=True):
        assert tuple(view.shape) == table.shape
        np.testing.assert_array_equal(view.numpy(), table)
        assert (view.data_ptr() - base) % 16 == 0


def test_pinned_ring_reuses_a_region_only_after_its_copy(monkeypatch) -> None:
    # The ring's bookkeeping with stand-ins for pinned memory and CUDA events: a region is
    # written again only after the event recorded behind its copy completed (or was waited).
    import threading

    import torch

    from ndd_triton.kernels.gpu import _tables

    class FakeEvent:
        made: list[FakeEvent] = []

        def __init__(self) -> None:
            self.done, self.waited = False, False
            FakeEvent.made.append(self)

        def record(self, stream: object) -> None:
            pass

        def query(self) -> bool:
            return self.done

        def synchronize(self) -> None:
            self.waited = self.done = True

    monkeypatch.setattr(torch.cuda, "Event", FakeEvent)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda device=None: None)
    ring = object.__new__(_tables._PinnedRing)
    ring.buffer = torch.zeros(256, dtype=torch.uint8)
    ring.host = ring.buffer.numpy()
    ring.pos, ring.pending, ring.lock = 0, [], threading.Lock()
    cpu = torch.device("cpu")
    starts = []
    for k in range(6):  # 6 x 48 bytes: the sixth wraps round onto the first region
        host, token = ring.reserve(48, cpu)
        host[:] = k
        starts.append(token[0])
        assert ring.copy(token, cpu)[:48].eq(k).all()
    assert starts == [0, 48, 96, 144, 192, 0]
    assert FakeEvent.made[0].waited
    assert not any(e.waited for e in FakeEvent.made[1:])
    FakeEvent.made[1].done = True
    ring.reserve(16, cpu)  # completed regions are dropped from the pending list
    assert all(e is None or not e.done or e.waited for _, _, e in ring.pending)
    assert FakeEvent.made[1] not in [e for _, _, e in ring.pending]


def _bounded_plans(rng: np.random.Generator, n: int, antialias: bool) -> list[AxisPlan]:
    """Random triangle-filter plans with at most ~14 taps (interpreter time), edge cases
    included: empty outputs, 1-pixel inputs, mirrored axes, up- and downscales."""
    plans = []
    for i in range(n):
        n_in = int(rng.integers(1, 90)) if i % 5 else 1
        n_out = int(rng.integers(0, 40)) if i % 7 else 0
        scale = float(rng.choice([0.3, 0.5, 1.0, 1.7, 2.0, 3.3, 6.0]))
        lo = float(rng.uniform(-0.3, 0.5) * n_in)
        step = scale * (1.0 if rng.random() < 0.8 else -1.0)
        plans.append(AxisPlan(n_in, n_out, lo, step, int(rng.choice([LINEAR, TRIANGULAR])),
                              antialias, True))  # fmt: skip
    return plans


@pytest.mark.parametrize("antialias", [True, False])
def test_device_triangle_tables_are_the_host_tables(antialias: bool) -> None:
    """The tables `_resample_tables` builds on the GPU (emulated, or CUDA) equal `_axis_tables`'
    bit for bit; its extra columns (an upper bound of the tap count) hold index 0 and weight 0."""
    from ndd_triton.kernels.gpu._resample_tables import device_axis_tables
    from ndd_triton.kernels.gpu._tables import GpuRun

    rng = np.random.default_rng(3 + antialias)
    for n in (1, 2, 9):
        plans = _bounded_plans(rng, n, antialias)
        args = (np.array([p.n_in for p in plans], np.int64),
                np.array([p.n_out for p in plans], np.int64),
                np.array([p.origin for p in plans], np.float64),
                np.array([p.step for p in plans], np.float64),
                np.array([p.interp for p in plans], np.int64))  # fmt: skip
        index, weight, first, taps = _axis_tables(*args, antialias, True)
        got = device_axis_tables(GpuRun(ndd.Device("gpu").torch_device), *args, antialias)
        assert got is not None
        d_index, d_weight, d_first, d_taps = got
        d_index = d_index.cpu().numpy().reshape(-1, d_taps)
        d_weight = d_weight.cpu().numpy().reshape(-1, d_taps)
        assert d_taps >= taps
        np.testing.assert_array_equal(d_first, first)
        np.testing.assert_array_equal(d_index[:, :taps], index)
        np.testing.assert_array_equal(d_weight[:, :taps].view(np.int32), weight.view(np.int32))
        assert not d_index[:, taps:].any()
        assert not d_weight[:, taps:].any()


def test_device_tables_leave_other_filters_to_the_host() -> None:
    from ndd_triton.kernels.gpu._resample_tables import device_axis_tables
    from ndd_triton.kernels.gpu._tables import GpuRun

    run = GpuRun(ndd.Device("gpu").torch_device)
    one = (np.array([50]), np.array([10]), np.array([0.0]), np.array([5.0]))
    assert device_axis_tables(run, *one, np.array([CUBIC]), True) is None
    assert device_axis_tables(run, *one, np.array([NN]), True) is None
    mixed = (np.array([50, 50]), np.array([10, 10]), np.zeros(2), np.full(2, 5.0))
    assert device_axis_tables(run, *mixed, np.array([LINEAR, GAUSSIAN]), True) is None
    huge = (np.array([9000]), np.array([10]), np.array([0.0]), np.array([900.0]))
    assert device_axis_tables(run, *huge, np.array([LINEAR]), True) is None  # > 128 taps
    assert device_axis_tables(run, *huge, np.array([LINEAR]), False) is not None


def _count_uploads(monkeypatch) -> list[int]:  # type: ignore[no-untyped-def]
    """The number of tables of every `GpuRun.upload` from now on (the launch memo off, so
    that every call runs its kernel function)."""
    from ndd_triton.kernels.gpu._tables import GpuRun
    from ndd_triton.runtime import launch_memo

    monkeypatch.setattr(launch_memo, "ENABLED", False)
    uploads: list[int] = []
    real = GpuRun.upload

    def counted(self, *tables):  # type: ignore[no-untyped-def]
        uploads.append(len(tables))
        return real(self, *tables)

    monkeypatch.setattr(GpuRun, "upload", counted)
    return uploads


def test_resample_calls_upload_their_host_tables_once(monkeypatch) -> None:
    """A GPU resize or random_resized_crop (2 passes, and the tables launch of the triangle
    filters) and compile mode's fused resample + normalise pass copy all host tables of the
    call to the device in one upload, whichever builds the taps (device or host tables).
    random_resized_crop, which draws its windows on the device, passes its RNG position as
    kernel arguments (`GpuRun.launch_drawing`): no upload of its own."""
    uploads = _count_uploads(monkeypatch)
    gen = np.random.default_rng(8)
    images = [gen.integers(0, 256, (int(gen.integers(9, 20)), int(gen.integers(9, 20)), 3),
                           dtype=np.uint8) for _ in range(3)]  # fmt: skip
    batch = ndd.as_batch(images, layout="HWC", device="gpu")
    calls = [lambda: ndd.resize(batch, size=[7, 5]),
             lambda: ndd.resize(batch, size=[7, 5], interp_type=ndd.types.INTERP_CUBIC),
             lambda: ndd.random_resized_crop(batch, size=[6, 4]),
             lambda: ndd.random_resized_crop(batch, size=[6, 4],
                                             interp_type=ndd.types.INTERP_CUBIC)]  # fmt: skip
    with ndd.EvalMode.sync_full:
        for k, call in enumerate(calls):
            uploads.clear()
            with ndd.profile() as prof:
                call().evaluate()
            assert len(uploads) == 1, uploads
            assert uploads[0] >= 4  # both passes' sample and tile-start tables at least
            assert prof.records[-1].gpu_launches in (2, 3)  # (tables,) W pass, H pass
    from ndd_triton.kernels.gpu import resample_normalize

    fused: list[int] = []
    launch = resample_normalize.launch_resample_normalize

    def one_pass(*args, **kwargs):  # type: ignore[no-untyped-def]
        before = len(uploads)
        launch(*args, **kwargs)
        fused.append(len(uploads) - before)

    monkeypatch.setattr(resample_normalize, "launch_resample_normalize", one_pass)
    for interp in (ndd.types.INTERP_LINEAR, ndd.types.INTERP_CUBIC):
        source = ndd.ExternalSource(iter([batch] * 3), device="gpu").captured(3)
        for x in source:
            ndd.crop_mirror_normalize(ndd.random_resized_crop(x, size=(6, 8), interp_type=interp),
                                      mean=[1.0, 2.0, 3.0]).evaluate()  # fmt: skip
    assert fused == [1, 1, 1, 1], fused  # two compiled iterations per epoch, one upload each


def test_two_launch_calls_upload_their_host_tables_once(monkeypatch) -> None:
    """normalize (statistics + output launches) and the GPU spectrogram (frames, torch.fft,
    power) copy their host tables to the device once per call."""
    uploads = _count_uploads(monkeypatch)
    gen = np.random.default_rng(4)
    images = ndd.as_batch([gen.random((int(gen.integers(2, 6)), 5), dtype=np.float32)
                           for _ in range(3)], device="gpu")  # fmt: skip
    signals = ndd.as_batch([gen.random(int(gen.integers(40, 90)), dtype=np.float32)
                            for _ in range(3)], device="gpu")  # fmt: skip
    calls = {"normalize (statistics)": lambda: ndd.normalize(images, axes=[0]),
             "normalize (given)": lambda: ndd.normalize(images, axes=[0], mean=0.5, stddev=2.0),
             "spectrogram": lambda: ndd.spectrogram(signals, nfft=16, window_length=12,
                                                    window_step=4)}  # fmt: skip
    with ndd.EvalMode.sync_full:
        for name, call in calls.items():
            uploads.clear()
            with ndd.profile() as prof:
                call().evaluate()
            assert len(uploads) == 1, (name, uploads)
            assert prof.records[-1].gpu_launches == (1 if "given" in name else 2), name
