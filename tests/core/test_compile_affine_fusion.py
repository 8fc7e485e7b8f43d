"""Compile mode: a GPU rotate or warp_affine read only by crop_mirror_normalize (through a flip
or not; slices, crops and flips before it) is one pass (`runtime/fusion_affine.py`,
`kernels/gpu/affine_normalize.py`): one launch per batch and the bytes of the ops run one by
one; what it cannot fold runs on its own."""

from __future__ import annotations

import numpy as np
import pytest
from test_compile_fusion import BS, _assert_same, _data, _run
from test_compile_geometry_fusion import MEAN, STD, _groups, _window

import ndd_triton as ndd


def _u(lo: float, hi: float) -> ndd.Batch:
    return ndd.random.uniform(batch_size=BS, range=[lo, hi])


def _coin() -> ndd.Batch:
    return ndd.random.coin_flip(batch_size=BS)


def _launching(prof) -> list[dict[tuple[str, ...], int]]:  # type: ignore[no-untyped-def]
    """Per compiled iteration, the groups that launch kernels (not the random draws)."""
    return [{ops: n for ops, n in groups.items() if n} for groups in _groups(prof)]


def _cmn(x: ndd.Batch, layout: str = "CHW", dtype: str = "float32",
         crop: tuple[int, int] | None = (6, 7)) -> ndd.Batch:  # fmt: skip
    extra = {"crop": crop, "crop_pos_x": _u(0.0, 1.0), "crop_pos_y": _u(0.0, 1.0)} \
        if crop else {}  # fmt: skip
    return ndd.crop_mirror_normalize(x, mean=MEAN, std=STD, output_layout=layout, mirror=_coin(),
                                     dtype=getattr(ndd, dtype), **extra)  # fmt: skip


def _rotate(fill: bool = True, keep_size: bool = False):  # type: ignore[no-untyped-def]
    def body(x: ndd.Batch) -> ndd.Batch:
        kw = {"fill_value": 17.0} if fill else {}
        return ndd.rotate(x, angle=_u(-40.0, 40.0), keep_size=keep_size, **kw)

    return body


def _warp(x: ndd.Batch) -> ndd.Batch:
    """A per-sample shear and shift (the matrix as an argument of host values)."""
    gen = np.random.default_rng(3)
    mats = [np.array([[1.0, gen.uniform(-0.3, 0.3), gen.uniform(-2, 2)],
                      [gen.uniform(-0.2, 0.2), 1.1, gen.uniform(-2, 2)]], np.float32)
            for _ in range(BS)]  # fmt: skip
    return ndd.warp_affine(x, matrix=ndd.as_batch(mats), fill_value=0.0)


@pytest.mark.parametrize(("warp", "flip", "layout", "dtype"), [
    ("rotate", True, "CHW", "float32"), ("rotate_clamp", False, "HWC", "float16"),
    ("warp_affine", True, "HWC", "float32"), ("rotate_keep", False, "CHW", "float32")])
def test_warp_and_normalisation_are_one_pass(warp: str, flip: bool, layout: str,
                                             dtype: str) -> None:  # fmt: skip
    """rotate/warp_affine -> [flip ->] crop_mirror_normalize: one launch per batch, eager
    mode's bytes (fill or clamped taps, a cropped and mirrored window, HWC and CHW)."""
    warp_fn = {"rotate": _rotate(), "rotate_clamp": _rotate(fill=False),
               "rotate_keep": _rotate(keep_size=True), "warp_affine": _warp}[warp]  # fmt: skip

    def body(x: ndd.Batch) -> ndd.Batch:
        x = warp_fn(x)
        if flip:
            x = ndd.flip(x, horizontal=_coin())
        return _cmn(x, layout, dtype, crop=None if warp == "rotate_keep" else (6, 7))

    data = _data(41, np.uint8, big=True)
    eager, _, _ = _run(body, data, "gpu", False)
    compiled, prof, epoch = _run(body, data, "gpu", True)
    _assert_same(eager, compiled)
    chain = (warp.split("_")[0] if warp != "warp_affine" else warp,
             *(("flip",) if flip else ()), "crop_mirror_normalize")  # fmt: skip
    assert {g.kind for g in epoch.session.groups.values()} == {"affine_cmn"}
    for groups in _groups(prof):
        assert groups[chain] == 1, groups
        assert sum(groups.values()) == 1, groups  # (the random draws launch nothing)


