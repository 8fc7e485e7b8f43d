"""box_encoder: reference (tests/reference/bbox.py, DALI 2.4's matching rules) on both
backends: ragged batches, no boxes, degenerate and out-of-image boxes, ties, offsets; errors."""

import numpy as np
import pytest
from _boxes import boxes as random_boxes
from _check import assert_close, raises_at_call
from reference import bbox as ref

import ndd_triton as ndd


def _anchors(count, seed=7):
    return random_boxes(count, seed).reshape(-1).tolist()


@pytest.fixture
def small_blocks(monkeypatch):
    """Anchor tiles of 8 and box chunks of 2: several of each per sample."""
    from ndd_triton.kernels.gpu import box_encoder as kernel

    monkeypatch.setattr(kernel, "ANCHOR_BLOCK", 8)
    monkeypatch.setattr(kernel, "BOX_BLOCK", 2)


def _run(boxes, labels, backend, **kw):
    b, lab = ndd.as_batch(boxes), ndd.as_batch(labels)
    if backend == "gpu":
        b, lab = b.gpu(), lab.gpu()
    enc, out = ndd.box_encoder(b, lab, **kw)
    assert enc.device.device_type == backend
    return [np.asarray(s) for s in enc.cpu()], [np.asarray(s) for s in out.cpu()]


def _samples():
    degenerate = np.array([[0.3, 0.3, 0.3, 0.6]], np.float32)
    outside = np.array([[-0.2, -0.1, 0.15, 0.2], [0.9, 0.8, 1.3, 1.1]], np.float32)
    twins = np.array([[0.1, 0.1, 0.4, 0.4], [0.1, 0.1, 0.4, 0.4]], np.float32)
    boxes = [random_boxes(5, 1), np.zeros((0, 4), np.float32), degenerate, outside, twins,
             random_boxes(19, 3)]
    labels = [np.arange(1, len(b) + 1, dtype=np.int32) * 3 for b in boxes]
    return boxes, labels


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize("kw", [
    {"criteria": 0.5},
    {"criteria": 0.0},
    {"criteria": 0.3, "offset": True, "scale": 3.669, "means": [0.1, -0.2, 0.3, 0.0],
     "stds": [0.1, 0.1, 0.2, 0.2]},
])
def test_box_encoder_matches_reference(backend, kw, small_blocks):
    boxes, labels = _samples()
    anchors = _anchors(37)
    enc, lab = _run(boxes, labels, backend, anchors=anchors, **kw)
    for i, (b, lb) in enumerate(zip(boxes, labels, strict=True)):
        e_ref, l_ref = ref.box_encoder(b, lb, anchors, **kw)
        assert_close(lab[i], l_ref, where=f"{backend} labels sample {i}")
        assert_close(enc[i], e_ref, atol=2e-5, rtol=1e-5, where=f"{backend} boxes sample {i}")


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_box_encoder_spec_example_ties_and_labels_k1(backend):
    anchors = [0, 0, 0.5, 0.5, 0.5, 0.5, 1, 1, 0, 0, 1, 1]
    enc, lab = _run([np.array([[0.05, 0.05, 0.45, 0.45]], np.float32)],
                    [np.array([[3]], np.int32)], backend, anchors=anchors)
    np.testing.assert_allclose(enc[0], [[0.25, 0.25, 0.4, 0.4], [0.75, 0.75, 0.5, 0.5],
                                        [0.5, 0.5, 1, 1]], atol=1e-7)  # fmt: skip
    assert lab[0].tolist() == [3, 0, 0]
    # two boxes with the same best anchor: the later one wins (DALI 2.4), even with lower IoU
    b = np.array([[0, 0, 0.45, 0.45], [0, 0, 0.4, 0.4]], np.float32)
    _, lab = _run([b], [np.array([2, 1], np.int32)], backend,
                  anchors=[0, 0, 0.5, 0.5, 0.5, 0.5, 1, 1], criteria=0.99)
    assert lab[0].tolist() == [1, 0]
    # IoU exactly at the criteria does not match (strict >)
    _, lab = _run([np.array([[0, 0, 0.5, 0.25]], np.float32)], [np.array([5], np.int32)],
                  backend, anchors=[0, 0, 0.5, 0.5, 0, 0, 0.5, 0.25001], criteria=0.5)
    assert lab[0].tolist() == [0, 5]


def test_box_encoder_errors():
    anchors = [0, 0, 1, 1]
    b, lab = np.zeros((2, 4), np.float32), np.zeros(2, np.int32)
    for width in (3, 5):
        with raises_at_call(ValueError, match=rf"box_encoder: input 0 \(boxes\) sample 0: "
                                              rf"expected \(K, 4\).*\(2, {width}\)"):
            ndd.box_encoder(np.zeros((2, width), np.float32), lab, anchors=anchors)
    with raises_at_call(ValueError, match=r"box_encoder: sample 0: 3 labels \(input 1\) for 2 "
                                          r"boxes \(input 0\)"):
        ndd.box_encoder(b, np.zeros(3, np.int32), anchors=anchors)
    with raises_at_call(RuntimeError, match="input 1 \\(labels\\) must be int32; got f32"):
        ndd.box_encoder(b, lab.astype(np.float32), anchors=anchors)
    with raises_at_call(ValueError, match="argument 'anchors'.*length divisible by 4"):
        ndd.box_encoder(b, lab, anchors=[0, 0, 1])
    with raises_at_call(ValueError, match=r"argument 'criteria' must be in \[0, 1\]"):
        ndd.box_encoder(b, lab, anchors=anchors, criteria=1.5)
    with raises_at_call(ValueError, match="argument 'stds': values must be != 0"):
        ndd.box_encoder(b, lab, anchors=anchors, offset=True, stds=[0, 1, 1, 1])
    with raises_at_call(ValueError, match="argument 'means' must be a list of 4 values"):
        ndd.box_encoder(b, lab, anchors=anchors, means=[1, 2, 3])
    with raises_at_call(ValueError, match="argument 'scale' must be positive"):
        ndd.box_encoder(b, lab, anchors=anchors, scale=0)
    with raises_at_call(ValueError, match=r"box_encoder: input 0 \(bboxes\) sample 0 box 1: NaN"):
        ndd.box_encoder(np.array([[0, 0, 1, 1], [np.nan, 0, 1, 1]], np.float32), lab,
                        anchors=anchors)  # fmt: skip
    with raises_at_call(ValueError, match="inverted box"):
        ndd.box_encoder(np.array([[0.5, 0, 0.1, 1]], np.float32), lab[:1], anchors=anchors)


@pytest.mark.parametrize("kw", [{"criteria": 0.3}, {"criteria": 0.5, "offset": True, "scale": 300.0,
                                 "means": [0.1, 0.0, -0.1, 0.2], "stds": [0.1, 0.1, 0.2, 0.2]}])
def test_box_encoder_cpu_batch_equals_samples_alone(kw):
    """Each sample of a ragged batch (run per sample on the pool, with anchor data shared by
    the samples of a call and thread) must be bit-identical to encoding that sample alone."""
    boxes, labels = _samples()
    boxes = boxes + [np.zeros((0, 4), np.float32)]
    labels = labels + [np.zeros((0,), np.int32)]
    anchors = _anchors(37)
    enc, out = _run(boxes, labels, "cpu", anchors=anchors, **kw)
    for i in range(len(boxes)):
        one_enc, one_out = _run([boxes[i]], [labels[i]], "cpu", anchors=anchors, **kw)
        np.testing.assert_array_equal(enc[i], one_enc[0])
        np.testing.assert_array_equal(out[i], one_out[0])
