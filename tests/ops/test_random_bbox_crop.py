"""random_bbox_crop: every output checked against tests/reference/bbox.py for the window the
op chose; the window obeys the rules (thresholds, aspect ratio, scaling, crop_shape); the draws
are deterministic (seed, checkpoint, threads, backend); odd boxes; errors."""

import warnings

import numpy as np
import pytest
from _boxes import boxes as random_boxes
from _check import raises_at_call
from reference import bbox as ref

import ndd_triton as ndd


def _outputs(result):
    return [[np.asarray(s) for s in out.cpu()] for out in result]


def _batch(boxes, labels=None, backend="cpu"):
    b = ndd.as_batch(boxes)
    lab = None if labels is None else ndd.as_batch(labels)
    if backend == "gpu":
        b = b.gpu()
        lab = None if lab is None else lab.gpu()
    return b, lab


def _check_sample(boxes, labels, anchor, shape, out_boxes, out_labels, out_idx, layout="xyXY",
                  prune=None):  # fmt: skip
    exp_boxes, keep = ref.crop_boxes(boxes, anchor, shape, layout, prune)
    if np.array_equal(anchor, np.zeros_like(anchor)) and np.array_equal(shape,
                                                                        np.ones_like(shape)):
        exp_boxes, keep = np.asarray(boxes, np.float32).reshape(-1, len(layout)), \
            np.arange(len(boxes), dtype=np.int32)  # no crop: boxes unchanged  # fmt: skip
    np.testing.assert_array_equal(out_idx, keep)
    np.testing.assert_allclose(out_boxes, exp_boxes, atol=2e-6)
    if labels is not None:
        np.testing.assert_array_equal(out_labels.reshape(-1), np.asarray(labels)[keep])


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize("kw", [
    {"thresholds": [0.1, 0.3, 0.5], "scaling": [0.3, 1.0], "aspect_ratio": [0.5, 2.0]},
    {"thresholds": [0.2], "threshold_type": "overlap", "all_boxes_above_threshold": False,
     "scaling": [0.2, 0.8], "aspect_ratio": [0.5, 2.0], "allow_no_crop": False},
    {"thresholds": [0.0], "scaling": [0.3, 0.6], "bbox_prune_threshold": 0.5,
     "allow_no_crop": False, "num_attempts": 3},
])
def test_windows_obey_rules_and_boxes_match_reference(backend, kw):
    boxes = [random_boxes(4, s) for s in range(6)] + [np.zeros((0, 4), np.float32)]
    labels = [np.arange(len(b), dtype=np.int32) + 10 for b in boxes]
    b, lab = _batch(boxes, labels, backend)
    result = ndd.random_bbox_crop(b, lab, output_bbox_indices=True, rng=ndd.random.RNG(seed=4),
                                  **kw)  # fmt: skip
    assert all(r.device.device_type == backend for r in result)
    anchors, shapes, out_boxes, out_labels, out_idx = _outputs(result)
    lo, hi = kw["scaling"]
    for i, box in enumerate(boxes):
        anchor, shape = anchors[i], shapes[i]
        _check_sample(box, labels[i], anchor, shape, out_boxes[i], out_labels[i], out_idx[i],
                      prune=kw.get("bbox_prune_threshold"))  # fmt: skip
        if np.array_equal(shape, [1, 1]) and kw.get("allow_no_crop", True):
            continue
        assert lo - 1e-6 <= shape.min() and shape.max() <= hi + 1e-6
        assert 0.5 - 1e-6 <= shape[0] / shape[1] <= 2 + 1e-6 if "aspect_ratio" in kw else True
        assert (anchor >= -1e-7).all() and (anchor + shape <= 1 + 1e-6).all()
        if len(box):
            metric = ref.window_metric(box, anchor, shape, kw.get("threshold_type") == "overlap",
                                       kw.get("all_boxes_above_threshold", True))  # fmt: skip
            assert metric >= min(kw["thresholds"]) - 1e-6
            assert len(out_idx[i]) > 0  # a valid window keeps at least one box


