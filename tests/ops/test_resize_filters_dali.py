"""resize CUBIC / LANCZOS3 weights as DALI 2.4 computes them (filters sampled every 1/32).

The expected rows were recorded from DALI 2.4 dynamic mode (CPU): a 1x7 float image with a
single 1000 at x=3, resized to 1x12. The analytic Keys cubic gives 824.07 for the two central
outputs, DALI's tabulated one 824.29.
"""

import numpy as np
import pytest

import ndd_triton as ndd
from ndd_triton import types

RECORDED = {
    "INTERP_CUBIC": [0.0, 0.0, 0.0, -67.169, 90.82, 824.29, 824.29, 90.821, -67.169, 0.0, 0.0,
                     0.0],
    "INTERP_LANCZOS3": [0.0, 15.674, 7.953, -142.218, 120.65, 855.345, 855.345, 120.65, -142.218,
                        7.953, 15.674, 0.0],
}


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("interp", sorted(RECORDED))
def test_impulse_response_matches_dali(interp, device):
    x = np.zeros((1, 7, 1), np.float32)
    x[0, 3, 0] = 1000.0
    batch = ndd.as_batch([x], layout="HWC")
    batch = batch.gpu() if device == "gpu" else batch
    out = ndd.resize(batch, size=[1, 12], interp_type=getattr(types.DALIInterpType, interp),
                     dtype=ndd.float32).cpu()
    np.testing.assert_allclose(np.asarray(out.select(0))[0, :, 0], RECORDED[interp], atol=2e-3)


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_gaussian_takes_the_tap_one_unit_to_the_left(device):
    # DALI 2.4 (recorded): 1x31 -> 1x15 GAUSSIAN without antialias; output 7 is centred exactly
    # on the impulse at x=15, with taps exactly one unit away on both sides. DALI counts the
    # left one (exp(-4)): 1000 / (1 + exp(-4)) = 982.014, not 1000.
    x = np.zeros((1, 31, 1), np.float32)
    x[0, 15, 0] = 1000.0
    batch = ndd.as_batch([x], layout="HWC")
    batch = batch.gpu() if device == "gpu" else batch
    out = ndd.resize(batch, size=[1, 15], interp_type=types.DALIInterpType.INTERP_GAUSSIAN,
                     antialias=False, dtype=ndd.float32).cpu()
    expected = np.zeros(15)
    expected[7] = 982.014
    np.testing.assert_allclose(np.asarray(out.select(0))[0, :, 0], expected, atol=2e-3)


# DALI 2.4 (recorded): GAUSSIAN without antialias on a ramp (10 x source index), one axis
# resized. A tap exactly one unit away from an output centre weighs exp(-4) on one side
# only: +0.18 where DALI took the right one, -0.18 the left; which one follows DALI's
# float32 tap arithmetic (identity 11 -> 11: right for outputs 0-2, left from 3 on).
RAMP_TIES = {
    (11, 11.0, 'W'): [0.18, 10.18, 20.18, 29.82, 39.82, 49.82, 59.82, 69.82, 79.82, 89.82, 99.82],
    (21, 51.0, 'W'): [
        0, 0.45, 5.585, 9.714, 12.36, 18.922, 20.702, 26.693, 30.18, 33.307, 39.298, 41.078, 47.64,
        50.286, 54.415, 59.55, 61.619, 68.381, 70.45, 75.585, 79.714, 82.36, 88.922, 90.702, 96.693,
        99.82, 103.307, 109.298, 111.078, 117.64, 120.286, 124.415, 129.55, 131.619, 138.381,
        140.45, 145.585, 149.714, 152.36, 158.922, 160.702, 166.693, 169.82, 173.307, 179.298,
        181.078, 187.64, 190.286, 194.415, 199.55, 200
    ],
    (11, 21.0, 'H'): [
        0, 1.528, 9.223, 12.09, 19.454, 22.786, 29.622, 33.611, 39.737, 44.526, 49.82, 55.474,
        60.263, 66.389, 70.378, 77.214, 80.546, 87.91, 90.777, 98.472, 100
    ],
    (32, 12.8, 'W'): [5, 30.18, 55, 80.18, 105, 129.82, 155, 179.82, 205, 229.82, 255, 279.82, 305],
    (30, 50.0, 'H'): [
        0, 3.102, 10.18, 16.898, 20.835, 29.165, 33.102, 40.18, 46.898, 50.835, 59.165, 63.102,
        70.18, 76.898, 80.835, 89.165, 93.102, 100.18, 106.898, 110.835, 119.165, 123.102, 130.18,
        136.898, 140.835, 149.165, 153.102, 160.18, 166.898, 170.835, 179.165, 183.102, 189.82,
        196.898, 200.835, 209.165, 213.102, 219.82, 226.898, 230.835, 239.165, 243.102, 249.82,
        256.898, 260.835, 269.165, 273.102, 279.82, 286.898, 290
    ],
}


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("case", sorted(RAMP_TIES), ids=str)
def test_gaussian_unit_taps_match_dali(case, device):
    n_in, size, axis = case
    shape = (1, n_in, 1) if axis == "W" else (n_in, 1, 1)
    x = (np.arange(n_in, dtype=np.float32) * 10).reshape(shape)
    batch = ndd.as_batch([x], layout="HWC")
    batch = batch.gpu() if device == "gpu" else batch
    out = ndd.resize(batch, size=[1, size] if axis == "W" else [size, 1], antialias=False,
                     interp_type=types.DALIInterpType.INTERP_GAUSSIAN, dtype=ndd.float32)
    got = np.asarray(out.cpu().select(0)).reshape(-1)
    np.testing.assert_allclose(got, RAMP_TIES[case], atol=2e-3)


