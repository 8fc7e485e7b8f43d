"""resize's uint8 LINEAR/TRIANGULAR fast path (kernels/cpu/_resize_linear_u8.py) against the
exact float path and the float64 reference (split from test_resize.py)."""

import numpy as np
import pytest
from _check import assert_close, samples_of
from reference import resample as ref

import ndd_triton as ndd
from ndd_triton import types


def _images(shapes, dtype=np.uint8, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, size=s).astype(dtype) for s in shapes]


# uint8 LINEAR/TRIANGULAR fast path (kernels/cpu/_resize_linear_u8.py): torch's fixed-point
# resampler, with the border outputs recomputed from DALI's clamped taps. Checked against the
# unrounded float64 reference: within 1 (plus the fixed-point error) everywhere, border included
# (torch's own border, renormalised over the window, is off by many units).
_FAST_CASES = [((37, 51), (11, 13)), ((480, 640), (224, 224)), ((23, 9), (1, 5)),
               ((300, 7), (3, 200)), ((5, 6), (40, 33)), ((2, 1000), (7, 4)),
               ((129, 3), (64, 2)), ((40, 60), (39, 61))]  # fmt: skip


@pytest.mark.parametrize(("shape", "size"), _FAST_CASES)
@pytest.mark.parametrize("antialias", [True, False])
@pytest.mark.parametrize(("layout", "channels"), [("HWC", 3), ("CHW", 4), ("HWC", 1)])
def test_resize_u8_linear_fast_path_against_exact(shape, size, antialias, layout, channels):
    rng = np.random.default_rng(sum(shape) + sum(size))
    image = rng.integers(0, 256, (*shape, channels), dtype=np.uint8)
    image = np.ascontiguousarray(image if layout == "HWC" else image.transpose(2, 0, 1))
    out = np.asarray(ndd.resize(ndd.as_tensor(image, layout=layout), size=list(size),
                                antialias=antialias, interp_type=types.INTERP_LINEAR))
    exact = ref.resize(image, layout, size, antialias=antialias, dtype=np.float64)
    diff = np.abs(out.astype(np.float64) - exact)
    assert diff.max() <= 1.02, (shape, size, diff.max())


def test_resize_u8_linear_float_path_rounds_exactly(monkeypatch):
    # With the fixed-point path switched off, uint8 LINEAR is the float band-GEMM path: the
    # exact value rounded (within float32 error of ties).
    from ndd_triton.kernels.cpu import resize as resize_kernel

    monkeypatch.setattr(resize_kernel, "FIXED_POINT_LINEAR_U8", False)
    image = _images([(48, 64, 3)], seed=4)[0]
    for antialias in (True, False):
        out = np.asarray(ndd.resize(image, size=[21, 29], antialias=antialias))
        exact = ref.resize(image, "HWC", (21, 29), antialias=antialias, dtype=np.float64)
        assert np.abs(out - exact).max() <= 0.5 + 1e-3


@pytest.mark.parametrize("seed", range(6))
def test_resize_u8_linear_fast_path_windows_and_mirror(seed):
    # Integer windows (random_resized_crop, resize_crop_mirror) and mirrored axes: the taps of
    # border outputs read source pixels outside the window, which torch alone would not.
    from ndd_triton.kernels._resample import LINEAR, TRIANGULAR, AxisPlan
    from ndd_triton.kernels.cpu._resize_linear_u8 import linear_u8_fast

    rng = np.random.default_rng(seed)
    h, w = (int(v) for v in rng.integers(8, 120, 2))
    image = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    plans, axes = [], {}
    for letter, n in zip("HW", (h, w), strict=True):
        size = int(rng.integers(8, n + 1))
        start = int(rng.integers(0, n - size + 1))
        n_out = int(rng.integers(24, 2 * size + 24))  # few border outputs: the fast path applies
        mirror = bool(rng.integers(0, 2))
        origin, step = (start + size, -size / n_out) if mirror else (start, size / n_out)
        plans.append(AxisPlan(n, n_out, float(origin), step,
                              int(rng.choice([LINEAR, TRIANGULAR])), True))  # fmt: skip
        axes[letter] = (n_out, float(origin), step)
    out = np.zeros((plans[0].n_out, plans[1].n_out, 3), np.uint8)
    assert linear_u8_fast(out, image, "HWC", "HW", plans)
    exact = ref.resample(image, "HWC", axes, dtype=np.float64)
    assert np.abs(out - exact).max() <= 1.02


