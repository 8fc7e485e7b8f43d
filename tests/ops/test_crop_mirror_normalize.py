"""crop_mirror_normalize: float64 reference = window, mirror, (x - mean) / std * scale + shift
(fill values written as they are), channel padding, permutation, conversion."""

import numpy as np
import pytest
from _check import check_op, raises_at_call
from reference import resample as ref

import ndd_triton as ndd

MEAN = [115.08, 117.96, 102.84]
STD = [67.18, 50.57, 52.22]


def _images(shapes, dtype=np.uint8, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 255, size=s).astype(dtype) for s in shapes]


def ref_cmn(layout="HWC"):
    def reference(sample, crop=None, crop_pos_x=0.5, crop_pos_y=0.5, mean=0.0, std=1.0,
                  scale=1.0, shift=0.0, mirror=0, dtype=None, output_layout="CHW",
                  pad_output=False, out_of_bounds_policy="error", fill_values=0.0):  # fmt: skip
        hw = {c: sample.shape[layout.index(c)] for c in "HW"}
        size = dict(zip("HW", crop, strict=False)) if crop is not None else dict(hw)
        start = {"H": ref.window_start(crop_pos_y, hw["H"], size["H"]),
                 "W": ref.window_start(crop_pos_x, hw["W"], size["W"])}  # fmt: skip
        if out_of_bounds_policy == "trim_to_shape":
            for c in "HW":
                end = min(start[c] + size[c], hw[c])
                start[c] = min(max(start[c], 0), hw[c])
                size[c] = end - start[c]
        window = ref.crop_window(sample, layout, start, size, 0.0)
        inside = ref.crop_window(np.ones_like(sample), layout, start, size, 0.0) > 0
        c_axis = layout.index("C")
        channels = sample.shape[c_axis]
        shape = [1] * sample.ndim
        shape[c_axis] = channels
        mean = np.broadcast_to(np.asarray(mean, np.float64).reshape(-1), (channels,))
        std = np.broadcast_to(np.asarray(std, np.float64).reshape(-1), (channels,))
        fill = np.broadcast_to(np.asarray(fill_values, np.float64).reshape(-1), (channels,))
        out = (window - mean.reshape(shape)) / std.reshape(shape) * scale + shift
        out = np.where(inside, out, fill.reshape(shape))
        if mirror:
            out = np.flip(out, axis=layout.index("W"))
        if pad_output and channels & (channels - 1):
            pad = [(0, 0)] * out.ndim
            pad[c_axis] = (0, (1 << channels.bit_length()) - channels)
            out = np.pad(out, pad)
        out = np.transpose(out, [layout.index(c) for c in output_layout])
        return ref.to_dtype(out, np.dtype(dtype.numpy_dtype) if dtype else np.float32)

    return reference


def test_cmn_defaults_ragged_all_modes():
    samples = _images([(9, 13, 3), (1, 1, 3), (40, 31, 3)])  # 40x31x3 f32: several tiles
    check_op(ndd.crop_mirror_normalize, samples, ref_cmn(), layout="HWC", atol=1e-5)


def test_cmn_per_sample_mean_std_mirror_crop():
    samples = _images([(12, 14, 3), (9, 9, 3), (20, 8, 3)])
    per_sample = {"mean": [MEAN, [1.0, 2.0, 3.0], [0.0, 0.0, 0.0]],
                  "std": [STD, [2.0, 3.0, 4.0], [1.0, 1.0, 1.0]],
                  "mirror": [1, 0, 1], "crop_pos_x": [0.0, 1.0, 0.3]}  # fmt: skip
    check_op(ndd.crop_mirror_normalize, samples, ref_cmn(), args={"crop": [7, 6]},
             per_sample=per_sample, layout="HWC", atol=1e-4, all_modes=False)  # fmt: skip


