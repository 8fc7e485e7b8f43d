"""water: independent per-pixel reference (tests/reference/remap.py) on both backends."""

import numpy as np
import pytest
from _check import check_op, raises_at_call
from reference.remap import water_ref

import ndd_triton as ndd


def _images(shapes, dtype=np.uint8, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 255, size=s).astype(dtype) for s in shapes]


WAVES = {
    "ampl_x": 3.3,
    "ampl_y": 2.1,
    "freq_x": 0.37,
    "freq_y": 0.29,
    "phase_x": 0.4,
    "phase_y": 1.9,
}


@pytest.mark.parametrize("interp", [0, 1])
def test_water_ragged_per_sample_mask_several_tiles(interp):
    samples = _images([(30, 41, 3), (1, 1, 3), (7, 12, 3)])
    check_op(
        ndd.water,
        samples,
        water_ref,
        layout="HWC",
        atol=1,
        args={**WAVES, "interp_type": interp, "fill_value": 50.0},
        per_sample={"mask": [1, 1, 0]},
        all_modes=interp == 0,
    )


def test_water_float_and_gray_scalar_mask():
    samples = [s / 255 for s in _images([(9, 14, 3)], np.float32)]
    check_op(
        ndd.water,
        samples,
        water_ref,
        layout="HWC",
        atol=1e-4,
        all_modes=False,
        args={**WAVES, "interp_type": 1},
    )
    gray = _images([(8, 11, 1)])
    check_op(ndd.water, gray, water_ref, layout="HWC", args={"mask": 0}, all_modes=False)


def test_water_one_launch_and_errors():
    batch = ndd.as_batch(_images([(3, 5, 3), (9, 2, 3)]), layout="HWC").gpu()
    with ndd.profile() as prof:
        ndd.water(batch).evaluate()
    assert prof.records[0].gpu_launches == 1
    img = np.zeros((4, 5, 3), np.uint8)
    with raises_at_call(ValueError, match="water: input 0 has layout 'CHW'"):
        ndd.water(ndd.as_tensor(img, layout="CHW"))
    with raises_at_call(ValueError, match="water: argument 'interp_type': only INTERP_NN"):
        ndd.water(img, interp_type=2)
    with raises_at_call(TypeError, match="water: input 0 has dtype i16"):
        ndd.water(img.astype(np.int16))


def test_water_default_frequency_is_2pi_over_128():
    # DALI 2.4, default waves, fill -1, on a 5x42 image holding its flat pixel index: columns
    # 30..34. At x = 32 the y wave crosses zero (cos(pi/2) < 0 in float32): with the documented
    # 0.049087 instead of 2 pi / 128 the floor would not drop a row there.
    expected = [[30, 31, -1, -1, -1], [72, 73, 32, 33, 34], [114, 115, 74, 75, 76],
                [157, 158, 117, 118, 119], [199, 200, 159, 160, 161]]  # fmt: skip
    idx = np.arange(5 * 42, dtype=np.float32).reshape(5, 42, 1)
    for dev in ("cpu", "gpu"):
        out = ndd.water(ndd.as_batch([idx], layout="HWC"), fill_value=-1.0, device=dev).cpu()
        np.testing.assert_array_equal(np.asarray(out.select(0))[:, 30:35, 0], expected)


@pytest.mark.parametrize("interp", [0, 1])
def test_water_gpu_row_blocks_channels_and_tails(monkeypatch, interp):
    """Tiny GPU program shapes: several row blocks, column spans and tails per sample; one
    channel count per batch (constexpr) and mixed counts."""
    from ndd_triton.kernels.gpu import water as gpu_water

    monkeypatch.setattr(gpu_water, "BLOCK_Y", 2)
    monkeypatch.setattr(gpu_water, "BLOCK_X", 4)
    monkeypatch.setattr(gpu_water, "SPAN", 8)
    mixed = _images([(9, 19, 4), (5, 11, 1), (3, 2, 2)], seed=2)
    for group, masks in ((mixed[:1], [1]), (mixed, [1, 0, 1])):
        check_op(ndd.water, group, water_ref, layout="HWC", atol=1, all_modes=False,
                 backends=("gpu",), args={**WAVES, "interp_type": interp, "fill_value": 7.0},
                 per_sample={"mask": masks})  # fmt: skip
    monkeypatch.setattr(gpu_water, "I32_LIMIT", 1)  # the int64 address path
    check_op(ndd.water, mixed[1:], water_ref, layout="HWC", atol=1, all_modes=False,
             backends=("gpu",), args={**WAVES, "interp_type": interp})  # fmt: skip