# DALI 2.4 (recorded): GAUSSIAN with antialias, downscaling one axis of random integer
# values. The widened filter's taps are DALI's (their count and first index in float32) and
# a tap just past the support edge still weighs a little (DALI's table fades to 0 over
# 1/32): the border outputs show both.
WIDENED = {
    (38, 37.0, 'W'): (
        [67, 80, 2, 80, 46, 51, 63, 28, 97, 5, 27, 38, 57, 40, 13, 4, 0, 4, 14, 99, 19, 65, 75, 23,
         28, 43, 26, 97, 17, 89, 79, 84, 11, 39, 62, 49, 66, 67],
        [67.312, 77.673, 4.833, 78.494, 46.27, 51.785, 60.234, 34.566, 86.503, 8.007, 28.791,
         41.663, 53.148, 32.863, 10.248, 2.596, 1.596, 8.491, 56.5, 54.925, 46.64, 71.49, 38.903,
         26.678, 39.601, 29.277, 85.438, 27.934, 80.785, 79.952, 83.605, 15.774, 37.49, 60.981,
         49.472, 65.508, 66.976],
    ),
    (16, 13.5, 'H'): (
        [66, 6, 95, 55, 90, 27, 36, 87, 18, 6, 37, 67, 12, 87, 34, 22],
        [65.483, 13.659, 88.157, 65.538, 55.196, 34.016, 80.461, 19.052, 12.833, 50.427, 28.56,
         76.365, 35.794, 22],
    ),
    (5, 3.0, 'H'): (
        [54, 89, 88, 87, 30],
        [66.937, 88, 51.101],
    ),
    (28, 4.0, 'H'): (
        [1, 77, 70, 77, 0, 3, 50, 33, 43, 93, 20, 52, 32, 29, 80, 15, 31, 11, 14, 28, 69, 57, 44,
         16, 79, 79, 23, 5],
        [39.529, 44.856, 31.135, 43.772],
    ),
    (25, 3.0, 'W'): (
        [31, 14, 79, 51, 50, 29, 50, 96, 23, 76, 1, 31, 93, 87, 8, 84, 84, 45, 36, 98, 95, 67, 39,
         21, 93],
        [47.109, 55.024, 66.746],
    ),
    (39, 12.69, 'W'): (
        [26, 55, 67, 24, 31, 74, 19, 67, 94, 68, 64, 46, 96, 22, 35, 64, 65, 10, 16, 69, 84, 63, 93,
         37, 32, 79, 4, 19, 19, 39, 15, 79, 84, 38, 2, 71, 10, 61, 17],
        [42.072, 40.366, 57.777, 66.011, 49.646, 46.725, 55.628, 66.419, 40.583, 24.472, 61.573,
         34.429, 32.473],
    ),
}


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("case", sorted(WIDENED), ids=str)
def test_gaussian_widened_taps_match_dali(case, device):
    n_in, size, axis = case
    values, expected = WIDENED[case]
    x = np.asarray(values, np.float32).reshape((1, n_in, 1) if axis == "W" else (n_in, 1, 1))
    batch = ndd.as_batch([x], layout="HWC")
    batch = batch.gpu() if device == "gpu" else batch
    out = ndd.resize(batch, size=[1, size] if axis == "W" else [size, 1], antialias=True,
                     interp_type=types.DALIInterpType.INTERP_GAUSSIAN, dtype=ndd.float32)
    got = np.asarray(out.cpu().select(0)).reshape(-1)
    np.testing.assert_allclose(got, expected, atol=2e-3)