def test_layouts_3d_and_single_box_outputs():
    xywh = np.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.5, 0.4, 0.3]], np.float32)
    for layout, data in (("xyWH", xywh), ("yxYX", (xywh[:, [1, 0, 3, 2]] + [0, 0, 0.2, 0.1]).astype(np.float32))):
        res = _outputs(ndd.random_bbox_crop(ndd.as_batch([data]), bbox_layout=layout,
                                            scaling=[0.5, 1], allow_no_crop=False,
                                            output_bbox_indices=True,
                                            rng=ndd.random.RNG(seed=1)))  # fmt: skip
        _check_sample(data, None, res[0][0], res[1][0], res[2][0], None, res[3][0], layout)
    box3 = np.array([[0.1, 0.1, 0.1, 0.6, 0.6, 0.6]], np.float32)
    res = _outputs(ndd.random_bbox_crop(ndd.as_batch([box3]), np.array([4], np.int32)[None],
                                        scaling=[0.5, 0.8], aspect_ratio=[0.5, 2, 0.5, 2, 1, 1],
                                        thresholds=[0.1], allow_no_crop=False,
                                        output_bbox_indices=True, rng=ndd.random.RNG(seed=2)))
    anchor, shape = res[0][0], res[1][0]
    assert anchor.shape == (3,) and abs(shape[1] / shape[2] - 1) < 1e-6  # fixed y/z ratio
    _check_sample(box3, [4], anchor, shape, res[2][0], res[3][0], res[4][0], "xyzXYZ")
    # Tensor in, Tensors out
    anchor, shape, out = ndd.random_bbox_crop(xywh, bbox_layout="xyWH")
    assert isinstance(out, ndd.Tensor) and np.asarray(shape).tolist() == [1, 1]


