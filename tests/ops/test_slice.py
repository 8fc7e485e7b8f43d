"""slice: the reference pads with np.pad (constant/edge/symmetric/reflect/wrap), then crops."""

import numpy as np
import pytest
from _check import assert_close, check_op, raises_at_call, samples_of

import ndd_triton as ndd

NP_MODES = {"pad": "constant", "constant": "constant", "edge": "edge", "clamp": "edge",
            "reflect": "symmetric", "reflect_1001": "symmetric", "reflect_101": "reflect",
            "wrap": "wrap"}  # fmt: skip


def ref_window(sample, start, end, axes, policy="error", fill_values=(0.0,), dtype=None,
               channel_axis=None):  # fmt: skip
    """Window [start, end) on `axes`; np.pad supplies everything outside the sample."""
    begin = [0] * sample.ndim
    stop = list(sample.shape)
    for a, s, e in zip(axes, start, end, strict=True):
        begin[a], stop[a] = s, e
    if policy == "trim_to_shape":
        begin = [min(max(b, 0), n) for b, n in zip(begin, sample.shape, strict=True)]
        stop = [max(min(e, n), b) for e, b, n in zip(stop, begin, sample.shape, strict=True)]
    before = [max(0, -b) for b in begin]
    after = [max(0, e - n) for e, n in zip(stop, sample.shape, strict=True)]
    widths = list(zip(before, after, strict=True))
    out_dtype = np.dtype(dtype or sample.dtype)
    if out_dtype.kind in "iu":  # DALI 2.4 casts fills like C++: truncate, then wrap (300 -> 44)
        bits = out_dtype.itemsize * 8
        wrapped = [int(np.trunc(f)) % (1 << bits) for f in fill_values]
        fill_values = [w - (1 << bits) if out_dtype.kind == "i" and w >= 1 << (bits - 1) else w
                       for w in wrapped]  # fmt: skip
    if NP_MODES.get(policy, "constant") == "constant":
        src = sample.astype(np.float64)
        if len(fill_values) == 1:
            padded = np.pad(src, widths, constant_values=fill_values[0])
        else:
            padded = np.stack([np.pad(np.take(src, c, axis=channel_axis),
                                      [w for i, w in enumerate(widths) if i != channel_axis],
                                      constant_values=f)
                               for c, f in enumerate(fill_values)], axis=channel_axis)  # fmt: skip
    else:
        padded = np.pad(sample.astype(np.float64), widths, mode=NP_MODES[policy])
    crop = padded[tuple(slice(b + w, e + w) for b, e, w in zip(begin, stop, before, strict=True))]
    if out_dtype.kind in "iu":
        info = np.iinfo(out_dtype)
        crop = np.clip(np.sign(crop) * np.floor(np.abs(crop) + 0.5), info.min, info.max)
    return crop.astype(out_dtype)


def ref_abs(sample, start, shape, axes, **kwargs):
    end = [s + n for s, n in zip(start, shape, strict=True)]
    return ref_window(sample, start, end, axes, **kwargs)


def _samples(shapes, dtype=np.uint8, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 250, size=s).astype(dtype) for s in shapes]


@pytest.mark.parametrize(
    "policy",
    [
        "pad",
        "edge",
        "reflect",
        "reflect_101",
        "wrap",
        "trim_to_shape",
        "constant",
        "clamp",
        "reflect_1001",
    ],
)
def test_out_of_bounds_policies_ragged(policy):
    samples = _samples([(5, 7, 3), (1, 1, 3), (13, 17, 3)])
    args = {"start": [-3, -2], "shape": [20, 24], "axes": [0, 1], "out_of_bounds_policy": policy}
    check_op(
        ndd.slice,
        samples,
        lambda s, **a: ref_abs(s, [-3, -2], [20, 24], [0, 1], policy=policy),
        args=args,
        layout="HWC",
        all_modes=policy == "reflect",
    )


def test_in_bounds_window_float_and_int16():
    for dtype in (np.float32, np.int16):
        samples = _samples([(6, 9), (8, 8)], dtype)
        check_op(
            ndd.slice,
            samples,
            lambda s, **a: ref_abs(s, [2, 1], [3, 4], [1, 0]),
            args={"start": [2, 1], "shape": [3, 4]},
            layout="HW",
            all_modes=False,
        )


