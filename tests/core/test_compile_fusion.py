"""Compile mode's fusion: a traced colour chain runs as one pass (one launch on the GPU, counted
in the interpreter) and gives the bytes of the ops run one by one, on both backends."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ndd_triton as ndd
from ndd_triton.runtime.compiled import CompileFallbackWarning

BS = 3


def _data(seed: int, dtype: type, big: bool = False, iterations: int = 3) -> list[list[np.ndarray]]:
    gen = np.random.default_rng(seed)
    lo, hi = (8, 30) if big else (3, 8)

    def image() -> np.ndarray:
        shape = (int(gen.integers(lo, hi)), int(gen.integers(lo, hi)), 3)
        if dtype == np.float32:
            return (gen.random(shape) * 300 - 20).astype(np.float32)
        return gen.integers(0, 256, shape).astype(dtype)

    return [[image() for _ in range(BS)] for _ in range(iterations)]


def _u(lo: float, hi: float) -> ndd.Batch:
    return ndd.random.uniform(batch_size=BS, range=[lo, hi])


def _color4(x: ndd.Batch) -> ndd.Batch:
    x = ndd.brightness(x, brightness=_u(0.6, 1.4), brightness_shift=0.05)
    x = ndd.contrast(x, contrast=_u(0.5, 1.5))
    x = ndd.hue(x, hue=_u(-45.0, 45.0))
    return ndd.saturation(x, saturation=_u(0.2, 1.8))


def _twist_to_int16(x: ndd.Batch) -> ndd.Batch:
    x = ndd.color_twist(x, brightness=1.2, contrast=0.8, hue=20.0, saturation=1.1)
    x = ndd.brightness_contrast(x, brightness=_u(0.9, 1.1), contrast=1.3)
    return ndd.hsv(x, hue=_u(-10.0, 10.0), saturation=1.2, value=0.9, dtype=ndd.int16)


def _via_float16(x: ndd.Batch) -> ndd.Batch:
    x = ndd.brightness(x, brightness=1.3, dtype=ndd.float16)  # float16 is not exact in registers
    return ndd.contrast(x, contrast=_u(0.5, 1.5), dtype=ndd.uint8)


def _run(body, data, device: str, compile_: bool):
    ndd.random.set_seed(99)
    batches = [ndd.as_batch(d, layout="HWC", device=device) for d in data]
    epoch = ndd.ExternalSource(iter(batches), device=device).captured(BS) if compile_ \
        else iter(batches)  # fmt: skip
    outs = []
    with ndd.profile() as prof, warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        for x in epoch:
            y = body(x)  # a batch, or a list of them (one list of samples each)
            outs.append([[np.array(s) for s in b.cpu()] for b in y] if isinstance(y, list) else
                        [np.array(s) for s in y.cpu()])  # fmt: skip
    return outs, prof, epoch


def _assert_same(a, b) -> None:
    for xa, xb in zip(a, b, strict=True):
        for sa, sb in zip(xa, xb, strict=True):
            assert sa.dtype == sb.dtype
            assert sa.shape == sb.shape
            assert np.array_equal(sa, sb, equal_nan=True), np.abs(
                sa.astype(np.float64) - sb.astype(np.float64)).max()  # fmt: skip


CASES = [(_color4, np.uint8, 4, True), (_color4, np.float32, 4, True),
         (_twist_to_int16, np.uint8, 3, True), (_via_float16, np.uint8, 2, False)]  # fmt: skip


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0].__name__}-{np.dtype(c[1]).name}")
def test_color_chain_fused_bit_identical(case, backend: str) -> None:
    body, dtype, ops, one_pass = case
    data = _data(ops, dtype, big=backend == "cpu")
    eager, _, _ = _run(body, data, backend, False)
    compiled, prof, epoch = _run(body, data, backend, True)
    _assert_same(eager, compiled)
    session = epoch.session
    groups = {g.calls for g in session.groups.values()}
    assert len(groups) == 1  # the chain is one group
    assert len(next(iter(groups))) == ops
    runs = len(session.program) - ops + 1 if one_pass or backend == "cpu" else len(session.program)
    assert [len(it.groups) for it in prof.compiled] == [runs] * 2  # a group per pass
    for it in prof.compiled:
        fused = [g for g in it.groups if len(g.ops) > 1]
        # the CPU runs any chain sample by sample through the ops' own kernels
        assert len(fused) == (1 if one_pass or backend == "cpu" else 0)
        if backend == "gpu":
            assert it.gpu_launches == (1 if one_pass else ops)  # the whole chain: one launch


@pytest.mark.parametrize("case", CASES[:3], ids=lambda c: f"{c[0].__name__}-{np.dtype(c[1]).name}")
def test_color_chain_on_whole_tiles(case) -> None:
    """Images of 40-60 x 40-60 pixels: the chain kernel's whole (unmasked) tiles of 1024
    pixels besides the partial ones, eager mode's bytes in one launch."""
    body, dtype, _, _ = case
    gen = np.random.default_rng(31)
    scale = 300 if dtype == np.float32 else 256
    data = [[(gen.random((int(gen.integers(40, 60)), int(gen.integers(40, 60)), 3)) * scale
              ).astype(dtype) for _ in range(BS)] for _ in range(3)]  # fmt: skip
    eager, _, _ = _run(body, data, "gpu", False)
    compiled, prof, _ = _run(body, data, "gpu", True)
    _assert_same(eager, compiled)
    assert [it.gpu_launches for it in prof.compiled] == [1, 1]


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_reading_an_intermediate_computes_it(backend: str) -> None:
    data = _data(7, np.uint8)
    seen: list = []

    def body(x: ndd.Batch) -> ndd.Batch:
        y = ndd.brightness(x, brightness=_u(0.5, 1.5))
        z = ndd.contrast(y, contrast=1.4)
        seen.append([np.array(s) for s in y.cpu()])  # read after the chain was issued
        return z

    eager, _, _ = _run(body, data, backend, False)
    eager_mid, seen[:] = list(seen), []
    compiled, prof, _ = _run(body, data, backend, True)
    _assert_same(eager, compiled)
    _assert_same(eager_mid, seen)
    assert all(any(len(g.ops) == 2 for g in it.groups) for it in prof.compiled)


