"""Per-frame argument values (`ndd.per_frame`) for sequence inputs.

References: rotate and warp_affine against the independent affine reference
(tests/reference/affine.py) frame by frame; colour and blur ops against the same op run frame by
frame with one (per-sample) value per frame. Both backends, ragged batches (different frame
counts and frame sizes), eval modes, errors, one GPU launch per call, and DALI 2.4's rotate
canvas for sequences (values recorded from DALI).
"""

import numpy as np
import pytest
from _check import assert_close, raises_at_call, samples_of
from reference.affine import affine_ref, rotate_inverse

import ndd_triton as ndd
from ndd_triton.runtime.per_frame import sequence_canvas

BACKENDS = ("cpu", "gpu")
pf = ndd.per_frame


def _sequences(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 255, size=s, dtype=np.uint8) for s in shapes]


# Two sequences: 3 frames of 6x5 and 2 frames of 4x7 (ragged frame counts and frame sizes).
SEQS = _sequences([(3, 6, 5, 3), (2, 4, 7, 3)])


def _batch(backend, seqs=SEQS):
    batch = ndd.as_batch(seqs, layout="FHWC")
    return batch.gpu() if backend == "gpu" else batch


def _values(*per_sample, dtype=np.float32):
    """A per-frame Batch argument: one array of frame values per sample."""
    return pf(ndd.as_batch([np.asarray(v, dtype) for v in per_sample]))


def _frame_by_frame(op, seqs, frame_args, **common):
    """Expected sequences: `op` on each frame alone (cpu), frame_args[name][i][f] per frame."""
    expected = []
    for i, seq in enumerate(seqs):
        frames = []
        for f in range(seq.shape[0]):
            kwargs = {name: values[i][f] for name, values in frame_args.items()}
            frame = ndd.as_tensor(seq[f], layout="HWC")
            frames.append(np.asarray(op(frame, **kwargs, **common)))
        expected.append(np.stack(frames))
    return expected


def _check(result, expected, atol=0, where=""):
    got = samples_of(result)
    assert len(got) == len(expected)
    assert result.layout == "FHWC"
    shapes = result.shape if isinstance(result, ndd.Batch) else [result.shape]
    assert shapes == [e.shape for e in expected], f"{where}: inferred shapes"
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        assert_close(g, e, atol=atol, where=f"{where} sample {i}")


# ---- ndd.per_frame ----------------------------------------------------------------------------
def test_per_frame_marks_layout_only():
    values = np.array([1.0, 2.0, 3.0], np.float32)
    t = pf(values)
    assert isinstance(t, ndd.Tensor)
    assert (t.layout, t.shape) == ("F", (3,))
    np.testing.assert_array_equal(np.asarray(t), values)
    assert pf(np.zeros((3, 2))).layout == "F*"
    assert pf([1, 2]).layout == "F"
    assert pf(ndd.as_tensor(np.zeros((3, 2)), layout="FB")).layout == "FB"
    assert pf(ndd.as_tensor(np.zeros((3, 2)), layout="AB"), replace=True).layout == "FB"
    b = pf(ndd.as_batch([np.zeros(3), np.zeros(2)]))
    assert isinstance(b, ndd.Batch)
    assert (b.layout, b.shape) == ("F", [(3,), (2,)])
    b = pf(values, batch_size=2)
    assert (b.batch_size, b.layout, b.shape) == (2, "F", [(3,), (3,)])
    g = pf(values, device="gpu")
    assert g.device.device_type == "gpu"
    np.testing.assert_array_equal(np.asarray(g.cpu()), values)


def test_per_frame_errors():
    with pytest.raises(ValueError, match="per_frame: Cannot mark zero-dimensional input"):
        pf(np.float32(5))
    with pytest.raises(ValueError, match="layout should start with 'F', got: AB; pass "
                                         "replace=True"):
        pf(ndd.as_tensor(np.zeros((3, 2)), layout="AB"))
    with pytest.raises(ValueError, match="per_frame: batch_size must be a positive int"):
        pf(np.zeros(3), batch_size=0)