def test_resize_u8_linear_fast_path_integer_roi_and_ragged_batch():
    # An integer ROI is a window of the fast path; the border outputs read pixels outside the
    # ROI (DALI clamps only at the image edge). Ragged batch with per-sample sizes.
    images = _images([(40, 50, 3), (37, 61, 3), (64, 48, 3)], seed=3)
    batch = ndd.as_batch(images, layout="HWC")
    out = ndd.resize(batch, size=[17, 23], roi_start=[3, 5], roi_end=[35, 45])
    for image, got in zip(images, samples_of(out), strict=True):
        exact = ref.resample(image, "HWC", {"H": (17, 3.0, 32 / 17), "W": (23, 5.0, 40 / 23)},
                             dtype=np.float64)  # fmt: skip
        assert np.abs(got - exact).max() <= 1.02
    sizes = [[11, 30], [37, 61], [90, 20]]
    out = ndd.resize(batch, size=ndd.as_batch([np.array(s, np.float32) for s in sizes]))
    for image, size, got in zip(images, sizes, samples_of(out), strict=True):
        exact = ref.resize(image, "HWC", tuple(size), dtype=np.float64)
        assert got.shape == (*size, 3)
        assert np.abs(got - exact).max() <= 1.02


def test_resize_u8_linear_fast_path_without_out_overloads(monkeypatch):
    # The F.interpolate + copy branch (mirrors, unit extents, torch builds without the aten
    # `out=` overloads) gives the same bytes as the `out=` branch.
    from ndd_triton.kernels.cpu import _resize_linear_u8 as fast

    image = _images([(45, 61, 3)], seed=5)[0]
    expected = np.asarray(ndd.resize(image, size=[20, 27]))
    monkeypatch.setattr(fast, "_HAS_OUT", False)
    np.testing.assert_array_equal(np.asarray(ndd.resize(image, size=[20, 27])), expected)


def test_resize_large_u8_float_path_banded_conversion():
    # Images of >= 600k elements convert the first pass band by band (resize._BANDED_CONVERT).
    from ndd_triton.kernels.cpu import resize as resize_kernel

    image = _images([(410, 500, 3)], seed=6)[0]
    assert image.size >= resize_kernel._BANDED_CONVERT
    out = np.asarray(ndd.resize(image, size=[37, 45], interp_type=types.INTERP_CUBIC))
    exact = ref.resize(image, "HWC", (37, 45), interp=ref.CUBIC, dtype=np.float64)
    assert np.abs(out - exact).max() <= 0.5 + 1e-3


@pytest.mark.parametrize(("layout", "shape"), [("FHWC", (3, 30, 41, 3)), ("FCHW", (2, 4, 33, 27))])
def test_resize_u8_linear_fast_path_frames(layout, shape, monkeypatch):
    # Video samples take the fast path frame by frame.
    from ndd_triton.kernels.cpu import resize as resize_kernel

    calls = []
    original = resize_kernel.linear_u8_fast
    monkeypatch.setattr(resize_kernel, "linear_u8_fast",
                        lambda *args: calls.append(original(*args)) or calls[-1])  # fmt: skip
    video = _images([shape], seed=7)[0]
    out = np.asarray(ndd.resize(ndd.as_tensor(video, layout=layout), size=[14, 19]))
    assert calls == [True]
    exact = ref.resize(video, layout, (14, 19), dtype=np.float64)
    assert out.shape == exact.shape
    assert np.abs(out - exact).max() <= 1.02