def test_shared_intermediate_is_not_fused() -> None:
    data = _data(8, np.uint8)

    def body(x: ndd.Batch) -> ndd.Batch:
        y = ndd.brightness(x, brightness=1.2)
        return ndd.cat(ndd.contrast(y, contrast=1.4), ndd.hue(y, hue=10.0), axis=1)

    eager, _, _ = _run(body, data, "cpu", False)
    compiled, _, epoch = _run(body, data, "cpu", True)
    _assert_same(eager, compiled)
    assert epoch.session.groups == {}


def _rn50(x: ndd.Batch) -> ndd.Batch:
    x = ndd.random_resized_crop(x, size=(6, 7))
    x = ndd.flip(x, horizontal=ndd.random.coin_flip(batch_size=BS))
    return ndd.crop_mirror_normalize(x, mean=[1.0, 2.0, 3.0], std=[3.0, 2.0, 1.0],
                                     mirror=ndd.random.coin_flip(batch_size=BS), crop=(5, 4),
                                     crop_pos_x=_u(0.0, 1.0), crop_pos_y=_u(0.0, 1.0))  # fmt: skip


def _vertical(x: ndd.Batch) -> ndd.Batch:
    x = ndd.flip(x, horizontal=ndd.random.coin_flip(batch_size=BS), vertical=1)
    return ndd.crop_mirror_normalize(x, mean=[1.0, 2.0, 3.0], std=[3.0, 2.0, 1.0],
                                     dtype=ndd.float16, output_layout="HWC")  # fmt: skip