def test_per_frame_of_a_pending_result_waits_for_nothing_at_the_call():
    with ndd.EvalMode.deferred:
        angles = ndd.as_tensor(np.array([5.0, 10.0, 15.0], np.float32)) * 2
        marked = pf(angles)
        assert (marked.layout, marked.shape) == ("F", (3,))
        out = ndd.rotate(ndd.as_tensor(SEQS[0], layout="FHWC"), angle=marked, keep_size=True)
        expected = _frame_by_frame(ndd.rotate, SEQS[:1], {"angle": [[10.0, 20.0, 30.0]]},
                                   keep_size=True)  # fmt: skip
        _check(out, expected, where="deferred rotate")


# ---- per-frame values against frame-by-frame references -------------------------------------
def _rotate_expected(seqs, angles, fill=None):
    expected = []
    for seq, seq_angles in zip(seqs, angles, strict=True):
        hw = seq.shape[1:3]
        out_hw = sequence_canvas(seq_angles, *hw)
        expected.append(np.stack([
            affine_ref(frame, rotate_inverse(a, hw, out_hw), out_hw, fill, 1, None)
            for frame, a in zip(seq, seq_angles, strict=True)
        ]))  # fmt: skip
    return expected


@pytest.mark.parametrize("backend", BACKENDS)
def test_rotate_angle_per_frame_ragged(backend):
    angles = [[10.0, -35.0, 100.0], [80.0, 5.0]]
    result = ndd.rotate(_batch(backend), angle=_values(*angles))
    assert result.device.device_type == backend
    _check(result, _rotate_expected(SEQS, angles), atol=1, where=f"rotate[{backend}]")


@pytest.mark.parametrize("backend", BACKENDS)
def test_brightness_contrast_per_frame_with_per_sample_and_constant(backend):
    brightness = [[0.5, 1.0, 2.0], [1.5, 0.75]]  # float32-exact, like the references' values
    contrast = [0.5, 1.25]  # per sample: the same for every frame of a sequence
    result = ndd.brightness_contrast(
        _batch(backend), brightness=_values(*brightness),
        contrast=ndd.as_batch([np.float32(c) for c in contrast]), brightness_shift=0.1)
    expected = []
    for i, seq in enumerate(SEQS):
        expected += _frame_by_frame(
            ndd.brightness_contrast, [seq], {"brightness": [brightness[i]]},
            contrast=contrast[i], brightness_shift=0.1)
    _check(result, expected, where=f"brightness_contrast[{backend}]")


@pytest.mark.parametrize("backend", BACKENDS)
def test_hsv_per_frame_single_value_broadcasts(backend):
    hue = [[10.0, 100.0, -30.0], [5.0, 50.0]]
    saturation = [[0.5], [1.5, 0.2]]  # one value: every frame of sample 0
    result = ndd.hsv(_batch(backend), hue=_values(*hue), saturation=_values(*saturation))
    frame_saturation = [saturation[0] * 3, saturation[1]]
    expected = _frame_by_frame(ndd.hsv, SEQS, {"hue": hue, "saturation": frame_saturation})
    _check(result, expected, where=f"hsv[{backend}]")


@pytest.mark.parametrize("backend", BACKENDS)
def test_gaussian_blur_sigma_per_frame(backend):
    sigma = [[0.5, 1.0, 2.0], [1.2, 0.8]]
    result = ndd.gaussian_blur(_batch(backend), sigma=_values(*sigma))
    expected = _frame_by_frame(ndd.gaussian_blur, SEQS, {"sigma": sigma})
    _check(result, expected, where=f"gaussian_blur[{backend}]")
    # One (sigma_y, sigma_x) pair per frame.
    pairs = [np.array([[0.5, 1.0], [1.0, 2.0], [2.0, 0.7]]), np.array([[1.2, 1.0], [0.8, 0.3]])]
    result = ndd.gaussian_blur(_batch(backend), sigma=_values(*pairs))
    frame_pairs = [[list(p) for p in seq_pairs] for seq_pairs in pairs]
    expected = _frame_by_frame(ndd.gaussian_blur, SEQS, {"sigma": frame_pairs})
    _check(result, expected, where=f"gaussian_blur pairs[{backend}]")


MATRICES = [
    np.array([[[1, 0.1, 0.5], [0, 1, 0.2]], [[0.9, 0, 1], [0.1, 1, 0]], [[1, 0, 0], [0, 1, 0]]],
             np.float32),
    np.array([[[0.8, 0.1, 0.5], [0.2, 1.1, 0.2]], [[1, 0, -1], [0, 1, 1]]], np.float32),
]  # fmt: skip