@pytest.mark.parametrize(("dtype", "atol"), [(ndd.uint8, 0), (ndd.int8, 0), (ndd.float16, 2e-2)])
def test_cmn_dtypes_scale_shift(dtype, atol):
    samples = _images([(6, 7, 3), (5, 11, 3)])
    check_op(ndd.crop_mirror_normalize, samples, ref_cmn(),
             args={"mean": MEAN, "std": 12.0, "scale": 1.7, "shift": 2.25, "dtype": dtype,
                   "output_layout": "HWC", "mirror": 1}, layout="HWC", atol=atol,
             all_modes=False)  # fmt: skip


@pytest.mark.parametrize("policy", ["pad", "trim_to_shape"])
def test_cmn_out_of_bounds_and_pad_output(policy):
    samples = _images([(5, 6, 3), (9, 4, 3)])
    check_op(ndd.crop_mirror_normalize, samples, ref_cmn(),
             args={"crop": [8, 7], "crop_pos_y": 0.2, "mean": MEAN, "std": STD, "mirror": 1,
                   "out_of_bounds_policy": policy, "fill_values": [30.5, 49.9, 28.6],
                   "pad_output": True}, layout="HWC", atol=1e-4, all_modes=False)  # fmt: skip


@pytest.mark.parametrize(("layout", "out_layout", "shapes"), [
    ("CHW", "HWC", [(3, 8, 9), (3, 5, 5)]), ("HWC", "HWC", [(6, 4, 1)]),
    ("CHW", "CHW", [(1, 7, 7)]),
])  # fmt: skip
def test_cmn_layouts(layout, out_layout, shapes):
    check_op(ndd.crop_mirror_normalize, _images(shapes), ref_cmn(layout),
             args={"crop": [4, 3], "mean": 100.0, "std": 20.0, "output_layout": out_layout,
                   "mirror": 1}, layout=layout, atol=1e-5, all_modes=False)  # fmt: skip


def test_cmn_std_zero_is_not_an_error():
    x = np.array([[[0.5, 0.25, 1.0]]], np.float32)
    out = np.asarray(ndd.crop_mirror_normalize(x, mean=[0.5, 0.0, 0.0], std=[0.0, 0.0, 1.0]))
    # DALI gives inf/nan for std == 0; the fused x * (1/std) + (-mean/std) form gives nan.
    assert not np.isfinite(out[:2]).any()
    assert out[2, 0, 0] == 1.0


def test_cmn_one_launch():
    batch = ndd.as_batch(_images([(5, 7, 3), (9, 4, 3)]), layout="HWC").gpu()
    with ndd.profile() as prof:
        ndd.crop_mirror_normalize(batch, crop=[3, 3], mirror=1, mean=MEAN).evaluate()
    assert prof.records[0].gpu_launches == 1


def test_cmn_errors():
    x = np.zeros((4, 6, 3), np.uint8)
    with raises_at_call(RuntimeError, match="argument 'mean' sample 0: expected 1 or 3 values "
                                           r"\(one per channel\); got 2"):
        ndd.crop_mirror_normalize(x, mean=[1.0, 2.0])
    with raises_at_call(RuntimeError, match="argument 'std' sample 1: expected 1 or 3 values"):
        ndd.crop_mirror_normalize(ndd.as_batch([x, x]), std=ndd.as_batch(
            [np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0])]))  # fmt: skip
    with raises_at_call(RuntimeError, match="argument 'output_layout' must be a permutation of "
                                           "the input layout 'FHWC'; got 'CHW'"):
        ndd.crop_mirror_normalize(ndd.as_tensor(np.zeros((2, 4, 4, 3), np.uint8), layout="FHWC"))
    with raises_at_call(RuntimeError, match="argument 'dtype': Not supported output type i32"):
        ndd.crop_mirror_normalize(x, dtype=ndd.int32)
    with raises_at_call(RuntimeError, match="crop_mirror_normalize: sample 0: Slice can't be "
                                           "placed out of bounds"):
        ndd.crop_mirror_normalize(x, crop=[8, 8])
    with raises_at_call(TypeError, match="argument 'scale' expects a float"):
        ndd.crop_mirror_normalize(x, scale=[1.0, 2.0])