def _padded(x: ndd.Batch) -> ndd.Batch:
    x = ndd.flip(x, horizontal=1)
    return ndd.crop_mirror_normalize(x, crop=(4, 40), crop_pos_x=0.0,
                                     out_of_bounds_policy="pad")  # fmt: skip


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize("body", [_rn50, _vertical, _padded], ids=lambda b: b.__name__)
def test_flip_into_crop_mirror_normalize(body, backend: str) -> None:
    """flip read only by crop_mirror_normalize costs no pass: the window and `mirror` are
    mirrored instead (exact, padded windows too: the fill is the same at mirrored positions);
    vertical flips keep the flip."""
    data = _data(11, np.uint8, big=True)
    eager, _, _ = _run(body, data, backend, False)
    compiled, prof, epoch = _run(body, data, backend, True)
    _assert_same(eager, compiled)
    kinds = {g.kind for g in epoch.session.groups.values()}
    assert kinds == ({"resample_cmn"} if body is _rn50 else {"flip_cmn"})
    for it in prof.compiled:
        names = [g.ops for g in it.groups]
        if body is _padded:  # folded: the padded window is mirrored with its fill
            assert ("flip", "crop_mirror_normalize") in names, names
        elif body is not _rn50:  # not folded: the flip runs on its own
            assert ("flip",) in names, names
        elif backend == "cpu":  # no one-pass resample, but the flip is folded into cmn
            groups = {g.ops: g.gpu_launches for g in it.groups}
            assert ("flip", "crop_mirror_normalize") in groups, groups
            assert ("random_resized_crop",) in groups, groups
        else:  # one pass computing only cmn's window (per-sample crop positions, mirrored)
            groups = {g.ops: g.gpu_launches for g in it.groups}
            # the batch in one pass, its LINEAR taps computed in it
            assert groups[("random_resized_crop", "flip", "crop_mirror_normalize")] == 1, groups


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize(("layout", "dtype", "one_launch"), [("CHW", "float32", True),
                                                              ("HWC", "float16", True),
                                                              ("CHW", "uint8", False)])  # fmt: skip
def test_color_chain_into_crop_mirror_normalize(backend: str, layout: str, dtype: str,
                                                one_launch: bool) -> None:  # fmt: skip
    """A colour chain read only by crop_mirror_normalize (no crop, no mirror) ends in its
    normalising store: one launch on the GPU for float outputs, the bytes of eager mode."""

    def body(x: ndd.Batch) -> ndd.Batch:
        x = ndd.brightness(x, brightness=_u(0.5, 1.5))
        x = ndd.hue(x, hue=_u(-30.0, 30.0))
        return ndd.crop_mirror_normalize(x, mean=[100.0, 120.0, 130.0], std=[50.0, 60.0, 70.0],
                                         output_layout=layout,
                                         dtype=getattr(ndd, dtype))  # fmt: skip

    data = _data(12, np.uint8, big=backend == "cpu")
    eager, _, _ = _run(body, data, backend, False)
    compiled, prof, epoch = _run(body, data, backend, True)
    _assert_same(eager, compiled)
    assert {g.kind for g in epoch.session.groups.values()} == {"color_cmn"}
    for it in prof.compiled:
        fused = ("brightness", "hue", "crop_mirror_normalize") in [g.ops for g in it.groups]
        assert fused == (one_launch or backend == "cpu")
        if backend == "gpu":
            assert it.gpu_launches == (1 if one_launch else 3)


def _rn50_no_crop(layout: str, dtype: str, flip: bool):
    def body(x: ndd.Batch) -> ndd.Batch:
        x = ndd.random_resized_crop(x, size=(7, 9))  # downscales (antialiased taps)
        if flip:
            x = ndd.flip(x, horizontal=ndd.random.coin_flip(batch_size=BS))
        return ndd.crop_mirror_normalize(x, mean=[123.7, 116.3, 103.5], std=[58.4, 57.1, 57.4],
                                         mirror=ndd.random.coin_flip(batch_size=BS),
                                         output_layout=layout,
                                         dtype=getattr(ndd, dtype))  # fmt: skip

    return body


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize(("layout", "dtype", "flip"), [("CHW", "float32", True),
                                                       ("HWC", "float16", False)])  # fmt: skip