def test_crop_shape_in_pixels():
    boxes = np.array([[0.1, 0.1, 0.3, 0.3], [0.5, 0.5, 0.9, 0.8]], np.float32)
    rng = ndd.random.RNG(seed=9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for order, crop, size in (("WH", [50, 40], [100, 200]), ("HW", [40, 50], [200, 100])):
            for _ in range(5):
                a, s, out, idx = _outputs(ndd.random_bbox_crop(
                    ndd.as_batch([boxes]), crop_shape=crop, input_shape=size, shape_layout=order,
                    output_bbox_indices=True, rng=rng))  # fmt: skip
                a, s = a[0], s[0]
                assert s.tolist() == [50, 40] and a[0] == int(a[0]) and 0 <= a[0] <= 50
                assert 0 <= a[1] <= 160
                _check_sample(boxes, None, a / [100, 200], s / [100, 200], out[0], None, idx[0])


def test_fixed_aspect_ratio_and_no_crop_share():
    empty = ndd.as_batch([np.zeros((0, 4), np.float32)] * 400)
    _, shapes, *_ = _outputs(ndd.random_bbox_crop(empty, scaling=[0.3, 1], thresholds=[0.5],
                                                  rng=ndd.random.RNG(seed=3)))  # fmt: skip
    shapes = np.array(shapes)
    full = (shapes == 1).all(axis=1)
    assert 0.4 < full.mean() < 0.6  # "no crop" is one of two options
    crop = shapes[~full]
    assert np.abs(crop[:, 0] - crop[:, 1]).max() < 1e-6  # aspect [1, 1]: w == h
    assert np.median(crop[:, 0]) > 0.7  # the larger of two draws (DALI): median 0.3 + 0.7/sqrt2


def test_deterministic_across_seed_checkpoint_threads_backend():
    boxes = [random_boxes(5, s) for s in range(8)]
    kw = {"thresholds": [0.1, 0.5, 0.9], "scaling": [0.3, 1.0], "aspect_ratio": [0.5, 2.0],
          "output_bbox_indices": True, "total_num_attempts": 20, "quiet": True}

    def run(backend="cpu", rng=None, threads=None):
        previous = ndd.get_num_threads()
        if threads:
            ndd.set_num_threads(threads)
        try:
            b, _ = _batch(boxes, backend=backend)
            return _outputs(ndd.random_bbox_crop(b, rng=rng or ndd.random.RNG(seed=11), **kw))
        finally:
            ndd.set_num_threads(previous)

    first = run()
    for other in (run(threads=1), run(threads=3), run("gpu")):
        for a, b in zip(first, other, strict=True):
            assert all(x.tobytes() == y.tobytes() for x, y in zip(a, b, strict=True))
    rng = ndd.random.RNG(seed=5)
    state = rng.get_state()
    again = run(rng=rng)
    rng.set_state(state)
    assert [x.tobytes() for x in run(rng=rng)[0]] == [x.tobytes() for x in again[0]]
    ndd.random.set_seed(21)
    one = _outputs(ndd.random_bbox_crop(ndd.as_batch(boxes), **kw))
    ndd.random.set_seed(21)
    two = _outputs(ndd.random_bbox_crop(ndd.as_batch(boxes), **kw))
    assert [x.tobytes() for x in one[0]] == [x.tobytes() for x in two[0]]


def test_best_window_warning_and_quiet():
    boxes = np.array([[0.1, 0.1, 0.3, 0.3], [0.5, 0.5, 0.9, 0.8]], np.float32)
    kw = {"scaling": [0.1, 0.2], "thresholds": [0.9], "allow_no_crop": False,
          "total_num_attempts": 3}
    with pytest.warns(RuntimeWarning, match=r"random_bbox_crop: sample 0: could not find a valid "
                                            r"cropping window .*attempted 3 times.*best_metric"):
        ndd.random_bbox_crop(ndd.as_batch([boxes]), **kw).__getitem__(0).evaluate()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ndd.random_bbox_crop(ndd.as_batch([boxes]), quiet=True, **kw)[0].evaluate()


def test_errors():
    b = np.array([[0.1, 0.1, 0.3, 0.3]], np.float32)
    cases = [
        ({"boxes": np.zeros((2, 5), np.float32)}, ValueError, r"expected \(K, 4 or 6\) boxes"),
        ({"boxes": np.zeros((2, 3), np.float32)}, ValueError, r"expected \(K, 4 or 6\) boxes"),
        ({"boxes": np.zeros(4, np.float32)}, ValueError, r"must be \(K, 4 or 6\); got 1-D"),
        ({"boxes": b.astype(np.float64)}, RuntimeError, "must be float32"),
        ({"boxes": np.array([[np.nan, 0.1, 0.3, 0.3]], np.float32)}, ValueError, "NaN"),
        ({"boxes": np.array([[0.3, 0.1, 0.1, 0.3]], np.float32)}, ValueError, "inverted box"),
        ({"boxes": np.array([[1.1, 0.1, 1.3, 0.3]], np.float32)}, ValueError, "out of bounds"),
        ({"labels": np.array([1, 2], np.int32)}, ValueError, r"2 labels \(input 1\) for 1 boxes"),
        ({"labels": np.array([1.0], np.float32)}, RuntimeError, "labels.*must be int32"),
        ({"thresholds": [1.5]}, ValueError, r"'thresholds': values must be within \[0, 1\]"),
        ({"threshold_type": "foo"}, ValueError, "'threshold_type' must be 'iou' or 'overlap'"),
        ({"scaling": [0.5]}, ValueError, r"'scaling' must be a range \[min, max\]"),
        ({"scaling": [0.9, 0.5]}, ValueError, "'scaling' range must be non-negative"),
        ({"aspect_ratio": [0.5, 1, 2]}, ValueError, "'aspect_ratio' should have 2 elements"),
        ({"num_attempts": 0}, ValueError, "'num_attempts' must be at least 1"),
        ({"total_num_attempts": 0}, ValueError, "'total_num_attempts' must be positive"),
        ({"bbox_prune_threshold": 1.5}, ValueError, r"'bbox_prune_threshold' must be in \[0"),
        ({"bbox_layout": "abcd"}, ValueError, "'bbox_layout' should be a permutation of 'xyXY'"),
        ({"crop_shape": [10, 10]}, ValueError, "'input_shape' must be given with 'crop_shape'"),
        ({"crop_shape": [10, 10], "input_shape": [20, 20], "scaling": [0.5, 1]}, ValueError,
         "'scaling' is incompatible"),
        ({"crop_shape": [10, 10, 1], "input_shape": [20, 20]}, ValueError,
         "'crop_shape' sample 0: expected 2 values"),
    ]
    for kw, exc, match in cases:
        kw = dict(kw)
        boxes = kw.pop("boxes", b)
        labels = kw.pop("labels", None)
        with warnings.catch_warnings(), raises_at_call(exc, match=f"random_bbox_crop: .*{match}"):
            warnings.simplefilter("ignore")
            ndd.random_bbox_crop(boxes, labels, **kw)
    with pytest.warns(DeprecationWarning, match="'ltrb' is deprecated"):
        out = ndd.random_bbox_crop(np.array([[0.1, 0.1, 0.2, 0.2]], np.float32), ltrb=False)
        np.testing.assert_allclose(np.asarray(out[2]), [[0.1, 0.1, 0.2, 0.2]])


@pytest.mark.parametrize("kw", [
    {"thresholds": [0.1, 0.3, 0.5, 0.7, 0.9], "scaling": [0.3, 1.0], "aspect_ratio": [0.5, 2.0],
     "num_attempts": 1, "total_num_attempts": 50},
    {"thresholds": [0.2, 0.9], "threshold_type": "overlap", "all_boxes_above_threshold": False,
     "scaling": [0.2, 0.8], "aspect_ratio": [0.5, 2.0], "allow_no_crop": False},
    {"thresholds": [0.0, 0.95], "scaling": [0.3, 0.6], "bbox_prune_threshold": 0.5,
     "allow_no_crop": False, "num_attempts": 3, "total_num_attempts": 7},
    {"thresholds": [0.5], "scaling": [0.5, 1.0], "aspect_ratio": [1.0, 1.0]},
    {"ndim": 3, "thresholds": [0.1, 0.4], "scaling": [0.4, 1.0],
     "aspect_ratio": [0.5, 2.0, 0.5, 2.0, 0.5, 2.0], "total_num_attempts": 40},
    {"ndim": 3, "thresholds": [0.3], "scaling": [0.3, 0.9], "bbox_prune_threshold": 0.3},
])
def test_batched_first_chunk_equals_per_sample_search(kw):
    """The first chunk of attempts runs for all samples at once; the windows must be those of
    the per-sample search (which the batched step falls back to when a sample needs more)."""
    from ndd_triton.ops import _bbox_crop_search as s
    from ndd_triton.ops import random_bbox_crop as op

    d = kw.get("ndim", 2)
    layout = "xyXY" if d == 2 else "xyzXYZ"
    rng = np.random.default_rng(d)
    boxes = [random_boxes(k % 6, k) for k in range(40)] if d == 2 else \
        [np.sort(rng.random((k % 5, 2, 3)), axis=1).reshape(-1, 6).astype(np.float32)
         for k in range(40)]  # fmt: skip
    boxes.append(np.zeros((0, 2 * d), np.float32))
    canon = [op._canonical(b, layout, d) for b in boxes]
    aspect = np.asarray(kw.get("aspect_ratio", [1.0, 1.0] * (1 if d == 2 else 3)),
                        np.float32).reshape(-1, 2)  # fmt: skip
    params = s.SearchParams(d, np.asarray(kw["thresholds"], np.float32),
                            kw.get("threshold_type") == "overlap",
                            kw.get("all_boxes_above_threshold", True),
                            tuple(kw["scaling"]), aspect, kw.get("num_attempts", 1),
                            kw.get("total_num_attempts", -1), kw.get("allow_no_crop", True),
                            kw.get("bbox_prune_threshold"))  # fmt: skip
    bases = [int(b) * s.SPACE + 12345 for b in range(len(boxes))]
    raws = s.first_chunk_draws(params, 77, bases)
    batched = s.search_first_chunk(canon, params, 77, raws)
    fallbacks = 0
    for c, base, raw, got in zip(canon, bases, raws, batched, strict=True):
        want = s.search(c, params, 77, base)
        fallbacks += got is None
        got = got or s.search(c, params, 77, base, None, raw)
        for name in ("start", "size", "keep"):
            np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
        assert (got.no_crop, got.exhausted) == (want.no_crop, want.exhausted)
    assert fallbacks < len(boxes)


@pytest.mark.parametrize("first_chunk", [1, 3, 32])
def test_first_chunk_size_changes_nothing(monkeypatch, first_chunk):
    """How many attempts every sample scores together first is only a cost trade-off: the
    windows, boxes and labels are those of the shipped size (draws are per attempt)."""
    from ndd_triton.ops import _bbox_crop_search as s

    boxes = ndd.as_batch([random_boxes(k % 7, k) for k in range(48)])
    labels = ndd.as_batch([np.arange(k % 7, dtype=np.int32) for k in range(48)])
    kw = {"thresholds": [0.1, 0.3, 0.5, 0.7, 0.9], "scaling": [0.3, 1.0],
          "aspect_ratio": [0.5, 2.0], "num_attempts": 2, "total_num_attempts": 50, "quiet": True}

    def run() -> list[list[np.ndarray]]:
        out = ndd.random_bbox_crop(boxes, labels, rng=ndd.random.RNG(seed=5), **kw)
        return [[np.asarray(x) for x in b] for b in out]

    shipped = run()
    monkeypatch.setattr(s, "FIRST_CHUNK", first_chunk)
    for a, b in zip(run(), shipped, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)