def _warp_expected(seqs, matrices, size=None):
    expected = []
    for seq, mats in zip(seqs, matrices, strict=True):
        out_hw = seq.shape[1:3] if size is None else size
        expected.append(np.stack([affine_ref(frame, m, out_hw, None, 1, None)
                                  for frame, m in zip(seq, mats, strict=True)]))  # fmt: skip
    return expected


@pytest.mark.parametrize("backend", BACKENDS)
def test_warp_affine_matrix_per_frame(backend):
    result = ndd.warp_affine(_batch(backend), matrix=pf(ndd.as_batch(MATRICES)))
    _check(result, _warp_expected(SEQS, MATRICES), atol=1, where=f"warp_affine[{backend}]")


def test_warp_affine_matrix_input_per_frame_and_size():
    result = ndd.warp_affine(_batch("cpu"), pf(ndd.as_batch(MATRICES)), size=[4, 6])
    _check(result, _warp_expected(SEQS, MATRICES, (4, 6)), atol=1, where="warp_affine mtx")


def test_laplacian_and_filter_per_frame_windows_and_anchors():
    windows = [[3, 5, 3], [5, 3]]
    result = ndd.laplacian(_batch("cpu"), window_size=_values(*windows, dtype=np.int32),
                           dtype=ndd.float32)  # fmt: skip
    expected = _frame_by_frame(ndd.laplacian, SEQS, {"window_size": windows}, dtype=ndd.float32)
    _check(result, expected, where="laplacian")
    kernel = np.ones((3, 3), np.float32) / 9
    anchors = [np.array([[0, 0], [1, 1], [2, 2]]), np.array([[0, 2], [2, 0]])]
    result = ndd.filter(_batch("cpu"), kernel, anchor=_values(*anchors, dtype=np.int32))
    expected = _frame_by_frame(lambda x, **kw: ndd.filter(x, kernel, **kw), SEQS,
                               {"anchor": [[list(a) for a in seq] for seq in anchors]})
    _check(result, expected, where="filter")


# ---- call forms and eval modes -----------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_tensor_input_gives_a_tensor_and_modes_agree(backend):
    seq = SEQS[0]
    angles = np.array([10.0, 20.0, 30.0], np.float32)
    expected = _rotate_expected([seq], [angles.tolist()])
    outputs = []
    for mode in (ndd.EvalMode.deferred, ndd.EvalMode.eager, ndd.EvalMode.sync_cpu):
        with mode:
            t = ndd.as_tensor(seq, layout="FHWC")
            result = ndd.rotate(t.gpu() if backend == "gpu" else t, angle=pf(angles))
            assert isinstance(result, ndd.Tensor)
            assert (result.layout, result.shape) == ("FHWC", expected[0].shape)
            got = samples_of(result)
        assert_close(got[0], expected[0], atol=1, where=f"rotate {mode.name}")
        outputs.append(got[0].tobytes())
    assert len(set(outputs)) == 1, "eval modes disagree"


def test_tensor_argument_applies_to_every_sample_and_batch_size():
    seqs = _sequences([(2, 4, 5, 3), (2, 3, 3, 3)], seed=1)
    factors = np.array([0.5, 2.0], np.float32)
    result = ndd.brightness(ndd.as_batch(seqs, layout="FHWC"), brightness=pf(factors))
    expected = _frame_by_frame(ndd.brightness, seqs, {"brightness": [factors, factors]})
    _check(result, expected, where="tensor argument")
    t = ndd.as_tensor(seqs[0], layout="FHWC")
    result = ndd.brightness(t, brightness=pf(factors), batch_size=2)
    assert isinstance(result, ndd.Batch)
    _check(result, expected[:1] * 2, where="batch_size")


def test_layout_less_sequence_and_non_sequence_inputs():
    # A layout-less 4-D input is FHWC for rotate, as in DALI.
    angles = [10.0, 20.0, 30.0]
    result = ndd.rotate(SEQS[0], angle=pf(np.array(angles, np.float32)))
    _check(result, _rotate_expected(SEQS[:1], [angles]), atol=1, where="layout-less")
    # A non-sequence input ignores the mark: one value is an ordinary per-sample value.
    image = ndd.as_tensor(SEQS[0][0], layout="HWC")
    got = np.asarray(ndd.brightness(image, brightness=pf(np.array([2.0], np.float32))))
    np.testing.assert_array_equal(got, np.asarray(ndd.brightness(image, brightness=2.0)))