def test_rn50_chain_is_one_pass(backend: str, layout: str, dtype: str, flip: bool) -> None:
    """random_resized_crop -> flip -> crop_mirror_normalize (no crop): one pass per batch on
    the GPU (both resample passes and the normalising, mirrored, CHW store), after one launch
    building the tap tables; on the CPU the resize runs on its own and the flip folds into the
    normalisation; the bytes of eager mode."""
    body = _rn50_no_crop(layout, dtype, flip)
    data = _data(13, np.uint8, big=True)
    eager, _, _ = _run(body, data, backend, False)
    compiled, prof, epoch = _run(body, data, backend, True)
    _assert_same(eager, compiled)
    assert {g.kind for g in epoch.session.groups.values()} == {"resample_cmn"}
    chain = ("random_resized_crop", *(("flip",) if flip else ()), "crop_mirror_normalize")
    for it in prof.compiled:
        names = [g.ops for g in it.groups]
        if backend == "gpu":
            assert chain in names, names
            assert it.gpu_launches == 1  # the whole batch in one pass, taps included
        else:
            assert ("random_resized_crop",) in names, names
            assert (("flip", "crop_mirror_normalize") in names) == flip, names


def test_a_member_run_on_its_own_keeps_its_cpu_stage(monkeypatch) -> None:
    """On the CPU the RN50 chain's random_resized_crop runs on its own beside the folded flip
    + crop_mirror_normalize: it is scheduled with its CPU stage (the pool's sample pipeline),
    as its eager invocation is."""
    from ndd_triton.runtime import fusion

    scheduled: list = []
    schedule = fusion._schedule

    def seen(inv, prep):  # type: ignore[no-untyped-def]
        scheduled.append((inv.name, inv.stage_fn is not None))  # (dropped once it ran)
        return schedule(inv, prep)

    monkeypatch.setattr(fusion, "_schedule", seen)
    data = _data(13, np.uint8, big=True)
    body = _rn50_no_crop("CHW", "float32", True)
    eager, _, _ = _run(body, data, "cpu", False)
    compiled, _, _ = _run(body, data, "cpu", True)
    _assert_same(eager, compiled)
    alone = [staged for name, staged in scheduled if name == "random_resized_crop"]
    assert alone, scheduled
    assert all(alone)


def test_rn50_one_pass_draws_the_windows_on_the_device(monkeypatch) -> None:
    """On the GPU the fused pass draws random_resized_crop's windows itself (no host draws),
    with eager mode's bytes; where its one-launch form does not apply (taps beyond
    `MAX_INLINE_TAPS`) the windows are drawn on the host, with the same bytes."""
    from ndd_triton.kernels.gpu import resample_normalize
    from ndd_triton.ops import random_resized_crop as rrc

    host_draws: list[int] = []
    real = rrc._windows  # (what the host's `draw_values` calls)
    monkeypatch.setattr(rrc, "_windows", lambda *a: host_draws.append(1) or real(*a))
    body = _rn50_no_crop("CHW", "float32", True)
    data = _data(21, np.uint8, big=True)
    eager, _, _ = _run(body, data, "gpu", False)
    compiled, prof, _ = _run(body, data, "gpu", True)
    _assert_same(eager, compiled)
    assert not host_draws and all(it.gpu_launches == 1 for it in prof.compiled)
    monkeypatch.setattr(resample_normalize, "MAX_INLINE_TAPS", 2)
    compiled, prof, _ = _run(body, data, "gpu", True)
    _assert_same(eager, compiled)
    assert len(host_draws) >= len(data) - 1  # (the traced first iteration ran eagerly)


def _validation(layout: str, dtype: str, mirror: bool, policy: str):
    def body(x: ndd.Batch) -> ndd.Batch:
        x = ndd.resize(x, resize_shorter=9)  # the validation recipe: shorter side, centre crop
        return ndd.crop_mirror_normalize(x, crop=(7, 6), mean=[123.7, 116.3, 103.5],
                                         std=[58.4, 57.1, 57.4], output_layout=layout,
                                         mirror=ndd.random.coin_flip(batch_size=BS) if mirror
                                         else 0, dtype=getattr(ndd, dtype),
                                         out_of_bounds_policy=policy)  # fmt: skip

    return body


@pytest.mark.parametrize(("layout", "dtype", "mirror", "policy", "one_pass"), [
    ("CHW", "float32", False, "error", True), ("HWC", "float16", True, "error", True),
    ("CHW", "float32", True, "pad", True)])  # fmt: skip
