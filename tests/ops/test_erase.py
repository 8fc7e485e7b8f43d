"""erase: NumPy reference with explicit per-axis loops over regions."""

import math

import numpy as np
from _check import check_op, raises_at_call

import ndd_triton as ndd


def _images(shapes, dtype=np.uint8, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(1, 255, size=s).astype(dtype) for s in shapes]


def erase_ref(layout, names, normalized=False, centered=False):
    def ref(img, anchor=(), shape=(), fill_value=0.0, **_):
        out = img.copy()
        axes = [layout.index(c) for c in names]
        anchor, shape = np.ravel(anchor), np.ravel(shape)
        fill = np.ravel(fill_value)
        for r in range(len(anchor) // len(axes)):
            box = [slice(None)] * img.ndim
            for k, ax in enumerate(axes):
                a, s = anchor[r * len(axes) + k], shape[r * len(axes) + k]
                if normalized:
                    a, s = a * img.shape[ax], s * img.shape[ax]
                if centered:
                    a -= s / 2
                lo = min(max(math.floor(a), 0), img.shape[ax])
                hi = min(max(math.floor(a + s), 0), img.shape[ax])
                box[ax] = slice(lo, hi)
            vals = fill if fill.size == 1 else fill.reshape([-1 if c == "C" else 1 for c in layout])
            vals = np.broadcast_to(vals, img.shape)[tuple(box)]  # a channel range: its fills
            out[tuple(box)] = (
                np.trunc(vals).astype(np.int64).astype(img.dtype)
                if img.dtype.kind in "iu"
                else vals
            )
        return out

    return ref


def test_erase_ragged_per_sample_regions_several_tiles():
    samples = _images([(30, 41, 3), (1, 1, 3), (9, 6, 3)])
    anchors = [np.array([2, 3, 10, -4, 25, 30.5]), np.array([0, 0, 5, 5.0]), np.array([1.5, 2.2])]
    shapes = [np.array([5, 6, 3, 9, 20, 20.0]), np.array([1, 1, 1, 1.0]), np.array([3, 3.0])]
    check_op(
        ndd.erase,
        samples,
        erase_ref("HWC", "HW"),
        layout="HWC",
        per_sample={
            "anchor": anchors,
            "shape": shapes,
            "fill_value": [np.array([300.0]), np.array([1, 2, 3.0]), np.array([-1.0])],
        },
    )


def test_erase_axes_normalized_centered_and_layouts():
    samples = _images([(3, 7, 9), (2, 4, 5)], np.int16)
    check_op(
        ndd.erase,
        samples,
        erase_ref("CHW", "W", normalized=True),
        layout="CHW",
        args={
            "anchor": [0.2],
            "shape": [0.5],
            "axis_names": "W",
            "normalized": True,
            "fill_value": [5, 6, 7][:1],
        },
        all_modes=False,
    )
    check_op(
        ndd.erase,
        samples,
        erase_ref("CHW", "HW", centered=True),
        layout="CHW",
        args={
            "anchor": [1, 2],
            "shape": [2, 3],
            "axes": [1, 2],
            "centered_anchor": True,
            "fill_value": 9.0,
        },
        all_modes=False,
    )
    floats = [s.astype(np.float32) / 7 for s in _images([(6, 8)])]
    check_op(
        ndd.erase,
        floats,
        erase_ref("HW", "HW"),
        args={"anchor": [1, 1], "shape": [2, 9], "axes": [0, 1], "fill_value": 0.5},
        all_modes=False,
    )


def test_erase_empty_anchor_is_identity_and_channel_fill():
    img = _images([(4, 6, 3)])[0]
    np.testing.assert_array_equal(np.asarray(ndd.erase(img)), img)
    out = np.asarray(ndd.erase(img, anchor=[1, 2], shape=[2, 3], fill_value=[7, 8, 9]))
    expected = img.copy()
    expected[1:3, 2:5] = [7, 8, 9]
    np.testing.assert_array_equal(out, expected)


def test_erase_one_launch_and_errors():
    batch = ndd.as_batch(_images([(3, 5, 3), (9, 2, 3)]), layout="HWC").gpu()
    with ndd.profile() as prof:
        ndd.erase(batch, anchor=[1, 1], shape=[1, 1]).evaluate()
    assert prof.records[0].gpu_launches == 1
    img = np.zeros((4, 6, 3), np.uint8)
    with raises_at_call(
        ValueError,
        match=r"erase: argument 'axis_names' \('HW'\) needs a layout, "
        r"but the input \(2-D\) has none; pass axes",
    ):
        ndd.erase(np.zeros((4, 6), np.uint8), anchor=[1, 1], shape=[1, 1])
    with raises_at_call(
        RuntimeError,
        match=r"sample 0: arguments 'anchor' \(2 values\) and "
        r"'shape' \(4 values\) must have the same length",
    ):
        ndd.erase(img, anchor=[1, 1], shape=[1, 1, 2, 2])
    with raises_at_call(
        RuntimeError, match="sample 0: argument 'anchor' has 3 values; expected a multiple of 2"
    ):
        ndd.erase(img, anchor=[1, 1, 1], shape=[1, 1, 1])
    with raises_at_call(
        ValueError,
        match=r"argument 'fill_value' sample 0: expected 1 or 3 "
        r"values \(one per channel\); got 2",
    ):
        ndd.erase(img, anchor=[1, 1], shape=[1, 1], fill_value=[1, 2])
    with raises_at_call(RuntimeError, match="'normalized' cannot be combined"):
        ndd.erase(img, anchor=[0.1, 0.1], shape=[0.1, 0.1], normalized=True, normalized_shape=True)
    with raises_at_call(
        ValueError, match="argument 'axis_names': axis 'D' is not in the input layout 'HWC'"
    ):
        ndd.erase(img, anchor=[1], shape=[1], axis_names="D")
    with raises_at_call(ValueError, match="argument 'axes': axis 5 is out of range for 3-D"):
        ndd.erase(img, anchor=[1], shape=[1], axes=[5])


# DALI 2.4 (recorded): (mode, H, anchor, shape, erased rows [start, end) or (-1, -1) for none) on
# an (H, 1, 1) image with axis_names="H"; "norm" = normalized=True, "_c" = centered_anchor=True.
# DALI works in float32: a + s landing on an integer in float64 is not one in float32.
_DALI_ERASED = [
    ("norm", 10, 0.39, 0.01, (-1, -1)),
    ('norm', 15, -0.10000000149011612, 0.699999988079071, (0, 9)),
    ('norm', 10, 0.8999999761581421, 0.6940000057220459, (9, 10)),
    ('norm_c', 28, 0.4000000059604645, 0.30000001192092896, (6, 15)),
    ('norm', 10, 0.699999988079071, 0.3449999988079071, (7, 10)),
    ('norm', 30, 0.8999999761581421, 0.04800000041723251, (27, 28)),
    ('abs_c', 40, 45.53879928588867, 22.468000411987305, (34, 40)),
    ('abs_c', 17, -4.6579999923706055, 7.685699939727783, (-1, -1)),
    ('abs_c', 8, -2.191999912261963, 8.767999649047852, (0, 2)),
    ('norm', 40, 0.8309999704360962, 0.4099999964237213, (33, 40)),
    ('norm', 17, -0.20000000298023224, 0.33000001311302185, (0, 2)),
    ('norm', 8, -0.20000000298023224, 0.800000011920929, (0, 4)),
]


def test_erase_region_rounding_matches_dali():
    for mode, h, a, s, expected in _DALI_ERASED:
        kw = {"normalized": True} if mode.startswith("norm") else {}
        if mode.endswith("_c"):
            kw["centered_anchor"] = True
        for dev in ("cpu", "gpu"):
            img = ndd.as_tensor(np.ones((h, 1, 1), np.float32), layout="HWC")
            out = np.asarray(ndd.erase(img, anchor=[a], shape=[s], axis_names="H", device=dev,
                                       **kw).cpu())[:, 0, 0]  # fmt: skip
            zero = np.flatnonzero(out == 0)
            got = (int(zero[0]), int(zero[-1]) + 1) if zero.size else (-1, -1)
            assert got == expected, (mode, h, a, s)


def test_erase_row_tiles_split_rows_and_samples(small_tiles):
    samples = _images([(7, 13, 3), (1, 1, 3), (9, 5, 3)])
    check_op(ndd.erase, samples, erase_ref("HWC", "HWC"), layout="HWC", all_modes=False,
             args={"anchor": [1, 2, 1, 0, 7, 0], "shape": [4, 5, 2, 9, 3, 1],
                   "axis_names": "HWC", "fill_value": [7]})  # fmt: skip
    check_op(ndd.erase, samples, erase_ref("HWC", "HW"), layout="HWC", all_modes=False,
             args={"anchor": [1, 2, 0, 7], "shape": [4, 5, 9, 3], "axis_names": "HW",
                   "fill_value": [7, 8, 9]})  # fmt: skip


def test_erase_channel_fills_every_channel_layout():
    """Per-channel fills wherever the channel axis lies in the kernel's view: the group of
    interleaved channels (HWC, also with a region over some channels only), the column axis
    (5 channels: no group) and an outer axis (CHW)."""
    hwc = _images([(6, 7, 3), (1, 2, 3), (5, 9, 3)])
    check_op(ndd.erase, hwc, erase_ref("HWC", "HWC"), layout="HWC", all_modes=False,
             args={"anchor": [1, 2, 1, 0, 0, 0], "shape": [3, 4, 2, 2, 9, 1],
                   "axis_names": "HWC", "fill_value": [7, 8, 9]})  # fmt: skip
    five = _images([(4, 6, 5), (3, 1, 5)], seed=1)
    check_op(ndd.erase, five, erase_ref("HWC", "HW"), layout="HWC", all_modes=False,
             args={"anchor": [1, 1], "shape": [2, 4], "axis_names": "HW",
                   "fill_value": [1, 2, 3, 4, 5]})  # fmt: skip
    chw = _images([(3, 5, 6), (3, 2, 9)], seed=2)
    check_op(ndd.erase, chw, erase_ref("CHW", "HW"), layout="CHW", all_modes=False,
             args={"anchor": [1, 2, 0, 0], "shape": [3, 3, 1, 2], "axis_names": "HW",
                   "fill_value": [7, 8, 9]})  # fmt: skip


def test_erase_high_rank_outer_axes():
    """Samples of 4 to 6 axes: the kernel unravels a row into up to five outer coordinates
    and tests only the axes a batch of that rank has (ragged extents, regions on every axis)."""
    for shapes in ([(3, 4, 5, 3), (2, 5, 3, 3)], [(3, 4, 2, 5), (2, 3, 3, 5)],
                   [(2, 3, 2, 4, 5), (3, 2, 2, 3, 5)],
                   [(2, 2, 3, 2, 3, 5), (1, 3, 2, 2, 2, 5)]):  # fmt: skip
        rank = len(shapes[0])
        names = "abcdef"[:rank]
        anchor = [1] * (rank - 1) + [2] + [0] * rank
        shape = [1] * (rank - 1) + [2] + [1] * (rank - 1) + [5]
        check_op(ndd.erase, _images(shapes, seed=rank), erase_ref(names, names),
                 args={"anchor": anchor, "shape": shape, "axes": list(range(rank)),
                       "fill_value": 3.0},
                 all_modes=False)  # fmt: skip
