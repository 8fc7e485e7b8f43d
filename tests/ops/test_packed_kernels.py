"""Packed CPU kernels (a span of samples on one flat host buffer): the same bits as the
per-sample kernels and the NumPy references, on ragged batches with empty, constant, all-zero
and NaN samples, as one span and split over the pool."""

import dataclasses
import itertools

import numpy as np
import pytest
from _check import assert_close, samples_of
from reference.audio import to_decibels as ref_decibels
from test_normalize import ref_normalize

import ndd_triton as ndd
from ndd_triton.core.host_views import Packed, packed_view
from ndd_triton.kernels import _registry
from ndd_triton.ops import normalize, to_decibels
from ndd_triton.runtime import packed_run
from ndd_triton.runtime.plans import PLANS

RNG = np.random.default_rng(11)


def _packed(samples, layout=None):
    """The samples laid out in one host buffer, as every op's output is."""
    batch = ndd.copy(ndd.as_batch(samples, layout=layout))
    batch.evaluate()
    assert packed_view(batch._storage) is not None
    return batch


@pytest.fixture
def spans(monkeypatch):
    """Counts the spans the packed kernels of to_decibels and normalize run."""
    seen: list[tuple[str, int, int]] = []

    def spy(name, fn):
        def packed(out, inp, call, lo, hi):
            seen.append((name, lo, hi))
            fn(out, inp, call, lo, hi)
        return packed

    for schema in (to_decibels.schema, normalize.schema):
        entry = _registry.lookup(schema, "cpu")
        if entry.per_sample is not None:
            form = dataclasses.replace(entry.per_sample,
                                       packed=spy(schema.name, entry.per_sample.packed))
            entry = dataclasses.replace(entry, per_sample=form)
        else:
            entry = dataclasses.replace(entry, packed=spy(schema.name, entry.packed))
        monkeypatch.setitem(_registry._KERNELS, (schema.name, "cpu"), entry)
    PLANS.clear()  # plans hold the kernel entry they looked up
    yield seen
    PLANS.clear()


@pytest.fixture(params=["one span", "split"])
def split(request, monkeypatch):
    """Run each call as one span, or split over 3 pool threads whatever its size."""
    if request.param == "split":
        monkeypatch.setattr(packed_run, "_PACKED_SPLIT_BYTES", 0)
        before = ndd.get_num_threads()
        ndd.set_num_threads(3)
        yield 3
        ndd.set_num_threads(before)
    else:
        yield 1


def _spectra():
    nan = RNG.random((3, 2)).astype(np.float32)
    nan[1, 0] = np.nan
    return [RNG.random((4, 5)).astype(np.float32), np.zeros((0, 3), np.float32),
            RNG.random((1, 1)).astype(np.float32), np.zeros((2, 3), np.float32),  # silence
            RNG.random((7, 3)).astype(np.float32) * 1e-3, nan,
            -RNG.random((2, 2)).astype(np.float32)]  # fmt: skip


def _same_bits(got, expected, where):
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        assert (g.shape, g.dtype) == (e.shape, e.dtype), f"{where} sample {i}"
        assert g.tobytes() == e.tobytes(), f"{where} sample {i}: packed != per sample"


@pytest.mark.parametrize("args", [{}, {"multiplier": 20.0, "cutoff_db": -80.0},
                                  {"reference": 0.5, "cutoff_db": -30.0}, {"multiplier": 0.0}])
def test_to_decibels_packed_equals_per_sample_and_reference(args, spans, split):
    samples = _spectra()
    per_sample = samples_of(ndd.to_decibels(ndd.as_batch(samples), **args))
    assert not spans, "as_batch of separate arrays is not packed: the per-sample kernel runs"
    got = samples_of(ndd.to_decibels(_packed(samples), **args))
    _check_spans(spans, len(samples), split)
    _same_bits(got, per_sample, f"to_decibels {args}")
    for i, (g, s) in enumerate(zip(got, samples, strict=True)):
        if not args.get("multiplier", 1.0):
            assert not np.nan_to_num(g).any(), "multiplier 0 gives zeros (NaN stays NaN)"
        elif not np.isnan(s).any() and not (s < 0).any():  # (the reference's rules: x >= 0)
            assert_close(g, ref_decibels(s, **args), 1e-3, 1e-5, f"sample {i}")
    assert np.isnan(got[5][1, 0]) or not args.get("multiplier", 1.0)