def test_resize_then_centre_crop_is_one_pass(layout: str, dtype: str, mirror: bool,
                                             policy: str, one_pass: bool) -> None:  # fmt: skip
    """resize -> crop_mirror_normalize with a crop inside the resized image (the validation
    recipe): one pass on the GPU computing only the window, the bytes of eager mode."""
    body = _validation(layout, dtype, mirror, policy)
    data = _data(14, np.uint8, big=True)
    eager, _, _ = _run(body, data, "gpu", False)
    compiled, prof, epoch = _run(body, data, "gpu", True)
    _assert_same(eager, compiled)
    assert {g.kind for g in epoch.session.groups.values()} == {"resample_cmn"}
    for it in prof.compiled:
        groups = {g.ops: g.gpu_launches for g in it.groups}
        assert groups.get(("resize", "crop_mirror_normalize")) == (1 if one_pass else None), \
            groups  # fmt: skip


def _padded_window(interp: str, flip: bool, layout: str, dtype: str, random: bool):
    def body(x: ndd.Batch) -> ndd.Batch:
        kind = getattr(ndd.types, f"INTERP_{interp}")
        x = ndd.random_resized_crop(x, size=(5, 6), interp_type=kind) if random else \
            ndd.resize(x, resize_longer=6, interp_type=kind)  # fmt: skip
        if flip:
            x = ndd.flip(x, horizontal=ndd.random.coin_flip(batch_size=BS))
        # a window larger than the image on both axes, at random positions: fill on 1-3 sides
        return ndd.crop_mirror_normalize(x, crop=(7, 8), out_of_bounds_policy="pad",
                                         fill_values=[9.0, -8.5, 300.0], mean=[1.0, 2.0, 3.0],
                                         std=[3.0, 2.0, 1.0], crop_pos_x=_u(0.0, 1.0),
                                         crop_pos_y=_u(0.0, 1.0), output_layout=layout,
                                         mirror=ndd.random.coin_flip(batch_size=BS),
                                         dtype=getattr(ndd, dtype))  # fmt: skip

    return body


@pytest.mark.parametrize(("interp", "flip", "layout", "dtype", "random"), [
    ("LINEAR", False, "CHW", "float32", False), ("LINEAR", True, "HWC", "float16", True),
    ("CUBIC", True, "CHW", "float32", False), ("LINEAR", True, "CHW", "float32", False)],
    ids=["linear", "rrc-flip-f16", "cubic-tables-flip", "letterbox-flip"])  # fmt: skip
def test_a_padded_window_beyond_the_resized_image_is_one_pass(interp: str, flip: bool,
                                                              layout: str, dtype: str,
                                                              random: bool) -> None:  # fmt: skip
    """A crop larger than the resized image, padded by crop_mirror_normalize (a letterbox:
    `resize(resize_longer=S)` then an SxS crop with fill): still one pass on the GPU, which
    stores the fill beyond the resized image (taps computed in the pass, or host tables for a
    cubic filter; a flip folded in, mirrored per sample); the bytes of eager mode."""
    body = _padded_window(interp, flip, layout, dtype, random)
    data = _data(15, np.uint8, big=True)
    eager, _, _ = _run(body, data, "gpu", False)
    compiled, prof, _ = _run(body, data, "gpu", True)
    _assert_same(eager, compiled)
    chain = ("random_resized_crop" if random else "resize", *(("flip",) if flip else ()),
             "crop_mirror_normalize")  # fmt: skip
    fill = np.array([9.0, -8.5, 300.0], np.float32).astype(dtype)
    for it, out in zip(prof.compiled, compiled[1:], strict=True):
        groups = {g.ops: g.gpu_launches for g in it.groups}
        assert groups.get(chain) == 1, groups
        for sample in out:  # every sample has fill on a side (7x8 window of a <= 6x6 image)
            sample = sample if layout == "HWC" else sample.transpose(1, 2, 0)
            border = np.concatenate([sample[0], sample[-1], sample[:, 0], sample[:, -1]])
            assert (border == fill).all(axis=1).any()
