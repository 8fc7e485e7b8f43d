"""Compile mode: slices, crops and flips read only by a resize (the detection recipe's
`slice -> resize -> flip -> crop_mirror_normalize`) join the one-pass resample on the GPU,
which reads the first one's input through their index map (`runtime/fusion_geometry.py`): one
launch per batch and the bytes of the ops run one by one; where a window leaves its image or
a result is read elsewhere, those calls run on their own and the rest stays one pass."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from test_compile_fusion import BS, _assert_same, _data, _run

import ndd_triton as ndd
from ndd_triton.runtime.compiled import CompileFallbackWarning
from ndd_triton.runtime.trace import runs_on_gpu

MEAN, STD = [123.7, 116.3, 103.5], [58.4, 57.1, 57.4]


def _window() -> tuple[ndd.Batch, ndd.Batch]:
    """Relative per-sample windows (x, y first) inside the image."""
    anchor = ndd.random.uniform(batch_size=BS, range=[0.0, 0.3], shape=[2])
    shape = ndd.random.uniform(batch_size=BS, range=[0.5, 0.7], shape=[2])
    return anchor, shape


def _detection(resample: str = "resize", flip: bool = True, layout: str = "CHW",
               dtype: str = "float32", policy: str = "error"):  # fmt: skip
    def body(x: ndd.Batch) -> ndd.Batch:
        anchor, shape = _window()
        if policy == "pad":  # windows reaching past the image's right and bottom edges
            anchor = ndd.random.uniform(batch_size=BS, range=[0.6, 0.7], shape=[2])
        x = ndd.slice(x, anchor, shape, out_of_bounds_policy=policy)
        if resample == "random_resized_crop":
            x = ndd.random_resized_crop(x, size=(6, 5))
        else:  # cubic: the pass reads tap tables built on the host (no taps in the pass)
            x = ndd.resize(x, size=(7, 9), interp_type=ndd.types.INTERP_CUBIC
                           if resample == "resize_cubic" else ndd.types.INTERP_LINEAR)
        if flip:
            x = ndd.flip(x, horizontal=ndd.random.coin_flip(batch_size=BS))
        return ndd.crop_mirror_normalize(x, mean=MEAN, std=STD, output_layout=layout,
                                         mirror=ndd.random.coin_flip(batch_size=BS),
                                         dtype=getattr(ndd, dtype))  # fmt: skip

    return body


def _groups(prof) -> list[dict[tuple[str, ...], int]]:  # type: ignore[no-untyped-def]
    return [{g.ops: g.gpu_launches for g in it.groups} for it in prof.compiled]


@pytest.mark.parametrize(("resample", "flip", "layout", "dtype"), [
    ("resize", True, "CHW", "float32"), ("random_resized_crop", False, "HWC", "float16"),
    ("resize_cubic", True, "HWC", "float32")])
def test_slice_joins_the_one_pass_resample(resample: str, flip: bool, layout: str,
                                           dtype: str) -> None:  # fmt: skip
    """GPU: slice -> resize/random_resized_crop -> [flip ->] crop_mirror_normalize is one
    launch per batch, eager mode's bytes (the windows' offsets and the images' row pitch are
    the pass's source)."""
    body = _detection(resample, flip, layout, dtype)
    data = _data(31, np.uint8, big=True)
    eager, _, _ = _run(body, data, "gpu", False)
    compiled, prof, epoch = _run(body, data, "gpu", True)
    _assert_same(eager, compiled)
    chain = ("slice", resample.removesuffix("_cubic"), *(("flip",) if flip else ()),
             "crop_mirror_normalize")
    assert {len(g.calls) for g in epoch.session.groups.values()} == {len(chain)}
    for groups in _groups(prof):
        assert groups[chain] == 1, groups
        assert sum(groups.values()) == 1, groups  # (the random draws launch nothing)