def test_per_sample_start_and_end():
    samples = _samples([(10, 12, 3), (7, 9, 3), (12, 10, 3)])
    starts = [np.array([1, 2]), np.array([0, 0]), np.array([5, 3])]
    ends = [np.array([6, 9]), np.array([9, 7]), np.array([6, 10])]
    check_op(
        ndd.slice,
        samples,
        lambda s, start, end, **a: ref_window(s, start, end, [1, 0]),
        per_sample={"start": starts, "end": ends},
        layout="HWC",
    )


def test_fill_values_per_channel_and_dtype():
    samples = _samples([(4, 5, 3), (6, 2, 3)])
    fill = [10.0, 300.0, -4.6]
    args = {
        "start": [-2, -1],
        "shape": [7, 8],
        "axes": [0, 1],
        "out_of_bounds_policy": "pad",
        "fill_values": fill,
    }
    check_op(ndd.slice, samples, lambda s, **a: ref_abs(s, [-2, -1], [7, 8], [0, 1], policy="pad",
                                                        fill_values=fill, channel_axis=2),
             args=args, layout="HWC", all_modes=False)  # fmt: skip
    check_op(ndd.slice, samples, lambda s, **a: ref_abs(s, [-2, -1], [7, 8], [0, 1], policy="pad",
                                                        fill_values=fill, channel_axis=2,
                                                        dtype=np.float32),
             args={**args, "dtype": ndd.float32}, layout="HWC", all_modes=False)  # fmt: skip


def test_float_to_uint8_rounds_and_saturates():
    x = np.array([[-3.5, 0.5, 1.49, 2.5, 254.5, 300.0]], np.float32)
    for backend in ("cpu", "gpu"):
        t = ndd.as_tensor(x, layout="HW")
        t = t.gpu() if backend == "gpu" else t
        got = np.asarray(ndd.slice(t, start=[0, 0], shape=[6, 1], dtype=ndd.uint8).cpu())
        np.testing.assert_array_equal(got, [[0, 1, 1, 3, 255, 255]])


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_spec_policy_examples(backend):
    x = ndd.as_tensor(np.array([0, 1, 2, 3], np.int32))
    x = x.gpu() if backend == "gpu" else x

    def run(start, length, policy):
        out = ndd.slice(x, start=[start], shape=[length], axes=[0], out_of_bounds_policy=policy)
        return np.asarray(out.cpu()).tolist()

    assert run(2, 5, "reflect") == [2, 3, 3, 2, 1]
    assert run(2, 5, "reflect_101") == [2, 3, 2, 1, 0]
    assert run(2, 5, "wrap") == [2, 3, 0, 1, 2]
    assert run(2, 5, "edge") == [2, 3, 3, 3, 3]
    assert run(-2, 4, "pad") == [0, 0, 0, 1]
    assert run(-2, 9, "trim_to_shape") == [0, 1, 2, 3]
    assert run(-9, 12, "reflect_101") == [3, 2, 1, 0, 1, 2, 3, 2, 1, 0, 1, 2]
    assert run(1, 0, "error") == []


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_default_axes_are_wh_and_relative_rounding(backend):
    img = np.arange(6 * 8, dtype=np.uint8).reshape(6, 8)
    t = ndd.as_tensor(img, layout="HW")
    t = t.gpu() if backend == "gpu" else t
    got = np.asarray(ndd.slice(t, start=[1, 2], shape=[3, 1]).cpu())
    np.testing.assert_array_equal(got, img[2:3, 1:4])  # x=1, y=2, width 3, height 1
    line = ndd.as_tensor(np.arange(10, dtype=np.float32))
    line = line.gpu() if backend == "gpu" else line

    def window(**kwargs):
        out = np.asarray(ndd.slice(line, axes=[0], **kwargs).cpu())
        return (int(out[0]), int(out[-1]) + 1) if out.size else None

    assert window(rel_start=[0.25], rel_shape=[0.5]) == (3, 8)
    assert window(rel_start=[0.15], rel_shape=[0.33]) == (2, 5)
    assert window(rel_start=[0.35], rel_end=[0.75]) == (4, 8)
    assert window(start=[6]) == (6, 10)  # start alone: to the end
    assert window(end=[3]) == (0, 3)
    no_layout = ndd.as_tensor(img)
    no_layout = no_layout.gpu() if backend == "gpu" else no_layout
    np.testing.assert_array_equal(np.asarray(ndd.slice(no_layout, start=[1, 2], shape=[3, 1])
                                             .cpu()), img[2:3, 1:4])  # fmt: skip


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_positional_anchor_and_shape(backend):
    imgs = _samples([(10, 20, 3), (8, 6, 3)])
    batch = ndd.as_batch(imgs, layout="HWC")
    batch = batch.gpu() if backend == "gpu" else batch
    anchors = ndd.as_batch([np.array([2, 1], np.int32), np.array([0, 3], np.int32)])
    shapes = ndd.as_batch([np.array([5, 4], np.int32), np.array([6, 2], np.int32)])
    got = samples_of(ndd.slice(batch, anchors, shapes))  # WH order: x, y
    assert_close(got[0], imgs[0][1:5, 2:7], where="int anchors sample 0")
    assert_close(got[1], imgs[1][3:5, 0:6], where="int anchors sample 1")
    rel_anchor = ndd.as_tensor(np.array([0.25, 0.5], np.float32))
    rel_shape = ndd.as_tensor(np.array([0.5, 0.25], np.float32))
    got = samples_of(ndd.slice(batch, rel_anchor, rel_shape, axes=[0, 1]))
    assert_close(got[0], imgs[0][3:8, 10:15], where="normalized sample 0")  # round(2.5) -> 3
    assert_close(got[1], imgs[1][2:6, 3:5], where="normalized sample 1")
    abs_anchor = ndd.as_tensor(np.array([1.0, 2.0], np.float32))
    abs_shape = ndd.as_tensor(np.array([0.5, 0.5], np.float32))
    got = samples_of(ndd.slice(batch, abs_anchor, abs_shape, axes=[0, 1],
                               normalized_anchor=False))  # fmt: skip
    assert_close(got[0], imgs[0][1:6, 2:12], where="absolute anchor, relative shape")