# Batch recipes of the fast path (`_resize_linear_u8.recipes`, built for many samples at once):
# a sample's recipe and bytes do not depend on the batch it was built in (the per-sample path
# builds a batch of one), the fast path applies exactly where the border is small enough, and
# the results are within 1 of the exact values.
def _fast_applies(plans, border_fraction):
    """The fast path's applicability rule, restated: integer LINEAR/TRIANGULAR windows inside
    the image, and at most `border_fraction` of the outputs on the border."""
    border = []
    for p in plans:
        if p.interp not in (1, 4) or p.step == 0 or p.antialias != plans[0].antialias:
            return False
        length = abs(p.step) * p.n_out
        start = p.origin if p.step > 0 else p.origin + p.step * p.n_out
        n, s = round(length), round(start)
        if (abs(length - n) > 1e-9 * max(n, 1) or abs(start - s) > 1e-9 * max(abs(s), 1)
                or s < 0 or n < 1 or s + n > p.n_in):
            return False
        step = abs(p.step)
        radius = step if p.antialias and step > 1.0 else 1.0
        centre = (np.arange(p.n_out) + 0.5) * step - 0.5
        border.append((np.ceil(centre - radius - 1e-6) < 0)
                      | (np.floor(centre + radius + 1e-6) > n - 1))
    (nh, nw), (bh, bw) = (plans[0].n_out, plans[1].n_out), border
    if min(nh, nw) > 1:
        return bh.sum() * nw + bw.sum() * nh <= border_fraction * nh * nw
    return not (bh.any() or bw.any())


@pytest.mark.parametrize("seed", range(4))
def test_resize_u8_linear_batch_recipes_match_single_recipes(seed):
    from ndd_triton.kernels._resample import LINEAR, TRIANGULAR, AxisPlan
    from ndd_triton.kernels.cpu import _resize_linear_u8 as fast

    rng = np.random.default_rng(seed)
    compared = 0
    fields = ("n_in", "n_out", "origin", "step", "interp")
    for trial in range(25):
        h, w = (375, 500) if trial % 3 == 0 else (int(v) for v in rng.integers(1, 400, 2))
        layout, channels = [("HWC", 3), ("CHW", 3), ("HWC", 1), ("CHW", 4)][trial % 4]
        shape = (h, w, channels) if layout == "HWC" else (channels, h, w)
        image = rng.integers(0, 256, shape, dtype=np.uint8)
        n_out = [int(rng.choice([224, 1, 2, 9, 64, int(rng.integers(1, 600))])) for _ in "HW"]
        antialias = bool(trial % 5)
        batch = []
        for _ in range(int(rng.integers(1, 7))):
            plans = []
            for n, m in zip((h, w), n_out, strict=True):
                size = int(rng.integers(1, n + 1))
                start = int(rng.integers(0, n - size + 1))
                origin, step = (start + size, -size / m) if rng.random() < 0.25 else (start,
                                                                                     size / m)
                if rng.random() < 0.05:  # a fractional window: float path
                    origin += 0.25
                interp = LINEAR if rng.random() < 0.8 else TRIANGULAR
                plans.append(AxisPlan(n, m, float(origin), step, interp, antialias))
            batch.append(plans)
        found = fast.recipes(*(np.array([[getattr(p, f) for p in plans] for plans in batch])
                               for f in fields), antialias)  # fmt: skip
        out_shape = (*n_out, channels) if layout == "HWC" else (channels, *n_out)
        for plans, recipe in zip(batch, found, strict=True):
            alone = fast.recipes(*(np.array([[getattr(p, f) for p in plans]]) for f in fields),
                                 antialias)[0]  # fmt: skip
            assert (recipe is not None) == _fast_applies(plans, fast._MAX_BORDER_FRACTION)
            assert (alone is not None) == (recipe is not None)
            if recipe is None:
                continue
            got, expected = np.zeros(out_shape, np.uint8), np.zeros(out_shape, np.uint8)
            assert fast.linear_u8_fast(got, image, layout, "HW", None, recipe)
            assert fast.linear_u8_fast(expected, image, layout, "HW", None, alone)
            assert got.tobytes() == expected.tobytes(), plans
            axes = {c: (p.n_out, p.origin, p.step) for c, p in zip("HW", plans, strict=True)}
            exact = ref.resample(image, layout, axes, antialias=antialias, dtype=np.float64)
            assert np.abs(got - exact).max() <= 1.02, plans
            compared += 1
    assert compared > 10