def _check_spans(spans, n, parts):
    """The spans run cover samples 0..n-1 once, in contiguous pieces: one, or 2 to `parts`
    (fewer when one sample holds most of the bytes)."""
    bounds = sorted((lo, hi) for _, lo, hi in spans)
    assert len(bounds) == 1 if parts == 1 else 1 < len(bounds) <= parts, bounds
    assert (bounds[0][0], bounds[-1][1]) == (0, n), bounds
    assert all(a[1] == b[0] for a, b in itertools.pairwise(bounds)), bounds


NORM_SAMPLES = [(4, 5), (3, 0), (0, 4), (1, 1), (6, 9), (2, 5)]


@pytest.mark.parametrize(
    "args",
    [
        {"axes": [1]},
        {"axes": [1], "ddof": 1, "epsilon": 1e-3, "scale": 2.0, "shift": 0.5},
        {"axes": [1], "dtype": ndd.int16, "scale": 100.0},
        {"axes": [0]},  # not trailing: the packed kernel runs the per-sample form
        {"axes": [0, 1]},
        {"axes": [1], "mean": 0.5, "stddev": 2.0},
        {"axes": [1], "mean": 0.25},
    ],
)
def test_normalize_packed_equals_per_sample_and_reference(args, spans, split):
    samples = [RNG.uniform(-2, 5, size=s).astype(np.float32) for s in NORM_SAMPLES]
    samples[-1][:] = 3.0  # constant: zero stddev gives zeros (or the shift)
    per_sample = samples_of(ndd.normalize(ndd.as_batch(samples, layout="ft"), **args))
    assert not spans
    got = samples_of(ndd.normalize(_packed(samples, "ft"), **args))
    _check_spans(spans, len(samples), split)
    _same_bits(got, per_sample, f"normalize {args}")
    ref_args = {k: (np.int16 if k == "dtype" else v) for k, v in args.items()}
    ref_args["axes"] = tuple(ref_args["axes"])
    atol = 1 if "dtype" in args else 1e-5
    for i, (g, s) in enumerate(zip(got, samples, strict=True)):
        count = np.prod([s.shape[a] for a in ref_args["axes"]])
        if s.size and count > args.get("ddof", 0):  # (else the reference divides by zero)
            assert_close(g, ref_normalize(s, **ref_args), atol, 1e-5, f"sample {i}")


def test_normalize_three_dims_and_batch_statistics_stay_exact(spans):
    samples = [RNG.uniform(0, 255, size=s).astype(np.float32) for s in [(5, 7, 3), (2, 1, 3)]]
    for args in ({"axes": [0, 1]}, {"axes": [1, 2]}, {"axis_names": "C"}):
        per_sample = samples_of(ndd.normalize(ndd.as_batch(samples, layout="HWC"), **args))
        got = samples_of(ndd.normalize(_packed(samples, "HWC"), **args))
        _same_bits(got, per_sample, f"normalize {args}")
    spans.clear()
    batch = samples_of(ndd.normalize(_packed(samples, "HWC"), axes=[0, 1], batch=True))
    assert not spans, "batch=True statistics span samples: the whole-batch kernel runs"
    expected = [ref_normalize(s, batch_samples=samples, batch=True, axes=(0, 1)) for s in samples]
    for g, e in zip(batch, expected, strict=True):
        assert_close(g, e, 1e-5, 1e-5, "batch=True")