@pytest.mark.parametrize("fill", [True, False])
def test_slices_and_flips_before_the_warp_join(fill: bool) -> None:
    """slice -> flip -> rotate -> crop_mirror_normalize: the warp reads the slice's input
    through the window and the flip (its taps at the border of the window see the fill or the
    clamped window edge, not the pixels beyond it): one launch, eager mode's bytes."""

    def body(x: ndd.Batch) -> ndd.Batch:
        anchor, shape = _window()
        x = ndd.flip(ndd.slice(x, anchor, shape), horizontal=_coin(), vertical=_coin())
        x = ndd.rotate(x, angle=_u(-30.0, 30.0), **({"fill_value": 0.0} if fill else {}))
        return _cmn(x, crop=(4, 5))

    data = _data(42, np.uint8, big=True)
    eager, _, _ = _run(body, data, "gpu", False)
    compiled, prof, _ = _run(body, data, "gpu", True)
    _assert_same(eager, compiled)
    for groups in _groups(prof):
        assert groups[("slice", "flip", "rotate", "crop_mirror_normalize")] == 1, groups
        assert sum(groups.values()) == 1, groups


def test_nearest_neighbour_runs_on_its_own() -> None:
    """NN sampling (DALI's coordinates accumulate along the row) is not folded: the warp runs
    on its own, the flip stays folded into the normalisation; eager mode's bytes."""

    def body(x: ndd.Batch) -> ndd.Batch:
        x = ndd.rotate(x, angle=_u(-30.0, 30.0), interp_type=ndd.types.INTERP_NN)
        return _cmn(ndd.flip(x, horizontal=_coin()))

    data = _data(43, np.uint8, big=True)
    eager, _, _ = _run(body, data, "gpu", False)
    compiled, prof, _ = _run(body, data, "gpu", True)
    _assert_same(eager, compiled)
    for groups in _launching(prof):
        assert groups == {("rotate",): 1, ("flip", "crop_mirror_normalize"): 1}, groups


@pytest.mark.parametrize(("fill", "flip", "layout", "dtype"), [
    (True, True, "CHW", "float32"), (False, False, "HWC", "float16")])  # fmt: skip
def test_a_padded_window_is_one_pass(fill: bool, flip: bool, layout: str, dtype: str) -> None:
    """A normalisation window that leaves the warped image (padded by crop_mirror_normalize,
    at per-sample positions, mirrored per sample, a flip folded in or not): still one launch,
    which stores the pad fill beyond the warped image; eager mode's bytes."""

    def body(x: ndd.Batch) -> ndd.Batch:
        x = ndd.rotate(x, angle=_u(-30.0, 30.0), keep_size=True,
                       **({"fill_value": 17.0} if fill else {}))  # fmt: skip
        if flip:
            x = ndd.flip(x, horizontal=_coin())
        return ndd.crop_mirror_normalize(x, mean=MEAN, std=STD, crop=(40, 40),
                                         crop_pos_x=_u(0.0, 1.0), crop_pos_y=_u(0.0, 1.0),
                                         out_of_bounds_policy="pad", mirror=_coin(),
                                         fill_values=[5.0, -6.5, 300.0], output_layout=layout,
                                         dtype=getattr(ndd, dtype))  # fmt: skip

    data = _data(44, np.uint8, big=True)
    eager, _, _ = _run(body, data, "gpu", False)
    compiled, prof, _ = _run(body, data, "gpu", True)
    _assert_same(eager, compiled)
    chain = ("rotate", *(("flip",) if flip else ()), "crop_mirror_normalize")
    for groups in _launching(prof):
        assert groups == {chain: 1}, groups
    fill_px = np.array([5.0, -6.5, 300.0], np.float32).astype(dtype)
    for out in compiled[1:]:
        for sample in out:  # a 40x40 window of an image under 30x30 has fill on a side
            sample = sample if layout == "HWC" else sample.transpose(1, 2, 0)
            border = np.concatenate([sample[0], sample[-1], sample[:, 0], sample[:, -1]])
            assert (border == fill_px).all(axis=1).any()


