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
