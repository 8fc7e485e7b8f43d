"""crop: the reference indexes the window with explicit coordinates (tests/reference)."""

import numpy as np
import pytest
from _check import check_op, raises_at_call, samples_of
from reference import resample as ref

import ndd_triton as ndd

POS = {"D": "crop_pos_z", "H": "crop_pos_y", "W": "crop_pos_x"}


def _images(shapes, dtype=np.uint8, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 255, size=s).astype(dtype) for s in shapes]


def ref_crop(layout="HWC"):
    """Reference with DALI's window rule; `crop` (H, W) or crop_h/crop_w, pad/trim/edge."""

    def reference(sample, crop=None, crop_h=None, crop_w=None, out_of_bounds_policy="error",
                  fill_values=0.0, rounding="round", dtype=None, **pos):  # fmt: skip
        letters = [c for c in "DHW" if c in layout]
        size = {c: sample.shape[layout.index(c)] for c in letters}
        if crop is not None:
            size.update(zip(letters[-len(crop):], (int(v) for v in crop), strict=False))
        if crop_h is not None:
            size.update(H=int(crop_h), W=int(crop_w))
        start = {c: ref.window_start(float(pos.get(POS[c], 0.5)), sample.shape[layout.index(c)],
                                     size[c], rounding) for c in letters}  # fmt: skip
        if out_of_bounds_policy == "trim_to_shape":
            for c in letters:
                n = sample.shape[layout.index(c)]
                end = min(start[c] + size[c], n)
                start[c] = min(max(start[c], 0), n)
                size[c] = max(end - start[c], 0)
        out = ref.crop_window(sample, layout, start, size, fill_values,
                              edge=out_of_bounds_policy in ("edge", "clamp"))  # fmt: skip
        return ref.to_dtype(out, np.dtype(dtype.numpy_dtype) if dtype else sample.dtype)

    return reference


@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.int64])
def test_crop_ragged_centre(dtype):
    samples = _images([(9, 13, 3), (4, 4, 3), (40, 31, 3)], dtype)  # 4x4: window == input
    check_op(ndd.crop, samples, ref_crop(), args={"crop": [4, 4]}, layout="HWC")


def test_crop_per_sample_window_and_position_several_tiles():
    samples = _images([(30, 41, 3), (17, 13, 1), (25, 25, 3)])
    check_op(ndd.crop, samples, ref_crop(), layout="HWC", all_modes=False,
             per_sample={"crop_h": [20, 3, 25], "crop_w": [37, 13, 1],
                         "crop_pos_x": [0.0, 0.3, 1.0], "crop_pos_y": [1.0, 0.55, 0.5]})


@pytest.mark.parametrize("policy", ["pad", "constant", "edge", "clamp", "trim_to_shape"])
def test_crop_out_of_bounds(policy):
    samples = _images([(5, 7, 3), (12, 3, 3)])
    check_op(ndd.crop, samples, ref_crop(), args={"crop": [9, 8], "crop_pos_x": 0.2,
             "crop_pos_y": 0.9, "out_of_bounds_policy": policy,
             "fill_values": [7, 8, 9]}, layout="HWC", all_modes=False)  # fmt: skip


def test_crop_window_entirely_outside_is_fill():
    x = _images([(4, 4, 2)])[0]
    for device in ("cpu", "gpu"):
        t = ndd.as_tensor(x, layout="HWC")
        out = ndd.crop(t.gpu() if device == "gpu" else t, crop=[30, 30], crop_pos_x=0,
                       crop_pos_y=0, out_of_bounds_policy="pad", fill_values=[5, 6])
        got = samples_of(out)[0]
        assert got.shape == (30, 30, 2)
        np.testing.assert_array_equal(got[:4, :4], x)
        assert (got[4:, :, 0] == 5).all()
        assert (got[:, 4:, 1] == 6).all()


@pytest.mark.parametrize(("layout", "shapes", "crop"), [
    ("CHW", [(3, 9, 10), (1, 5, 6)], [4, 5]),
    ("DHWC", [(6, 5, 7, 2)], [3, 2, 4]),
    ("DHWC", [(6, 5, 7, 2)], [2, 4]),  # a 2-element crop on a volume: H and W only
    ("FHWC", [(2, 6, 6, 3)], [3, 3]),
    ("CFHW", [(2, 3, 8, 5)], [5, 2]),
])  # fmt: skip
def test_crop_layouts(layout, shapes, crop):
    check_op(ndd.crop, _images(shapes), ref_crop(layout),
             args={"crop": crop, "crop_pos_x": 0.7, "crop_pos_z": 0.25},
             layout=layout, all_modes=False)  # fmt: skip