@pytest.mark.parametrize("out_layout", ["CHW", "HWC"])
@pytest.mark.parametrize("channels", [1, 3, 4])
def test_cmn_u8_table_fast_path(channels, out_layout):
    # uint8 HWC -> float32 CHW/HWC inside the image takes the OpenCV table path: against the
    # float64 reference through the op, and bit-identical to the torch path it replaces.
    from ndd_triton.kernels.cpu.crop import Window, crop_into
    from ndd_triton.kernels.cpu.crop_mirror_normalize import _u8_tables

    samples = _images([(17, 23, channels), (1, 1, channels), (31, 9, channels)], seed=channels)
    mean, std = MEAN[:channels] + [90.0] * (channels - 3), STD[:channels] + [33.0] * (channels - 3)
    check_op(ndd.crop_mirror_normalize, samples, ref_cmn(),
             args={"crop": [1, 1], "output_layout": out_layout}, per_sample={"mirror": [1, 0, 1]},
             layout="HWC", atol=1e-5, all_modes=False)  # fmt: skip
    check_op(ndd.crop_mirror_normalize, [samples[0], samples[2]], ref_cmn(),
             args={"crop": [9, 7], "mean": mean, "std": std, "crop_pos_x": 0.8,
                   "output_layout": out_layout},
             per_sample={"mirror": [1, 0]}, layout="HWC", atol=1e-5, all_modes=False)  # fmt: skip
    rng = np.random.default_rng(channels)
    for _ in range(40):
        h, w = (int(v) for v in rng.integers(1, 40, 2))
        x = rng.integers(0, 256, (h, w, channels), dtype=np.uint8)
        ch, cw = int(rng.integers(1, h + 1)), int(rng.integers(1, w + 1))
        start = np.array([rng.integers(0, h - ch + 1), rng.integers(0, w - cw + 1)])
        win = Window("HWC", out_layout, start, np.array([ch, cw]), "error", np.zeros(channels),
                     rng.uniform(-2, 2, channels), rng.uniform(-200, 200, channels),
                     bool(rng.integers(0, 2)))  # fmt: skip
        shape = (channels, ch, cw) if out_layout == "CHW" else (ch, cw, channels)
        fast, slow = (np.empty(shape, np.float32) for _ in range(2))
        assert _u8_tables(fast, x, out_layout, start, win.size, win.gain, win.bias, win.mirror)
        crop_into(slow, x, win)
        np.testing.assert_array_equal(fast, slow)
        # The same window shape again (the thread's planes are reused), other pixels.
        y = rng.integers(0, 256, x.shape, dtype=np.uint8)
        assert _u8_tables(fast, y, out_layout, start, win.size, win.gain, win.bias, win.mirror)
        crop_into(slow, y, win)
        np.testing.assert_array_equal(fast, slow)


@pytest.mark.parametrize("out_layout", ["CHW", "HWC"])
def test_cmn_integer_output_ties_round_half_away(out_layout):
    """Every value is an exact tie (v - 128.5): integer outputs round half away from zero, on
    the row kernel (window inside the image) and the generic one (a padded window) alike."""
    samples = [np.arange(0, 240, dtype=np.uint8).reshape(8, 10, 3),
               np.arange(15, 255, dtype=np.uint8)[::-1].copy().reshape(10, 8, 3)]  # fmt: skip
    for crop, policy in (([5, 6], "error"), ([12, 6], "pad")):
        check_op(ndd.crop_mirror_normalize, samples, ref_cmn(),
                 args={"crop": crop, "mean": 128.5, "std": 1.0, "dtype": ndd.int8,
                       "output_layout": out_layout, "out_of_bounds_policy": policy},
                 per_sample={"mirror": [1, 0]}, layout="HWC", atol=0,
                 all_modes=False)  # fmt: skip