def test_empty_input_with_pad_policy():
    batch = ndd.as_batch([np.zeros((0, 3), np.uint8), np.ones((2, 3), np.uint8)])
    for backend in ("cpu", "gpu"):
        b = batch.gpu() if backend == "gpu" else batch
        got = samples_of(ndd.slice(b, start=[-1], shape=[3], axes=[0], fill_values=[9],
                                   out_of_bounds_policy="pad"))  # fmt: skip
        np.testing.assert_array_equal(got[0], np.full((3, 3), 9, np.uint8))
        np.testing.assert_array_equal(got[1], [[9] * 3, [1] * 3, [1] * 3])


def test_one_launch_per_ragged_batch():
    batch = ndd.as_batch(_samples([(3, 5, 3), (9, 2, 3), (4, 4, 3)]), layout="HWC").gpu()
    with ndd.profile() as prof:
        ndd.slice(batch, start=[-1, -1], shape=[4, 4], out_of_bounds_policy="wrap").evaluate()
    (record,) = prof.records
    assert record.gpu_launches == 1


def test_errors():
    img = ndd.as_tensor(np.zeros((4, 5, 3), np.uint8), layout="HWC")
    anchor = np.array([1, 1], np.int32)
    with raises_at_call(
        RuntimeError,
        match=r"slice: Slice can't be placed out of bounds with "
        r"out_of_bounds_policy='error': sample 0 axis 1: "
        r"window \[3, 7\) vs extent 5",
    ):
        ndd.slice(img, start=[3, 0], shape=[4, 2])
    with raises_at_call(
        RuntimeError,
        match="slice: the positional anchor/shape inputs and the "
        r"keyword coordinates \(start\) are mutually exclusive",
    ):
        ndd.slice(img, anchor, anchor, start=[0, 0])
    with raises_at_call(
        RuntimeError,
        match="slice: the positional 'anchor' and 'shape' inputs must be given together",
    ):
        ndd.slice(img, anchor)
    with raises_at_call(RuntimeError, match="slice: no slice coordinates given"):
        ndd.slice(img)
    with raises_at_call(
        RuntimeError,
        match="slice: Axis 'W' is not present: input 0 has 1 "
        r"dimension\(s\) and no layout.*pass axes=\[0\]",
    ):
        ndd.slice(np.zeros(5, np.uint8), start=[1], shape=[2])
    with raises_at_call(
        RuntimeError, match="slice: Axis 'W' is not present in the input layout 'DHC'"
    ):
        ndd.slice(ndd.as_tensor(np.zeros((2, 2, 2)), layout="DHC"), start=[0, 0])
    with raises_at_call(
        RuntimeError, match="slice: arguments 'start' and 'rel_start' are mutually exclusive"
    ):
        ndd.slice(img, start=[0, 0], rel_start=[0.1, 0.1])
    with raises_at_call(
        RuntimeError, match="slice: arguments 'end', 'shape' are mutually exclusive"
    ):
        ndd.slice(img, end=[1, 1], shape=[1, 1])
    with raises_at_call(
        ValueError,
        match=r"slice: argument 'start' sample 0: expected 2 values "
        r"\(one per sliced axis\); got 3",
    ):
        ndd.slice(img, start=[0, 0, 0])
    with raises_at_call(ValueError, match=r"slice: input 'anchor' sample 0: expected 2 values"):
        ndd.slice(img, np.array([1], np.int32), np.array([1], np.int32))
    with raises_at_call(
        ValueError, match="slice: argument 'fill_values' has 2 values but sample 0 has 3 channels"
    ):
        ndd.slice(img, start=[0, 0], fill_values=[1.0, 2.0])
    with raises_at_call(ValueError, match=r"argument 'fill_values' has 2 values .* no 'C' axis"):
        ndd.slice(ndd.as_tensor(np.zeros((3, 3)), layout="HW"), start=[0, 0], fill_values=[1, 2])
    with raises_at_call(ValueError, match="slice: argument 'out_of_bounds_policy' must be one of"):
        ndd.slice(img, start=[0, 0], out_of_bounds_policy="mirror")
    with raises_at_call(
        ValueError,
        match=r"slice: sample 0 axis 1: the slice end 1 is before its "
        r"start 3",
    ):
        ndd.slice(img, start=[3, 0], end=[1, 2])
    with raises_at_call(
        RuntimeError, match="slice: arguments 'axes' and 'axis_names' are mutually exclusive"
    ):
        ndd.slice(img, start=[0], axes=[0], axis_names="H")
    with raises_at_call(
        RuntimeError,
        match="slice: sample 0 axis 0: out_of_bounds_policy='wrap' needs a non-empty input extent",
    ):
        ndd.slice(np.zeros((0, 2), np.uint8), start=[0], shape=[2], axes=[0],
                  out_of_bounds_policy="wrap")  # fmt: skip


