"""resize INTERP_NN on exact ties, as DALI 2.4 picks them.

An output centre that lands exactly on a pixel boundary (e.g. the middle output of an odd size
over an even extent) goes to the lower or the higher pixel depending on DALI's float32
arithmetic, which differs per axis: the innermost spatial axis (W) computes each centre as
`lo + (j + 0.5) * step`, the outer ones (H, D) add `step` output after output. The ties below
were recorded from DALI 2.4 dynamic mode (CPU) on a ramp input (value = source index), with
integer and fractional (subpixel) sizes: `(n_in, size, n_out, {output: recorded pick})`. Every
other output is the floor of its exact (rational) centre, as DALI's were in all 4,800 recorded
resizes. Most of these ties went the other way with float64 centres.
"""

from fractions import Fraction

import numpy as np
import pytest

import ndd_triton as ndd
from ndd_triton import types

RECORDED_TIES = {
    "W": [
        (54, 87.0, 87, {14: 9, 43: 26, 72: 45}),
        (4, 82.0, 82, {20: 0, 61: 3}),
        (48, 79.0, 79, {39: 23}),
        (58, 43.0, 43, {21: 29}),
        (48, 47.0, 47, {23: 24}),
        (21, 25.2, 25, {3: 3, 9: 7, 15: 12, 21: 17}),
        (32, 96.9, 97, {48: 15}),
        (56, 44.778, 45, {22: 27}),
        (40, 97.145, 97, {48: 20}),
        (10, 78.632, 79, {39: 5}),
    ],
    "H": [
        (24, 73.0, 73, {36: 11}),
        (32, 101.0, 101, {50: 15}),
        (58, 79.0, 79, {39: 28}),
        (4, 45.0, 45, {22: 2}),
        (20, 3.0, 3, {1: 10}),
        (8, 37.1, 37, {18: 3}),
        (38, 30.5, 31, {15: 18}),
        (2, 24.872, 25, {12: 0}),
        (48, 75.039, 75, {37: 24}),
        (42, 1.44, 1, {0: 21}),
    ],
    "D": [
        (50, 55.0, 55, {5: 5, 16: 15, 27: 24, 38: 34, 49: 45}),
        (48, 37.0, 37, {18: 23}),
        (32, 93.0, 93, {46: 15}),
        (50, 117.0, 117, {58: 25}),
        (22, 51.0, 51, {25: 11}),
        (10, 102.536, 103, {51: 4}),
        (50, 40.72, 41, {20: 24}),
        (8, 18.7, 19, {9: 3}),
        (50, 17.17, 17, {8: 25}),
        (2, 114.9, 115, {57: 1}),
    ],
}


def _expected(n_in: int, size: float, n_out: int, ties: dict[int, int]) -> list[int]:
    """Floors of the exact centres (a fractional size keeps its scale, centred), ties as
    recorded."""
    step = Fraction(n_in) / Fraction(str(size))
    lo = (n_in - n_out * step) / 2 if size != int(size) else Fraction(0)
    exact = [min(max(int(lo + (j + Fraction(1, 2)) * step), 0), n_in - 1) for j in range(n_out)]
    return [ties.get(j, pick) for j, pick in enumerate(exact)]


def _resize_axis(axis: str, n_in: int, size: float, device: str) -> list[int]:
    """NN resize of a ramp along `axis` (the other axes stay 2 long); the picked indices."""
    layout = "DHWC" if axis == "D" else "HWC"
    spatial = layout[:-1]
    at = spatial.index(axis)
    shape = [n_in if a == axis else 2 for a in spatial]
    ramp = np.arange(n_in, dtype=np.float32).reshape([n_in if a == axis else 1 for a in spatial])
    x = np.ascontiguousarray(np.broadcast_to(ramp, shape))[..., None]
    sizes = [size if a == axis else 2.0 for a in spatial]
    batch = ndd.as_batch([x], layout=layout)
    batch = batch.gpu() if device == "gpu" else batch
    out = ndd.resize(batch, size=sizes, interp_type=types.DALIInterpType.INTERP_NN)
    picked = np.moveaxis(np.asarray(out.cpu().select(0))[..., 0], at, 0)
    return picked.reshape(picked.shape[0], -1)[:, 0].astype(int).tolist()


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("axis", sorted(RECORDED_TIES))
def test_nn_ties_match_dali(axis, device):
    for n_in, size, n_out, ties in RECORDED_TIES[axis]:
        expected = _expected(n_in, size, n_out, ties)
        assert _resize_axis(axis, n_in, size, device) == expected, (axis, n_in, size)