def test_slice_on_whole_tiles() -> None:
    """Windows of 40-60 px images: the pass's whole (unmasked) column blocks read the windows
    at the right pitch too."""
    gen = np.random.default_rng(5)
    data = [[gen.integers(0, 256, (int(gen.integers(40, 60)), int(gen.integers(40, 60)), 3),
                          dtype=np.uint8) for _ in range(BS)] for _ in range(2)]  # fmt: skip

    def body(x: ndd.Batch) -> ndd.Batch:
        anchor, shape = _window()
        x = ndd.resize(ndd.slice(x, anchor, shape), size=(24, 33))
        return ndd.crop_mirror_normalize(x, mean=MEAN, std=STD, output_layout="HWC")

    eager, _, _ = _run(body, data, "gpu", False)
    compiled, prof, _ = _run(body, data, "gpu", True)
    _assert_same(eager, compiled)
    for groups in _groups(prof):
        assert groups[("slice", "resize", "crop_mirror_normalize")] == 1, groups
        assert sum(groups.values()) == 1, groups


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_a_window_leaving_the_image_runs_the_slice_alone(backend: str) -> None:
    """A padded window (the slice fills) cannot be read in place: the slice runs on its own,
    the resize, flip and normalisation stay one pass on the GPU; the bytes of eager mode."""
    body = _detection(policy="pad")
    data = _data(32, np.uint8, big=True)
    eager, _, _ = _run(body, data, backend, False)
    compiled, prof, _ = _run(body, data, backend, True)
    _assert_same(eager, compiled)
    for groups in _groups(prof):
        assert ("slice",) in groups, groups
        if backend == "gpu":
            assert groups[("resize", "flip", "crop_mirror_normalize")] == 1, groups


def test_a_slice_read_twice_is_not_folded() -> None:
    """A slice whose result something else reads too is computed once, on its own; the
    resize, normalisation and the other reader read it."""

    def body(x: ndd.Batch) -> ndd.Batch:
        anchor, shape = _window()
        s = ndd.slice(x, anchor, shape)
        y = ndd.crop_mirror_normalize(ndd.resize(s, size=(4, 4)), mean=MEAN, std=STD,
                                      output_layout="HWC")
        return y + ndd.cast(ndd.resize(s, size=(4, 4), antialias=False), dtype=ndd.float32)

    data = _data(33, np.uint8, big=True)
    eager, _, _ = _run(body, data, "gpu", False)
    compiled, prof, _ = _run(body, data, "gpu", True)
    _assert_same(eager, compiled)
    for groups in _groups(prof):
        assert ("slice",) in groups, groups


def _u01() -> ndd.Batch:
    return ndd.random.uniform(batch_size=BS, range=[0.0, 1.0])


def _flips(x: ndd.Batch, count: int) -> ndd.Batch:
    for k in range(count):
        coin = ndd.random.coin_flip(batch_size=BS)
        x = ndd.flip(x, horizontal=coin) if k % 2 == 0 else ndd.flip(x, vertical=coin,
                                                                      horizontal=0)
    return x


@pytest.mark.parametrize("heads", ["flip", "crop_flip_slice", "five_flips", "flip_cubic"])
def test_crops_and_flips_before_the_resize_join_the_pass(heads: str) -> None:
    """Flips (horizontal and vertical, per sample), crops and slices in any order before the
    resize: one launch, eager mode's bytes; of five flips the last four join the pass. Cubic:
    the pass form reading host-built tap tables."""

    def body(x: ndd.Batch) -> ndd.Batch:
        if heads.startswith("flip"):
            x = _flips(x, 3 if heads == "flip_cubic" else 1)
        elif heads == "crop_flip_slice":
            x = ndd.crop(x, crop=(7, 6), crop_pos_x=_u01(), crop_pos_y=_u01())  # fmt: skip
            x = _flips(x, 2)
            x = ndd.slice(x, *_window())
        else:
            x = _flips(x, 5)
        if heads == "flip":
            x = ndd.random_resized_crop(x, size=(5, 6))
        else:
            x = ndd.resize(x, size=(6, 4), interp_type=ndd.types.INTERP_CUBIC if heads ==
                           "flip_cubic" else ndd.types.INTERP_LINEAR)  # fmt: skip
        x = ndd.flip(x, horizontal=ndd.random.coin_flip(batch_size=BS))
        return ndd.crop_mirror_normalize(x, mean=MEAN, std=STD, crop=(4, 3),
                                         crop_pos_x=_u01(),
                                         mirror=ndd.random.coin_flip(batch_size=BS))  # fmt: skip

    data = _data(34, np.uint8, big=True)
    eager, _, _ = _run(body, data, "gpu", False)
    compiled, prof, _ = _run(body, data, "gpu", True)
    _assert_same(eager, compiled)
    for groups in _groups(prof):
        launches = sum(groups.values())
        fused = [ops for ops in groups if "crop_mirror_normalize" in ops]
        assert len(fused) == 1, groups
        assert fused[0][-3:] == ("resize", "flip", "crop_mirror_normalize") or \
            fused[0][-3:] == ("random_resized_crop", "flip", "crop_mirror_normalize"), groups
        if heads == "five_flips":  # the first flip on its own
            assert fused[0][:4] == ("flip",) * 4, groups
            assert groups[("flip",)] == 1, groups
            assert launches == 2, groups
        else:
            assert fused[0][0] == heads.split("_")[0], groups
            assert launches == 1, groups