def test_fill_values_are_truncated_and_wrapped_like_dali():
    # DALI 2.4 (recorded): pad fills are cast to the output type like C++ (truncate, wrap)
    recorded = {np.uint8: [114, 114, 251, 44, 2, 254, 112],
                np.int16: [114, 114, -5, 300, 2, -2, 4464],
                np.float32: [114.8, 114.5, -5.0, 300.0, 2.5, -2.5, 70000.0]}  # fmt: skip
    fills = [114.8, 114.5, -5.0, 300.0, 2.5, -2.5, 70000.0]
    for dtype, expected in recorded.items():
        x = ndd.as_batch([np.full((3, 4, 1), 7, dtype)], layout="HWC")
        for dev in ("cpu", "gpu"):
            got = [np.asarray(ndd.slice(x, start=[-2, 0], shape=[4, 4], axis_names="HW",
                                        out_of_bounds_policy="pad", fill_values=[f],
                                        device=dev).cpu().select(0))[0, 0, 0].item()
                   for f in fills]  # fmt: skip
            np.testing.assert_allclose(got, expected, rtol=1e-6)
            u8 = [np.asarray(ndd.slice(x, start=[-2, 0], shape=[4, 4], axis_names="HW",
                                       out_of_bounds_policy="pad", fill_values=[f],
                                       dtype=ndd.uint8, device=dev).cpu().select(0))[0, 0, 0]
                  for f in fills]  # fmt: skip
            assert [int(v) for v in u8] == [114, 114, 251, 44, 2, 254, 112]