def test_per_sample_argument_of_a_sequence_is_the_same_for_every_frame():
    # Not per-frame-marked: a Batch of one value per sample (classic behaviour, no routing).
    result = ndd.rotate(_batch("cpu"), angle=ndd.as_batch([np.float32(30), np.float32(-20)]))
    _check(result, _rotate_expected(SEQS, [[30.0] * 3, [-20.0] * 2]), atol=1,
           where="per-sample angle")


def test_gpu_per_frame_call_is_one_launch_and_zero_copy():
    batch = _batch("gpu")
    with ndd.profile() as prof:
        out = ndd.brightness(batch, brightness=_values([0.5, 1.0, 2.0], [1.5, 0.7])).evaluate()
    assert [r.op for r in prof.records] == ["brightness"]
    assert prof.records[0].batch_size == 5  # frames
    assert sum(r.gpu_launches for r in prof.records) == 1
    storage = out._storage_or_raise()
    assert storage.buffer is not None  # the sequences are views of the op's one output buffer
    assert all(s.untyped_storage().data_ptr() == storage.buffer.untyped_storage().data_ptr()
               for s in storage.samples)  # fmt: skip


# ---- errors -----------------------------------------------------------------------------------
def test_wrong_number_of_frame_values():
    with pytest.raises(ValueError, match=r"rotate: argument 'angle' sample 1 has 3 per-frame "
                                         r"values but input 0 sample 1 has 2 frames"):
        ndd.rotate(_batch("cpu"), angle=_values([1, 2, 3], [1, 2, 3]))
    with pytest.raises(ValueError, match=r"brightness: argument 'brightness' sample 1 has 3 "
                                         r"per-frame values but input 0 sample 1 has 2 frames"):
        ndd.brightness(_batch("cpu"), brightness=pf(np.array([1, 2, 3], np.float32)))
    with pytest.raises(ValueError, match=r"warp_affine: input 1 sample 0 has 2 per-frame"):
        ndd.warp_affine(_batch("cpu"), pf(ndd.as_batch([MATRICES[1], MATRICES[1]])))


def test_errors_at_the_call_in_every_mode():
    for mode in (ndd.EvalMode.deferred, ndd.EvalMode.eager):
        with mode, pytest.raises(ValueError, match="hue: argument 'hue' sample 0 has 2"):
            ndd.hue(_batch("cpu"), hue=_values([1, 2], [1, 2]))


def test_non_sequence_input_rejects_several_values():
    image = ndd.as_tensor(SEQS[0][0], layout="HWC")
    with raises_at_call(ValueError, match=r"rotate: argument 'angle' expects a scalar per "
                                         r"sample; got shape \(3,\)"):
        ndd.rotate(image, angle=pf(np.array([1, 2, 3], np.float32)))


def test_sequence_without_frames_and_non_per_frame_arguments():
    empty = ndd.as_tensor(np.zeros((0, 6, 5, 3), np.uint8), layout="FHWC")
    with raises_at_call(ValueError, match="rotate: input 0 sample 0 has no frames"):
        ndd.rotate(empty, angle=pf(np.array([20.0], np.float32)))
    # flip's `horizontal` is not per-frame: the mark is ignored, as in DALI.
    with raises_at_call(ValueError, match="flip: argument 'horizontal' expects a scalar"):
        ndd.flip(_batch("cpu"), horizontal=pf(np.array([0, 1, 0], np.int32)))


def test_docs_show_per_frame_arguments():
    assert "Per-frame values" in ndd.rotate.__doc__
    assert "angle" in ndd.rotate.__doc__
    from ndd_triton.ops import color

    marked = {a.name for s in color.schemas for a in s.args if a.per_frame}
    assert marked == {"brightness", "brightness_shift", "contrast", "contrast_center", "hue",
                      "saturation", "value"}  # fmt: skip


