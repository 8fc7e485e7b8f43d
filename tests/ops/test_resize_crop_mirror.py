"""resize_crop_mirror: the float64 reference resamples the crop window of the resized image
(window start from the crop rule in resized coordinates), mirrored when asked."""

import numpy as np
from _check import check_op, raises_at_call
from reference import resample as ref

import ndd_triton as ndd


def _images(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(0, 255, size=s).astype(np.float32) for s in shapes]


def ref_rcm(sample, size, crop, crop_pos_x=0.5, crop_pos_y=0.5, mirror=0):
    axes = {}
    for c, n_out, n_crop, pos in (("H", size[0], crop[0], crop_pos_y),
                                  ("W", size[1], crop[1], crop_pos_x)):  # fmt: skip
        step = sample.shape["HW".index(c)] / n_out
        start = ref.window_start(float(pos), n_out, n_crop)
        origin = start * step
        if c == "W" and mirror:
            origin, step = origin + n_crop * step, -step
        axes[c] = (n_crop, origin, step)
    return ref.resample(sample, "HWC", axes)


def test_rcm_per_sample_mirror_and_position():
    samples = _images([(13, 17, 3), (9, 8, 3), (20, 25, 3)])
    check_op(ndd.resize_crop_mirror, samples, ref_rcm, args={"size": [9, 11], "crop": [5, 4]},
             per_sample={"mirror": [1, 0, 1], "crop_pos_x": [0.0, 0.5, 1.0],
                         "crop_pos_y": [1.0, 0.25, 0.0]}, layout="HWC", atol=1e-3,
             all_modes=False)  # fmt: skip


def test_rcm_spec_example_top_left_block_and_mirror():
    x = (np.arange(16, dtype=np.uint8).reshape(4, 4, 1) * 10)
    for device in ("cpu", "gpu"):
        t = ndd.as_tensor(x, layout="HWC")
        t = t.gpu() if device == "gpu" else t
        out = ndd.resize_crop_mirror(t, size=(4, 4), crop=(2, 2), crop_pos_x=0, crop_pos_y=0)
        np.testing.assert_array_equal(np.asarray(out.cpu()), x[:2, :2])
        out = ndd.resize_crop_mirror(t, size=(4, 4), crop=(2, 2), crop_pos_x=0, crop_pos_y=0,
                                     mirror=1)  # fmt: skip
        np.testing.assert_array_equal(np.asarray(out.cpu()), x[:2, 1::-1])


def test_rcm_shapes_and_errors():
    x = np.zeros((40, 60, 3), np.uint8)
    assert ndd.resize_crop_mirror(x, size=(20, 30), crop=(10, 10)).shape == (10, 10, 3)
    assert ndd.resize_crop_mirror(x, size=(20, 30)).shape == (20, 30, 3)
    with raises_at_call(RuntimeError, match="resize_crop_mirror: arguments 'crop_h' and 'crop_w' "
                                           "must be given together"):
        ndd.resize_crop_mirror(x, size=(20, 30), crop_w=3)
    with raises_at_call(RuntimeError, match="Exactly one method of specifying size"):
        ndd.resize_crop_mirror(x, crop=(2, 2))