# Relative windows at exact .5 ties, recorded from DALI 2.4 (CPU): (extent, start, shape) ->
# (output length, first index), for the positional inputs and for rel_start/rel_shape keywords.
# Keyword starts scale in float32, positional ones in double; both ends are the double
# (start + shape) * extent (0.48 + 0.34 of 25 is 20.5 exactly in decimal, below in binary).
RECORDED_TIES = [
    (25, 0.48, 0.34, (8, 12), (8, 12)),
    (25, 0.17, 0.21, (5, 4), (5, 4)),
    (50, 0.129, 0.241, (12, 6), (12, 6)),
    (60, 0.181, 0.344, (21, 11), (21, 11)),
    (60, 0.475, 0.098, (6, 28), (5, 29)),
]


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize(("extent", "start", "shape", "positional", "keyword"), RECORDED_TIES)
def test_slice_relative_ties_as_dali(extent, start, shape, positional, keyword, backend):
    img = ndd.batch([np.arange(extent, dtype=np.int32).reshape(1, extent, 1)], layout="HWC")
    img = img.gpu() if backend == "gpu" else img
    by_input = ndd.slice(img, ndd.batch([np.array([start], np.float32)]),
                         ndd.batch([np.array([shape], np.float32)]), axis_names="W")
    by_keyword = ndd.slice(img, rel_start=[start], rel_shape=[shape], axis_names="W")
    for out, want in ((by_input, positional), (by_keyword, keyword)):
        row = np.asarray(out.cpu().select(0))[0, :, 0]
        assert (len(row), int(row[0])) == want


@pytest.mark.parametrize("policy", ["pad", "edge", "reflect", "reflect_101", "wrap"])
def test_slice_row_tiles_split_rows_and_samples(small_tiles, policy):
    # border columns land in some tiles and not in others
    samples = _samples([(7, 13, 3), (1, 1, 3), (9, 5, 3)], np.int16)
    fills = [1, 2, 3] if policy == "pad" else [0]
    args = {"start": [-3, -2], "shape": [11, 19], "axes": [0, 1], "out_of_bounds_policy": policy,
            "fill_values": fills}  # fmt: skip
    check_op(ndd.slice, samples, lambda s, **a: ref_abs(s, [-3, -2], [11, 19], [0, 1],
                                                        policy=policy, fill_values=fills,
                                                        channel_axis=2),
             args=args, layout="HWC", all_modes=False)  # fmt: skip


@pytest.mark.parametrize("normalized", [True, False])
def test_positional_windows_of_a_batch_equal_the_per_sample_path(normalized):
    """A batch whose positional windows all lie inside its samples takes the windows from one
    vectorised pass; one window outside sends the batch through the per-sample path. Both must
    cut the same windows (random relative windows and DALI's recorded .5 ties)."""
    rng = np.random.default_rng(3)
    shapes = [(int(rng.integers(5, 70)), int(rng.integers(5, 70)), 3) for _ in range(40)]
    shapes += [(1, extent, 3) for extent, *_ in RECORDED_TIES]
    imgs = [rng.integers(0, 255, s).astype(np.uint8) for s in shapes]
    if normalized:
        starts = [rng.random(2).astype(np.float32) * 0.5 for _ in range(40)]
        sizes = [(rng.random(2) * 0.5).astype(np.float32) for _ in range(40)]
        starts += [np.array([start, 0], np.float32) for _, start, *_ in RECORDED_TIES]
        sizes += [np.array([shape, 1], np.float32) for _, _, shape, *_ in RECORDED_TIES]
    else:
        starts = [np.array([rng.integers(0, s[1] // 2 + 1), rng.integers(0, s[0] // 2 + 1)],
                           np.float32) for s in shapes]  # fmt: skip
        sizes = [np.array([s[1] // 2, s[0] // 2], np.float32) for s in shapes]
    kw = {"normalized_anchor": normalized, "normalized_shape": normalized,
          "out_of_bounds_policy": "pad"}  # fmt: skip
    inside = samples_of(ndd.slice(ndd.as_batch(imgs, layout="HWC"), ndd.as_batch(starts),
                                  ndd.as_batch(sizes), **kw))  # fmt: skip
    outside = np.array([0.9, 0.9] if normalized else [100, 100], np.float32)
    mixed = samples_of(ndd.slice(ndd.as_batch([*imgs, imgs[0]], layout="HWC"),
                                 ndd.as_batch([*starts, outside]),
                                 ndd.as_batch([*sizes, sizes[0]]), **kw))  # fmt: skip
    for i, (a, b) in enumerate(zip(inside, mixed[:-1], strict=True)):
        assert a.shape == b.shape, f"sample {i}"
        np.testing.assert_array_equal(a, b, err_msg=f"sample {i}")
    assert (mixed[-1] == 0).any()  # the window outside was padded
