"""paste: NumPy reference (canvas = trunc(ratio * size) >= min, offset = trunc(pos * slack))."""

import numpy as np
import pytest
from _check import check_op, raises_at_call

import ndd_triton as ndd


def _images(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 255, size=s).astype(np.uint8) for s in shapes]


def paste_ref(img, ratio, fill_value, paste_x=0.5, paste_y=0.5, min_canvas_size=0.0, n_channels=3):
    h, w, c = img.shape
    ch = max(int(ratio * h), int(min_canvas_size))
    cw = max(int(ratio * w), int(min_canvas_size))
    out = np.empty((ch, cw, c), np.uint8)
    out[...] = fill_value
    y0, x0 = int(paste_y * (ch - h)), int(paste_x * (cw - w))
    out[y0 : y0 + h, x0 : x0 + w] = img
    return out


def test_paste_ragged_per_sample_several_tiles():
    samples = _images([(20, 31, 3), (1, 1, 3), (7, 5, 3)])
    check_op(
        ndd.paste,
        samples,
        paste_ref,
        layout="HWC",
        args={"fill_value": [7, 8, 9], "min_canvas_size": 9.0},
        per_sample={
            "ratio": [1.7, 3.0, 1.0],
            "paste_x": [0.0, 0.3, 1.0],
            "paste_y": [1.0, 0.5, 0.25],
        },
    )


def test_paste_gray_and_single_tensor():
    samples = _images([(5, 9, 1), (4, 4, 1)])
    check_op(
        ndd.paste,
        samples,
        paste_ref,
        layout="HWC",
        all_modes=False,
        args={"ratio": 2.5, "fill_value": [200], "n_channels": 1, "paste_x": 0.1},
    )


def test_paste_one_launch_and_errors():
    batch = ndd.as_batch(_images([(3, 5, 3), (9, 2, 3)]), layout="HWC").gpu()
    with ndd.profile() as prof:
        ndd.paste(batch, ratio=2, fill_value=[1, 2, 3]).evaluate()
    assert prof.records[0].gpu_launches == 1
    img = np.zeros((4, 5, 3), np.uint8)
    with raises_at_call(
        ValueError,
        match=r"paste: argument 'fill_value' has 2 values; expected "
        r"one per channel \(3 for sample 0\)",
    ):
        ndd.paste(img, ratio=2, fill_value=[1, 2])
    with raises_at_call(ValueError, match="argument 'n_channels' is 3 but 'fill_value' has 1"):
        ndd.paste(img[..., :1], ratio=2, fill_value=[1])
    with raises_at_call(
        RuntimeError,
        match=r"argument 'ratio' sample 1: ratio of less than 1 is "
        r"not supported; got 0\.5",
    ):
        ndd.paste(
            ndd.as_batch([img, img]), ratio=ndd.as_batch(np.array([1.0, 0.5])), fill_value=[0, 0, 0]
        )
    with raises_at_call(ValueError, match=r"sample 0: paste_x and paste_y must be in \[0, 1\]"):
        ndd.paste(img, ratio=2, fill_value=[0, 0, 0], paste_x=1.5)
    with raises_at_call(TypeError, match="paste: input 0 has dtype f32"):
        ndd.paste(img.astype(np.float32), ratio=2, fill_value=[0, 0, 0])
    with raises_at_call(TypeError, match="ratio"):
        ndd.paste(img, fill_value=[0, 0, 0])


# (H, W, ratio, paste_x, paste_y): output (H, W) and anchor recorded from DALI 2.4 (CPU); the
# canvas is the float32 product (float64 gives 22 rows for 10 x 2.3 and 97 for 35 x 2.8)
RECORDED_CANVAS = {
    (10, 23, 2.3, 0.282, 0.794): ((23, 52), (10, 8)),
    (35, 11, 2.8, 0.943, 0.666): ((98, 30), (41, 17)),
    (51, 50, 2.8, 0.732, 0.54): ((142, 140), (49, 65)),
}


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize("key", list(RECORDED_CANVAS))
def test_paste_canvas_is_the_float32_product(key, backend):
    h, w, ratio, px, py = key
    img = ndd.batch([np.full((h, w, 1), 9, np.uint8)], layout="HWC")
    img = img.gpu() if backend == "gpu" else img
    out = np.asarray(ndd.paste(img, ratio=ratio, fill_value=[0], n_channels=1, paste_x=px,
                               paste_y=py).cpu().select(0))[..., 0]  # fmt: skip
    ys, xs = np.nonzero(out == 9)
    assert (out.shape, (int(ys.min()), int(xs.min()))) == RECORDED_CANVAS[key]


def test_paste_row_tiles_split_rows_and_samples(small_tiles):
    samples = _images([(7, 13, 3), (1, 1, 3), (5, 3, 3)])
    check_op(ndd.paste, samples, paste_ref, layout="HWC", all_modes=False,
             args={"fill_value": [7, 8, 9], "ratio": 1.9, "paste_x": 0.3})  # fmt: skip