def test_crop_dtype_conversion_and_truncation():
    samples = _images([(6, 9, 3)], np.float32)
    samples = [s - 20.5 for s in samples]  # negatives and .5 ties saturate/round to uint8
    check_op(ndd.crop, samples, ref_crop(), args={"crop": [3.9, 5.2], "dtype": ndd.uint8,
             "rounding": "truncate", "crop_pos_x": 0.45}, layout="HWC", all_modes=False)


@pytest.mark.parametrize("dtype", [np.int16, np.int32])
def test_crop_integer_to_uint8_saturates(dtype):
    # DALI 2.4 (recorded): int16 [-298, -763, 18, 353, 838] -> u8 [0, 0, 18, 255, 255], no wrap.
    samples = [np.array([-298, -763, 18, 353, 838], dtype).reshape(1, 5, 1),
               np.linspace(-1000, 1000, 4 * 6 * 3).astype(dtype).reshape(4, 6, 3)]
    check_op(ndd.crop, samples, ref_crop(), args={"crop": [1, 5], "dtype": ndd.uint8},
             layout="HWC", all_modes=False)


def test_crop_one_launch():
    batch = ndd.as_batch(_images([(5, 7, 3), (9, 4, 3)]), layout="HWC").gpu()
    with ndd.profile() as prof:
        ndd.crop(batch, crop=[3, 3], out_of_bounds_policy="pad").evaluate()
    assert prof.records[0].gpu_launches == 1


def test_crop_errors():
    x = np.zeros((4, 6, 3), np.uint8)
    with raises_at_call(RuntimeError, match=r"crop: sample 0: Slice can't be placed out of bounds"
                                           r": crop window \(5, 2\) at \(-1, 2\) exceeds the "
                                           r"input size \(4, 6\)"):
        ndd.crop(x, crop=[5, 2])
    with raises_at_call(RuntimeError, match="'crop_h' and 'crop_w' must be given together; "
                                           "crop_w is missing"):
        ndd.crop(x, crop_h=2)
    with raises_at_call(RuntimeError, match=r"argument 'crop_pos_x' sample 1: must be in \[0, 1\]; "
                                           "got 1.5"):
        ndd.crop(ndd.as_batch([x, x]), crop=[2, 2],
                 crop_pos_x=ndd.as_batch([np.float32(0.5), np.float32(1.5)]))
    with raises_at_call(RuntimeError, match="argument 'fill_values' expects 1 or 3 values"):
        ndd.crop(x, crop=[9, 9], out_of_bounds_policy="pad", fill_values=[1, 2])
    with raises_at_call(RuntimeError, match="argument 'dtype': Not supported output type i32"):
        ndd.crop(x, crop=[2, 2], dtype=ndd.int32)
    with raises_at_call(ValueError, match="argument 'crop' sample 0: expected 1, 2 or 2 values"):
        ndd.crop(x, crop=[1, 2, 3])
    with raises_at_call(ValueError, match="argument 'out_of_bounds_policy' must be one of"):
        ndd.crop(x, crop=[2, 2], out_of_bounds_policy="wrap")
    with raises_at_call(ValueError, match="crop: input 0 has layout 'HW'"):
        ndd.crop(ndd.as_tensor(np.zeros((2, 2), np.uint8), layout="HW"), crop=[1, 1])


def test_crop_window_start_uses_float32_position():
    # DALI 2.4 (recorded): the position is float32, the product double, then rounded half away:
    # W=28, crop 13, pos 0.7 -> 10.49999982 -> 10; W=58, crop 8, pos 0.39 -> 19; W=31, crop 26,
    # pos 0.1 -> 0.50000001 -> 1.
    for width, crop, pos, start in ((28, 13.4, 0.7, 10), (58, 8, 0.39, 19), (17, 2, 0.9, 13),
                                    (31, 26, 0.1, 1), (55, 54, 0.5, 1)):
        x = np.arange(width, dtype=np.int32).reshape(1, width, 1)
        for device in ("cpu", "gpu"):
            b = ndd.as_batch([x], layout="HWC")
            b = b.gpu() if device == "gpu" else b
            out = ndd.crop(b, crop=[1, crop], crop_pos_x=pos).cpu()
            assert int(np.asarray(out.select(0))[0, 0, 0]) == start, (width, crop, pos, device)


@pytest.mark.parametrize("policy", ["pad", "edge"])
def test_crop_row_tiles_split_rows_and_samples(small_tiles, policy):
    samples = _images([(7, 13, 3), (1, 1, 3), (9, 5, 3)])
    check_op(ndd.crop, samples, ref_crop(), layout="HWC", all_modes=False,
             args={"crop": [9, 11], "crop_pos_x": 0.3, "out_of_bounds_policy": policy,
                   "fill_values": [4, 5, 6], "dtype": ndd.float32})  # fmt: skip
