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
