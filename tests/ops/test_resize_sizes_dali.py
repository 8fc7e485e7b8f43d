"""resize output sizes against DALI 2.4 shapes recorded with the real DALI (tools/dali_diff.py).

Kept apart from test_resize.py (kernels and their tests belong to the resize work): this only
checks the size arithmetic of ops/_resize_params.py (float32, exact extent on the axis that sets
the scale), on requests with .5 / .25 / .75 fractions where rounding is decided.
"""

import numpy as np
import pytest

import ndd_triton as ndd
from ndd_triton import types

# kind, (H, W), a, b, max_size, DALI output (H, W). kinds: longer/shorter/x/y -> resize_<kind>=a;
# xy -> resize_x=a, resize_y=b; nl/ns -> size=(a, b), mode not_larger/not_smaller; *_max and
# def_max (resize_x=a) add max_size.
_DALI_SIZES = [
    ("longer", (13, 42), 29.5, 0.0, 0.0, (9, 30)),
    ("longer", (17, 23), 30.5, 0.0, 0.0, (23, 31)),
    ("longer", (10, 37), 19.5, 89.0999984741211, 77.0, (5, 20)),
    ("longer", (77, 37), 52.5, 26.5, 68.0, (53, 25)),
    ("shorter", (51, 11), 54.5, 42.0, 7.0, (253, 55)),
    ("shorter", (7, 42), 56.75, 53.5, 25.0, (57, 340)),
    ("shorter", (46, 62), 63.5, 24.100000381469727, 60.0, (64, 86)),
    ("x", (25, 1), 69.25, 89.0999984741211, 35.0, (1731, 69)),
    ("nl", (9, 5), 98.0999984741211, 80.5, 21.0, (98, 55)),
    ("nl", (7, 42), 86.25, 3.0, 21.0, (1, 3)),
    ("ns", (68, 49), 42.099998474121094, 44.0, 28.0, (61, 44)),
    ("ns", (30, 70), 12.25, 37.5, 28.0, (16, 38)),
    ("ns", (25, 1), 67.0999984741211, 90.0999984741211, 28.0, (2253, 90)),
    ("nl_max", (51, 48), 4.0, 6.099999904632568, 28.0, (4, 4)),
    ("ns_max", (58, 41), 80.25, 75.75, 85.0, (85, 60)),
    ("y", (70, 16), 92.25, 97.5, 25.0, (92, 21)),
    ("y", (10, 37), 40.099998474121094, 88.25, 18.0, (40, 148)),
    ("def_max", (15, 41), 71.0999984741211, 64.75, 85.0, (26, 71)),
    ("y", (55, 71), 47.099998474121094, 86.0, 25.0, (47, 61)),
    ("xy", (48, 26), 48.25, 60.75, 68.0, (61, 48)),
    ("xy", (45, 16), 77.25, 23.100000381469727, 5.0, (23, 77)),
]


def _kwargs(kind, a, b, m):
    return {"longer": {"resize_longer": a}, "shorter": {"resize_shorter": a},
            "x": {"resize_x": a}, "y": {"resize_y": a}, "xy": {"resize_x": a, "resize_y": b},
            "nl": {"size": [a, b], "mode": "not_larger"},
            "ns": {"size": [a, b], "mode": "not_smaller"},
            "nl_max": {"size": [a, b], "mode": "not_larger", "max_size": m},
            "ns_max": {"size": [a, b], "mode": "not_smaller", "max_size": m},
            "def_max": {"resize_x": a, "max_size": m}}[kind]  # fmt: skip


@pytest.mark.parametrize(("kind", "hw", "a", "b", "m", "expected"), _DALI_SIZES)
def test_resize_output_size_matches_dali(kind, hw, a, b, m, expected):
    x = ndd.as_tensor(np.zeros((*hw, 1), np.uint8), layout="HWC")
    assert tuple(ndd.resize(x, **_kwargs(kind, a, b, m)).shape[:2]) == expected


# DALI 2.4 (recorded): volumes with some extents unrequested scale those by the geometric mean
# of the requested ratios (DHWC 10x20x30).
@pytest.mark.parametrize(("args", "shape"), [
    ({"resize_z": 5.0, "resize_y": 30.0}, (5, 30, 26, 1)),
    ({"size": [7.0, 8.0, 0]}, (7, 8, 16, 1)),
    ({"size": [20.0, 5.0, 0]}, (20, 5, 21, 1)),
    ({"size": [0, 0, 15.0]}, (5, 10, 15, 1)),
])
def test_volume_unrequested_extents_use_geometric_mean(args, shape):
    x = np.zeros((10, 20, 30, 1), np.uint8)
    out = ndd.resize(ndd.as_batch([x], layout="DHWC"), **args)
    assert tuple(np.asarray(out.select(0)).shape) == shape


def test_derived_axis_ignores_reversed_roi():
    # DALI 2.4 (recorded): the W extent follows from resize_y; its reversed ROI is not flipped.
    xx = np.tile(np.arange(9, dtype=np.float32), (8, 1))[..., None]
    out = ndd.resize(ndd.as_batch([xx], layout="HWC"), resize_y=10.0, roi_start=[0.0, 2.8],
                     roi_end=[1.0, 0.4], roi_relative=False, antialias=False)
    row = np.asarray(out.select(0))[0, :6, 0]
    np.testing.assert_allclose(row, [0.0, 0.05, 0.15, 0.25, 0.35, 0.45], atol=1e-5)


def test_identity_axis_uses_mag_filter():
    # DALI 2.4 (recorded): an axis kept at its size uses mag_filter (LANCZOS3: a copy), not
    # min_filter (GAUSSIAN would blur it).
    x = np.random.default_rng(0).uniform(0, 100, (10, 4, 1)).astype(np.float32)
    t = types.DALIInterpType
    out = ndd.resize(ndd.as_batch([x], layout="HWC"), size=[10.0, 4.0], dtype=ndd.float32,
                     min_filter=t.INTERP_GAUSSIAN, mag_filter=t.INTERP_LANCZOS3)
    np.testing.assert_allclose(np.asarray(out.select(0)), x, atol=1e-4)