# ---- rotate: one canvas per sequence (recorded from DALI 2.4) ------------------------------------
@pytest.mark.parametrize(("h", "w", "angles", "canvas"), [
    (6, 5, [10, 20, 30], (8, 9)), (6, 5, [30, 20, 10], (8, 9)), (6, 5, [0, 90, 45], (9, 8)),
    (6, 5, [45, 0, 0], (8, 9)), (6, 5, [100, 5, 5], (8, 7)), (6, 5, [0, 90], (6, 6)),
    (6, 5, [60, 0], (8, 8)), (6, 5, [80, 0], (6, 8)), (6, 5, [10, 90], (8, 6)),
    (6, 5, [44, 46], (8, 8)), (6, 5, [120, 60], (9, 8)), (5, 6, [100, 5], (8, 8)),
    (7, 9, [100, 5], (11, 11)), (7, 9, [60, 0], (13, 11)), (10, 4, [60, 0], (10, 12)),
    (10, 4, [100, 5], (12, 12)), (8, 8, [45, 45], (12, 12)), (6, 5, [45], (9, 8)),
    (5, 12, [-90, 80, -90, 90], (14, 7)), (10, 2, [154.1, 90.1, -131.6], (10, 10)),
    (24, 5, [135], (22, 21)), (34, 37, [135], (52, 51)), (31, 12, [11.64], (33, 18)),
])  # fmt: skip
def test_sequence_canvas_matches_dali(h, w, angles, canvas):
    assert sequence_canvas(angles, h, w) == canvas
    seq = ndd.as_tensor(np.zeros((len(angles), h, w, 1), np.uint8), layout="FHWC")
    out = ndd.rotate(seq, angle=pf(np.array(angles, np.float32)))
    assert out.shape == (len(angles), *canvas, 1)


@pytest.mark.parametrize(("dhw", "axis", "angles", "canvas"), [
    ((4, 6, 8), [0, 0, 1], [0, 90], (4, 8, 8)), ((4, 6, 8), [0, 1, 0], [30, 60], (10, 6, 10)),
    ((4, 6, 8), [1, 1, 0], [30, 60], (12, 10, 10)), ((5, 6, 7), [0, 0, 1], [30, 60], (5, 10, 10)),
    ((5, 6, 7), [0, 0, 1], [45, 45], (5, 10, 11)), ((5, 6, 7), [1, 1, 0], [0, 90], (11, 12, 11)),
    ((5, 6, 7), [1, 1, 0], [10, 100], (11, 12, 11)), ((5, 6, 7), [0, 1, 0], [0, 90], (7, 6, 7)),
])  # fmt: skip
def test_volume_sequence_canvas_matches_dali(dhw, axis, angles, canvas):
    seq = ndd.as_tensor(np.zeros((len(angles), *dhw, 1), np.uint8), layout="FDHWC")
    out = ndd.rotate(seq, angle=pf(np.array(angles, np.float32)), axis=axis)
    assert out.shape == (len(angles), *canvas, 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_rotate_volume_sequence_per_frame(backend):
    rng = np.random.default_rng(2)
    seq = rng.integers(0, 255, size=(2, 3, 4, 5, 1), dtype=np.uint8)
    t = ndd.as_tensor(seq, layout="FDHWC")
    angles = [30.0, 100.0]
    result = ndd.rotate(t.gpu() if backend == "gpu" else t, angle=pf(np.float32(angles)),
                        axis=[0, 1, 0])  # fmt: skip
    size = list(result.shape[1:4])
    expected = np.stack([np.asarray(ndd.rotate(ndd.as_tensor(f, layout="DHWC"), angle=a,
                                               axis=[0, 1, 0], size=size))
                         for f, a in zip(seq, angles, strict=True)])  # fmt: skip
    assert result.layout == "FDHWC"
    assert_close(samples_of(result)[0], expected, atol=1, where=f"volume[{backend}]")


@pytest.mark.parametrize("mode", [ndd.EvalMode.eager, ndd.EvalMode.deferred])
def test_run_failure_upstream_surfaces_where_the_result_is_read(mode):
    from _gated_op import GATE, gated

    GATE.set()
    with mode:
        bad = gated(ndd.as_batch(SEQS, layout="FHWC"), fail=1)  # fails in its run
        out = ndd.brightness(bad, brightness=_values([0.5, 1.0, 2.0], [1.5, 0.75]))
        assert out.shape == [s.shape for s in SEQS]  # inferred, nothing ran yet
    with pytest.raises(RuntimeError, match="'brightness'") as info:
        out.evaluate()
    assert "failed on purpose" in str(info.value)
    assert isinstance(info.value.__cause__, RuntimeError)
    good = ndd.brightness(_batch("cpu"), brightness=_values([0.5, 1.0, 2.0], [1.5, 0.75]))
    assert samples_of(good)[0].shape == SEQS[0].shape  # later calls are unaffected