def test_resize_u8_linear_border_taps_match_axis_table():
    # The vectorised border taps of all samples are `axis_table`'s rows of those outputs up to
    # float rounding (`axis_table` also lists taps of ~1e-7 weight past an output's support).
    from ndd_triton.kernels._resample import LINEAR, AxisPlan, axis_table
    from ndd_triton.kernels.cpu._resize_linear_u8 import _border_taps

    rng = np.random.default_rng(11)
    for n_out in (1, 7, 224, 333):
        n_in = rng.integers(1, 3000, 40)
        size = np.array([int(rng.integers(1, n + 1)) for n in n_in])
        origin = np.array([float(rng.integers(0, n - s + 1)) for n, s in zip(n_in, size,
                                                                               strict=True)])
        origin[::7] += 0.375
        head = rng.integers(0, min(n_out, 4) + 1, 40)
        tail = np.maximum(n_out - rng.integers(0, 4, 40), head)
        for antialias in (True, False):
            rows, index, weight, first, taps = _border_taps(n_in, n_out, origin, size / n_out,
                                                            head, tail, antialias)  # fmt: skip
            for i in range(40):
                table = axis_table(AxisPlan(int(n_in[i]), n_out, float(origin[i]),
                                            float(size[i] / n_out), LINEAR, antialias))
                part = slice(first[i], first[i + 1])
                want = np.r_[np.arange(head[i]), np.arange(tail[i], n_out)]
                assert np.array_equal(rows[part], want)
                k = int(taps[i])
                assert k <= table.index.shape[1]
                assert np.array_equal(index[part, :k], table.index[want, :k])
                np.testing.assert_allclose(weight[part, :k], table.weight[want, :k], atol=1e-6)
                assert np.abs(weight[part, k:]).max(initial=0) == 0
                assert np.abs(table.weight[want, k:]).max(initial=0) <= 1e-6


def test_resize_u8_linear_outside_counts_match_the_per_output_rule():
    # `_outside` solves for the ends of the border and tests the outputs next to them; the
    # same counts as testing every output (integer steps put taps exactly on the margins).
    from ndd_triton.kernels.cpu._resize_linear_u8 import _outside

    rng = np.random.default_rng(12)
    for trial in range(600):
        n_out = int(rng.choice([1, 2, 3, 7, 224, int(rng.integers(1, 2000))]))
        length = rng.integers(1, 3000, 50).astype(np.float64)
        if trial % 3 == 0:
            length = (rng.integers(1, 40, 50) * n_out).astype(np.float64)
        if trial % 5 == 0:
            length = rng.integers(1, 5, 50).astype(np.float64)
        step = length / n_out * np.where(rng.random(50) < 0.3, -1, 1)
        for antialias in (True, False):
            s = np.abs(step)[:, None]
            radius = np.where(s > 1.0, s, 1.0) if antialias else np.ones_like(s)
            centre = (np.arange(n_out) + 0.5) * s - 0.5
            head = np.count_nonzero(np.ceil(centre - radius - 1e-6) < 0, axis=1)
            tail = n_out - np.count_nonzero(np.floor(centre + radius + 1e-6) > length[:, None] - 1,
                                            axis=1)  # fmt: skip
            got_head, got_tail = _outside(n_out, step, length, antialias)
            assert np.array_equal(got_head, head)
            assert np.array_equal(got_tail, np.maximum(tail, head))