def test_a_call_runs_on_the_gpu_by_its_device_then_its_inputs() -> None:
    """What the trace records of where a call ran (fusion plans with it): its device
    argument, else any GPU input."""
    host, gpu = ndd.as_batch([np.zeros((2, 2, 3), np.uint8)]), \
        ndd.as_batch([np.zeros((2, 2, 3), np.uint8)], device="gpu")  # fmt: skip
    assert runs_on_gpu("gpu", [host])
    assert runs_on_gpu(None, [host, gpu])
    assert not runs_on_gpu("cpu", [gpu])
    assert not runs_on_gpu(None, [host, None, 3])
    assert runs_on_gpu(gpu.device, [])


@pytest.mark.parametrize("mode", ["eager", "sync_cpu"])
def test_a_failing_crop_before_the_pass_raises_where_eager_mode_does(mode: str) -> None:
    """A window beyond a small image in iteration 2 (crop with the 'error' policy, a member
    before the resize): the error surfaces where eager mode raises it, the other iterations
    give eager mode's bytes."""
    data = _data(35, np.uint8, big=True)
    data[2][1] = np.zeros((2, 2, 3), np.uint8)

    def run(compile_: bool) -> list:  # type: ignore[type-arg]
        ndd.random.set_seed(99)
        batches = [ndd.as_batch(d, layout="HWC", device="gpu") for d in data]
        epoch = ndd.ExternalSource(iter(batches), device="gpu").captured(BS) if compile_ \
            else iter(batches)  # fmt: skip
        done: list = []  # type: ignore[type-arg]
        with getattr(ndd.EvalMode, mode), warnings.catch_warnings(), ndd.profile() as prof:
            warnings.simplefilter("ignore", CompileFallbackWarning)
            for x in epoch:
                try:
                    y = ndd.crop(x, crop=(3, 3), out_of_bounds_policy="error")
                    y = ndd.crop_mirror_normalize(ndd.resize(y, size=(4, 5)), mean=MEAN,
                                                  std=STD)  # fmt: skip
                    done.append([np.array(s) for s in y.cpu()])
                except (ValueError, RuntimeError) as error:
                    done.append(type(error).__name__)
        if compile_ and mode == "eager":  # iteration 1 ran fused (sync modes do not fuse)
            assert ("crop", "resize", "crop_mirror_normalize") in _groups(prof)[0], _groups(prof)
        return done

    eager = run(False)
    assert isinstance(eager[2], str)
    compiled = run(True)
    assert compiled[2] == eager[2]
    _assert_same([e for e in eager if not isinstance(e, str)],
                 [c for c in compiled if not isinstance(c, str)])


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize(("resample", "layout"), [("random_resized_crop", "HWC"),
                                                  ("resize", "CHW"), ("resize_cubic", "HWC")])
def test_a_flip_after_the_resize_is_stored_mirrored(backend: str, resample: str,
                                                    layout: str) -> None:  # fmt: skip
    """resize/random_resized_crop -> flip (horizontal and vertical per sample, no
    normalisation after it): on the GPU the resize's passes store mirrored and the flip's
    launch disappears; eager mode's bytes on both backends."""

    def body(x: ndd.Batch) -> ndd.Batch:
        if layout == "CHW":
            x = ndd.transpose(x, perm=[2, 0, 1], output_layout="CHW")
        if resample == "random_resized_crop":
            x = ndd.random_resized_crop(x, size=(6, 7))
        else:
            x = ndd.resize(x, size=(5, 9), interp_type=ndd.types.INTERP_CUBIC
                           if resample == "resize_cubic" else ndd.types.INTERP_LINEAR)  # fmt: skip
        return ndd.flip(x, horizontal=ndd.random.coin_flip(batch_size=BS),
                        vertical=ndd.random.coin_flip(batch_size=BS))  # fmt: skip

    data = _data(36, np.uint8, big=True)
    eager, _, _ = _run(body, data, backend, False)
    compiled, prof, _ = _run(body, data, backend, True)
    _assert_same(eager, compiled)
    name = resample.removesuffix("_cubic")
    for groups in _groups(prof):
        if backend == "gpu":
            # the resize's own launches: its two passes, after the tap tables' launch of the
            # triangle filters (cubic taps are built on the host)
            assert groups[(name, "flip")] == (2 if resample == "resize_cubic" else 3), groups
        else:
            assert (name, "flip") not in groups, groups