def test_cpu_keeps_the_warp_and_folds_the_flip() -> None:
    """On the CPU the warp runs as in eager mode; the flip folds into the normalisation."""

    def body(x: ndd.Batch) -> ndd.Batch:
        x = ndd.rotate(x, angle=_u(-30.0, 30.0), fill_value=5.0)
        return _cmn(ndd.flip(x, horizontal=_coin()))

    data = _data(45, np.uint8, big=True)
    eager, _, _ = _run(body, data, "cpu", False)
    compiled, _, epoch = _run(body, data, "cpu", True)
    _assert_same(eager, compiled)
    assert {g.kind for g in epoch.session.groups.values()} == {"flip_cmn"}


@pytest.mark.parametrize("chain", ["flip_rotate", "rotate_flip", "slice_flip_warp_flip"])
def test_warp_with_index_maps_is_one_pass(chain: str) -> None:
    """Without a normalisation, a GPU warp with the slices, crops and flips before it and a
    horizontal flip after it is one launch (affine_geometry: the same pass storing `v` into
    uint8, mirrored by the flip after it), eager mode's bytes."""

    def body(x: ndd.Batch) -> ndd.Batch:
        if chain == "flip_rotate":
            x = ndd.flip(x, horizontal=_coin(), vertical=_coin())
            return ndd.rotate(x, angle=_u(-40.0, 40.0))
        if chain == "rotate_flip":
            return ndd.flip(ndd.rotate(x, angle=_u(-40.0, 40.0), fill_value=3.0),
                            horizontal=_coin())  # fmt: skip
        anchor, shape = _window()
        x = ndd.flip(ndd.slice(x, anchor, shape), vertical=_coin())
        return ndd.flip(_warp(x), horizontal=_coin())

    data = _data(46, np.uint8, big=True)
    eager, _, _ = _run(body, data, "gpu", False)
    compiled, prof, epoch = _run(body, data, "gpu", True)
    _assert_same(eager, compiled)
    assert {g.kind for g in epoch.session.groups.values()} == {"affine_geometry"}
    ops = {"flip_rotate": ("flip", "rotate"), "rotate_flip": ("rotate", "flip"),
           "slice_flip_warp_flip": ("slice", "flip", "warp_affine", "flip")}[chain]  # fmt: skip
    for groups in _launching(prof):
        assert groups == {ops: 1}, groups


def test_a_vertical_flip_after_the_warp_runs_alone() -> None:
    """A vertical flip after the warp is not folded (the pass mirrors columns only): each call
    on its own, eager mode's bytes; on the CPU no warp group at all."""

    def body(x: ndd.Batch) -> ndd.Batch:
        return ndd.flip(ndd.rotate(x, angle=_u(-40.0, 40.0)), horizontal=_coin(),
                        vertical=_coin())  # fmt: skip

    data = _data(47, np.uint8, big=True)
    for backend in ("gpu", "cpu"):
        eager, _, _ = _run(body, data, backend, False)
        compiled, prof, epoch = _run(body, data, backend, True)
        _assert_same(eager, compiled)
        if backend == "cpu":
            assert not epoch.session.groups
            continue
        for groups in _launching(prof):
            assert groups == {("rotate",): 1, ("flip",): 1}, groups


def test_heads_already_grouped_stay_in_their_group() -> None:
    """resize -> flip -> crop -> rotate: the flip is stored by the resize's passes
    (resample_flip), so the warp takes only the crop after it; eager mode's bytes."""

    def body(x: ndd.Batch) -> ndd.Batch:
        x = ndd.flip(ndd.resize(x, size=(12, 14)), horizontal=_coin())
        x = ndd.crop(x, crop=(9, 10), crop_pos_x=_u(0.0, 1.0), crop_pos_y=_u(0.0, 1.0))
        return ndd.rotate(x, angle=_u(-30.0, 30.0), fill_value=1.0)

    data = _data(48, np.uint8, big=True)
    eager, _, _ = _run(body, data, "gpu", False)
    compiled, prof, epoch = _run(body, data, "gpu", True)
    _assert_same(eager, compiled)
    kinds = {(g.kind, len(g.calls)) for g in epoch.session.groups.values()}
    assert kinds == {("resample_flip", 2), ("affine_geometry", 2)}, kinds
    for groups in _launching(prof):
        assert groups[("crop", "rotate")] == 1, groups