def test_span_bounds_cover_the_batch_in_order():
    offsets = np.array([0, 100, 100, 5000, 5001, 5001, 9000, 20000], np.int64)
    pack = Packed(np.zeros(20000, np.float32), offsets, np.zeros((7, 1), np.int64))
    for parts in (1, 2, 3, 7, 12):
        bounds = packed_run._span_bounds([pack, pack], 7, parts)
        assert (bounds[0], bounds[-1]) == (0, 7)
        assert all(a < b for a, b in itertools.pairwise(bounds)), bounds
        assert len(bounds) - 1 <= max(parts, 1)
    assert packed_run._span_bounds([pack], 7, 2) == [0, 6, 7]  # the last sample: 55% of the bytes


def test_per_sample_form_needs_its_condition():
    with pytest.raises(ValueError, match="per_sample and per_sample_when go together"):
        _registry.register(normalize.schema, "cpu", batched=True, per_sample=lambda *a: None)


def _anchor_grid(step=0.25):
    """A few hundred ltrb anchors: a grid of squares of two sizes, some overlapping."""
    out = []
    for size in (0.25, 0.5):
        for y in np.arange(0, 1 - size + 1e-6, step / 2):
            for x in np.arange(0, 1 - size + 1e-6, step / 2):
                out.append([x, y, x + size, y + size])
    return np.array(out, np.float32)


def _boxes(rng, anchors):
    """Ragged boxes with ties: duplicates, boxes equal to anchors, zero-area boxes, empty
    samples."""
    samples = []
    for k in (3, 0, 1, 6, 2, 0, 4):
        b = np.sort(rng.uniform(0, 1, (k, 2, 2)), axis=1).reshape(k, 4)  # [x0, y0, x1, y1]
        b = b.astype(np.float32)
        if k >= 3:
            b[1] = b[0]  # duplicate: equal IoUs with every anchor
            b[2] = anchors[rng.integers(len(anchors))]  # IoU 1 with one anchor
        if k >= 4:
            b[3, 2:] = b[3, :2]  # zero area
        samples.append(b)
    return samples


@pytest.mark.parametrize("args", [{}, {"criteria": 0.1}, {"criteria": 0.0},
                                  {"offset": True, "scale": 2.0, "means": [0.1, 0.0, -0.1, 0.2],
                                   "stds": [0.1, 0.1, 0.2, 0.2]}])  # fmt: skip
def test_box_encoder_packed_equals_per_sample(args, monkeypatch):
    from ndd_triton.kernels.cpu import box_encoder as kernel

    spans = []
    packed = kernel.box_encoder_packed

    def spy(dst, boxes, labels, call, lo, hi):
        spans.append((lo, hi))
        packed(dst, boxes, labels, call, lo, hi)

    entry = _registry.lookup(ndd.box_encoder._schema, "cpu")
    monkeypatch.setitem(_registry._KERNELS, ("box_encoder", "cpu"),
                        dataclasses.replace(entry, packed=spy))
    PLANS.clear()
    rng = np.random.default_rng(7)
    anchors = _anchor_grid()
    for _ in range(3):
        boxes = _boxes(rng, anchors)
        labels = [rng.integers(1, 80, len(b)).astype(np.int32) for b in boxes]
        kw = {"anchors": anchors.reshape(-1).tolist(), **args}
        want = ndd.box_encoder(ndd.as_batch(boxes), ndd.as_batch(labels), **kw)
        assert not spans
        got = ndd.box_encoder(_packed(boxes), _packed(labels), **kw)
        assert spans == [(0, len(boxes))]
        spans.clear()
        for g, w in zip(got, want, strict=True):
            _same_bits(samples_of(g), samples_of(w), f"box_encoder {args}")
    PLANS.clear()


def test_box_encoder_packed_names_the_bad_sample():
    anchors = _anchor_grid().reshape(-1).tolist()
    boxes = [np.array([[0.1, 0.1, 0.5, 0.5]], np.float32),
             np.array([[0.2, 0.2, 0.3, 0.3], [0.6, 0.1, 0.4, 0.5]], np.float32)]  # inverted
    labels = [np.array([1], np.int32), np.array([2, 3], np.int32)]
    with pytest.raises(ValueError, match="sample 1 box 1: inverted box"):
        ndd.box_encoder(_packed(boxes), _packed(labels), anchors=anchors)[0].evaluate()