def test_resize_u8_linear_fast_path_writes_out_only_in_the_source_format(monkeypatch):
    """torch's `out=` resamplers write in the input's memory format: a CHW source with an HWC
    buffer wrote past the buffer's end (a GC-time crash in tools/dali_diff.py resize_nd).
    Every direct write must pair an interleaved source with a contiguous HWC buffer, and the
    CHW border path (upscaled W with a ROI: border columns) must match the float path."""
    from ndd_triton.kernels.cpu import _resize_linear_u8 as fast
    from ndd_triton.kernels.cpu import resize as resize_kernel

    pairs = []
    for name in ("_AA", "_PLAIN"):
        original = getattr(fast, name)

        def spy(x, size, align, sh, sw, out=None, original=original):
            if out is not None:
                pairs.append((x.stride(), out.stride(), x.shape[1]))
            return original(x, size, align, sh, sw) if out is None else \
                original(x, size, align, sh, sw, out=out)  # fmt: skip

        monkeypatch.setattr(fast, name, spy)
    rng = np.random.default_rng(5)
    for layout in ("CHW", "HWC", "FCHW", "FHWC"):
        for _ in range(6):
            h, w, c = int(rng.integers(3, 20)), int(rng.integers(3, 30)), int(rng.integers(1, 5))
            shape = {"CHW": (c, h, w), "HWC": (h, w, c), "FCHW": (2, c, h, w),
                     "FHWC": (2, h, w, c)}[layout]  # fmt: skip
            x = ndd.batch([rng.integers(0, 256, shape, dtype=np.uint8)], layout=layout)
            up = [int(h * 2.5), w + int(rng.integers(1, 12))]
            for args in ({"size": up, "antialias": False},  # upscaled: border columns
                         {"size": [h, up[1]]},  # H kept: the W pass alone
                         {"size": up, "roi_start": [0.0, 0.4], "roi_end": [float(h), w - 0.7],
                          "roi_relative": False}):  # fmt: skip
                got = np.asarray(ndd.resize(x, **args).select(0))
                monkeypatch.setattr(resize_kernel, "FIXED_POINT_LINEAR_U8", False)
                exact = np.asarray(ndd.resize(x, **args).select(0))
                monkeypatch.setattr(resize_kernel, "FIXED_POINT_LINEAR_U8", True)
                assert_close(got, exact, atol=1, where=f"{layout} {shape} {args}")
    assert pairs, "the direct out= path was not exercised"
    for x_stride, out_stride, channels in pairs:
        if channels > 1:  # NCHW views: the channel stride is 1 for interleaved (HWC) data
            assert x_stride[1] == 1, (x_stride, out_stride)
            assert out_stride[1] == 1, (x_stride, out_stride)


@pytest.mark.parametrize("shape", [(3, 21, 21), (3, 2, 2), (3, 5, 1), (5, 3, 3)])
def test_resize_u8_planar_to_one_pixel(shape, monkeypatch):
    """CHW uint8 to 1x1 hit an internal assert of torch's uint8 kernel (planar 3 channels);
    found by tools/dali_diff.py resize_nd (seed 11), where DALI returns the pixel."""
    from ndd_triton.kernels.cpu import resize as resize_kernel

    x = ndd.batch([np.random.default_rng(1).integers(0, 256, shape, dtype=np.uint8)],
                  layout="CHW")  # fmt: skip
    args = {"size": [1.34, 1.3], "min_filter": types.INTERP_TRIANGULAR,
            "mag_filter": types.INTERP_LINEAR, "antialias": False, "subpixel_scale": False}
    got = np.asarray(ndd.resize(x, **args).select(0))
    monkeypatch.setattr(resize_kernel, "FIXED_POINT_LINEAR_U8", False)
    exact = np.asarray(ndd.resize(x, **args).select(0))
    assert got.shape == (shape[0], 1, 1)
    assert_close(got, exact, atol=1, where=str(shape))
