"""rotate: independent reference (tests/reference/affine.py) on both backends, canvas rule."""

import math

import numpy as np
import pytest
from _check import check_op, raises_at_call
from reference.affine import affine_ref, rotate_inverse

import ndd_triton as ndd
from ndd_triton.types import DALIInterpType


def _images(shapes, dtype=np.uint8, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 255, size=s).astype(dtype) for s in shapes]


def _canvas(angle, h, w):
    """Spec §1.7: ceil of the rotated box; parity of the nearer input extent (angle converted
    to radians in float32, as DALI does: it decides the "nearer" extent at 45-degree steps)."""
    rad = float(np.float32(angle) * np.float32(math.pi / 180))
    c, s = abs(math.cos(rad)), abs(math.sin(rad))
    ho, wo = math.ceil(w * s + h * c - 0.01), math.ceil(w * c + h * s - 0.01)
    ph, pw = (w, h) if s >= c else (h, w)
    return ho + (ho - ph) % 2, wo + (wo - pw) % 2


def _ref(fill=None, interp=1, keep_size=False, size=None, dtype=None):
    def ref(s, angle, **_):
        hw = s.shape[-3:-1]
        out = hw if keep_size else size if size is not None else _canvas(angle, *hw)
        return affine_ref(s, rotate_inverse(angle, hw, out), out, fill, interp, dtype)

    return ref


def test_rotate_per_sample_angle_ragged_several_tiles():
    samples = _images([(30, 41, 3), (1, 1, 3), (7, 12, 3)])
    check_op(
        ndd.rotate, samples, _ref(), per_sample={"angle": [17.3, 95.0, -33.1]}, layout="HWC", atol=1
    )


@pytest.mark.parametrize("dtype", [np.float32, np.int16])
def test_rotate_fill_keep_size_nn_dtypes(dtype):
    samples = _images([(9, 14, 3), (11, 6, 1)], dtype)
    samples[1] = samples[1][..., :1]
    for sample in samples:
        check_op(
            ndd.rotate,
            [sample],
            _ref(fill=40.0, keep_size=True),
            layout="HWC",
            args={"angle": 31.7, "keep_size": True, "fill_value": 40.0},
            all_modes=False,
            atol=1e-3 if dtype == np.float32 else 1,
        )
    check_op(
        ndd.rotate,
        samples[:1],
        _ref(interp=0),
        layout="HWC",
        all_modes=False,
        args={"angle": 131.7, "interp_type": DALIInterpType.INTERP_NN},
    )


def test_rotate_size_dtype_and_frames():
    frames = _images([(3, 7, 9, 3)])
    check_op(
        ndd.rotate,
        frames,
        _ref(size=(8, 10), dtype=np.float32, fill=1.0),
        layout="FHWC",
        args={"angle": -20.5, "size": [8, 10], "dtype": ndd.float32, "fill_value": 1.0},
        atol=1e-3,
        all_modes=False,
    )


@pytest.mark.parametrize(
    ("hw", "angle", "expected"),
    [
        ((40, 60), 10, (50, 68)),
        ((40, 60), 30, (66, 72)),
        ((40, 60), 45, (72, 72)),
        ((40, 60), 89, (62, 42)),
        ((40, 60), 91, (62, 42)),
        ((40, 60), 90, (60, 40)),
        ((40, 60), 135, (72, 72)),
        ((41, 61), 10, (51, 69)),
        ((41, 61), 45, (73, 73)),
        ((40, 61), 45, (73, 72)),
        ((41, 60), 45, (72, 73)),
        ((18, 43), 25.35, (36, 47)),
    ],
)
def test_rotate_canvas_rule_spec_values(hw, angle, expected):
    out = ndd.rotate(ndd.as_tensor(np.zeros((*hw, 1), np.uint8), layout="HWC"), angle=angle)
    assert tuple(out.shape[:2]) == expected
    assert _canvas(angle, *hw) == expected


def test_rotate_90_is_rot90():
    ramp = np.array([[0, 10, 20, 30], [40, 50, 60, 70], [80, 90, 100, 110]], np.uint8)[..., None]
    for backend in ("cpu", "gpu"):
        x = ndd.as_tensor(ramp, layout="HWC")
        out = ndd.rotate(x.gpu() if backend == "gpu" else x, angle=90)
        np.testing.assert_array_equal(np.asarray(out.cpu())[..., 0], np.rot90(ramp[..., 0]))


def test_rotate_one_launch_per_ragged_batch():
    batch = ndd.as_batch(_images([(3, 5, 3), (9, 2, 3), (4, 4, 3)]), layout="HWC").gpu()
    with ndd.profile() as prof:
        ndd.rotate(batch, angle=ndd.as_batch(np.array([10.0, 20.0, 30.0]))).evaluate()
    (record,) = prof.records
    assert record.gpu_launches == 1


def test_rotate_errors():
    img = np.zeros((4, 5, 3), np.uint8)
    with raises_at_call(TypeError, match="angle"):
        ndd.rotate(img)
    with raises_at_call(ValueError, match="rotate: input 0 has layout 'CHW'"):
        ndd.rotate(ndd.as_tensor(img, layout="CHW"), angle=3)
    with raises_at_call(ValueError, match="rotate: argument 'axis' applies to volumes"):
        ndd.rotate(img, angle=3, axis=[0, 0, 1])
    with raises_at_call(
        ValueError,
        match="argument 'interp_type': only INTERP_NN and "
        "INTERP_LINEAR are supported; got INTERP_LANCZOS3",
    ):
        ndd.rotate(img, angle=3, interp_type=DALIInterpType.INTERP_LANCZOS3)
    with raises_at_call(ValueError, match="argument 'angle' sample 1 expects a finite number"):
        ndd.rotate(ndd.as_batch([img, img]), angle=ndd.as_batch(np.array([1.0, np.inf])))
    with raises_at_call(
        ValueError,
        match=r"argument 'size' sample 0: extents must be finite and "
        r"non-negative; got \[-1.0, 2.0\]",
    ):
        ndd.rotate(img, angle=3, size=[-1, 2])


def test_rotate_volumes_axis_angle():
    from reference.affine import affine_ref_3d

    from ndd_triton.ops._affine import rotation_3d

    rng = np.random.default_rng(5)
    vol = rng.integers(0, 255, (4, 6, 8, 1)).astype(np.uint8)
    for backend in ("cpu", "gpu"):  # spec: 4x6x8, axis (0, 0, 1), 90 degrees -> 4x8x6
        x = ndd.as_tensor(vol, layout="DHWC")
        out = np.asarray(ndd.rotate(x.gpu() if backend == "gpu" else x, angle=90,
                                    axis=[0, 0, 1]).cpu())  # fmt: skip
        np.testing.assert_array_equal(out[..., 0], np.stack([np.rot90(s) for s in vol[..., 0]]))

    def ref(s, angle, axis, **_):
        rot = rotation_3d(angle, np.asarray(axis, np.float64))  # independent check below
        c_in = np.array(s.shape[:3][::-1]) / 2
        m = np.concatenate([rot, (c_in - rot @ c_in)[:, None]], axis=1)
        return affine_ref_3d(s, m, s.shape[:3], 5.0)

    a = math.radians(30)
    expected_z = np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0],
                           [0, 0, 1]])  # fmt: skip
    np.testing.assert_allclose(rotation_3d(30, np.array([0, 0, 2.0])), expected_z, atol=1e-12)
    vols = [vol[:3, :5, :4], vol[:2, :3, :3]]
    check_op(
        ndd.rotate,
        vols,
        ref,
        layout="DHWC",
        atol=1,
        all_modes=False,
        args={"keep_size": True, "fill_value": 5.0},
        per_sample={"angle": [25.0, -70.0], "axis": [np.array([1.0, 2, 3]), np.array([0, 1.0, 0])]},
    )
    with raises_at_call(RuntimeError, match="rotate: Argument axis is required for volumes"):
        ndd.rotate(ndd.as_tensor(vol, layout="DHWC"), angle=3)
    with raises_at_call(ValueError, match=r"argument 'axis' sample 0: expected a non-zero"):
        ndd.rotate(ndd.as_tensor(vol, layout="DHWC"), angle=3, axis=[0, 0, 0])


# (H, W), angle, DALI 2.4's output (H, W): recorded with the real DALI (CPU, dynamic mode) on
# random shapes and angles (tools/dali_diff.py); includes near-multiples of 90 degrees (ceil
# noise), exact 45-degree steps (parity swap), 1-pixel images.
_DALI_CANVASES = [
    ((5, 12), 80.0, (14, 7)),
    ((144, 109), -89.9997329711914, (109, 144)),
    ((114, 129), -180.0004119873047, (114, 129)),
    ((5, 18), 179.99899291992188, (5, 18)),
    ((94, 42), -90.00103759765625, (42, 94)),
    ((9, 28), -0.009200925007462502, (9, 28)),
    ((31, 144), 360.0003356933594, (31, 144)),
    ((263, 234), 89.99952697753906, (234, 263)),
    ((154, 163), 270.0007019042969, (163, 154)),
    ((106, 144), 89.99565887451172, (144, 108)),
    ((75, 145), -90.0002212524414, (145, 75)),
    ((34, 31), 90.0009994506836, (31, 34)),
    ((41, 179), 360.0010681152344, (41, 179)),
    ((34, 37), -90.0009994506836, (37, 34)),
    ((207, 36), -360.0001220703125, (207, 36)),
    ((26, 7), -180.00100708007812, (26, 7)),
    ((27, 3), 90.0009994506836, (3, 27)),
    ((17, 37), -0.0010000000474974513, (17, 37)),
    ((27, 8), 179.99899291992188, (27, 8)),
    ((41, 4), -0.003876103088259697, (41, 4)),
    ((29, 14), 135.0, (31, 32)),
    ((15, 4), -225.0, (15, 14)),
    ((47, 111), -0.0001441141648683697, (47, 111)),
    ((220, 176), -179.99981689453125, (220, 176)),
    ((5, 14), -359.9989929199219, (5, 14)),
    ((99, 172), 0.00394983496516943, (101, 172)),
    ((254, 10), 0.042097657918930054, (254, 12)),
    ((31, 114), -360.0142517089844, (33, 114)),
    ((25, 37), 90.0009994506836, (37, 25)),
    ((69, 205), 90.00211334228516, (205, 69)),
    ((71, 155), 180.00186157226562, (71, 155)),
    ((8, 19), -225.0, (20, 21)),
    ((13, 29), -180.00100708007812, (13, 29)),
    ((26, 4), -90.0009994506836, (4, 26)),
    ((128, 39), 89.99923706054688, (39, 128)),
    ((14, 10), 180.00100708007812, (14, 10)),
    ((5, 66), 90.0002212524414, (66, 5)),
    ((29, 293), -179.99920654296875, (29, 293)),
    ((3, 15), -270.0010070800781, (15, 3)),
    ((203, 60), -179.99118041992188, (203, 62)),
    ((33, 19), 180.00100708007812, (33, 19)),
    ((7, 31), 207.0, (21, 31)),
    ((36, 21), 0.0, (36, 21)),
    ((27, 21), 295.0, (31, 35)),
    ((10, 38), 135.0, (34, 34)),
    ((294, 297), -89.90454864501953, (299, 296)),
    ((17, 29), 270.0, (29, 17)),
    ((28, 162), -360.0508728027344, (30, 164)),
    ((22, 3), 0.0, (22, 3)),
    ((14, 20), -191.0, (18, 24)),
    ((22, 3), -45.0, (19, 18)),
    ((7, 31), 89.0, (33, 9)),
    ((1, 6), 325.89422607421875, (5, 6)),
    ((1, 1), -660.9981079101562, (3, 3)),
    ((1, 1), -270.0, (1, 1)),
    ((1, 1), 2.0, (3, 3)),
    ((1, 1), 105.0, (3, 3)),
    ((1, 22), -179.0, (3, 24)),
    ((1, 27), -90.0, (27, 1)),
    ((1, 22), 225.0, (17, 18)),
    ((1, 34), -315.0, (26, 25)),
    ((34, 1), -288.4148864746094, (13, 34)),
    ((19, 1), -541.0321044921875, (21, 3)),
    ((1, 22), 225.0, (17, 18)),
    ((1, 34), -315.0, (26, 25)),
    ((16, 35), 45.0, (37, 38)),
    ((35, 38), 45.0, (52, 53)),
    ((32, 16), 315.0, (34, 34)),
    ((10, 22), -315.0, (24, 24)),
    ((35, 38), -315.0, (52, 53)),
    ((18, 19), -45.0, (27, 28)),
    ((39, 32), -135.0, (51, 52)),
    ((37, 4), 135.0, (29, 30)),
]


def test_rotate_canvas_matches_dali_recorded():
    hws = [hw for hw, _, _ in _DALI_CANVASES]
    angles = ndd.batch([np.float32(a) for _, a, _ in _DALI_CANVASES])
    imgs = ndd.batch([np.zeros((*hw, 1), np.uint8) for hw in hws], layout="HWC")
    out = ndd.rotate(imgs, angle=angles)
    got = [tuple(int(v) for v in s[:2]) for s in out.shape]
    assert got == [e for _, _, e in _DALI_CANVASES]
    assert [_canvas(a, *hw) for hw, a, _ in _DALI_CANVASES] == got


@pytest.mark.parametrize(
    ("dtype", "fill", "expected"),
    [(np.uint8, 27.3, 27.0), (np.uint8, 27.5, 28.0), (np.uint8, -3.0, 0.0),
     (np.uint8, 300.0, 255.0), (np.int16, 40000.0, 32767.0), (np.int16, -2.5, -3.0),
     (np.int32, 2.5, 3.0), (np.float32, 2.5, 2.5)],
)  # fmt: skip
def test_fill_value_takes_the_input_type_first(dtype, fill, expected):
    # DALI 2.4 (recorded): with dtype=float32 output the fill still goes through the input type
    img = ndd.as_batch([np.full((3, 4, 1), 7, dtype)], layout="HWC")
    mtx = ndd.as_tensor(np.array([[1, 0, 10], [0, 1, 0]], np.float32))
    for dev in ("cpu", "gpu"):
        rot = ndd.rotate(img, angle=30.0, fill_value=fill, dtype=ndd.float32, device=dev).cpu()
        warp = ndd.warp_affine(img, mtx, fill_value=fill, dtype=ndd.float32, device=dev).cpu()
        assert float(np.asarray(rot.select(0))[0, 0, 0]) == expected
        assert float(np.asarray(warp.select(0))[0, 3, 0]) == expected
        # NN writes the fill unconverted (recorded: u8 in, f32 out, fill 102.7 -> 102.7)
        nn = ndd.rotate(img, angle=30.0, fill_value=fill, dtype=ndd.float32, interp_type=0,
                        device=dev).cpu()  # fmt: skip
        assert float(np.asarray(nn.select(0))[0, 0, 0]) == pytest.approx(fill)


# DALI 2.4 NN rotations with keep_size=True and fill_value=-1 of images holding their flat pixel
# index (recorded): the source pixel of every output pixel. These angles put many source points
# on exact pixel boundaries; DALI's float32 coordinates (accumulated along each row) decide them.
_DALI_NN_TIES = [
    ((7, 9), 135.0, [
        [-1, 35, 44, 43, 51, 59, -1, -1, -1],
        [26, 26, 34, 42, 41, 50, 58, -1, -1],
        [17, 25, 24, 32, 41, 40, 48, 57, -1],
        [7, 15, 23, 23, 31, 39, 39, 47, 55],
        [-1, 5, 14, 22, 21, 30, 38, 37, 45],
        [-1, -1, 4, 12, 21, 20, 28, 36, 36],
        [-1, -1, -1, 3, 11, 19, 18, 27, -1],
    ]),
    ((8, 8), 45.0, [
        [-1, -1, 5, 14, 14, 23, -1, -1],
        [-1, 4, 12, 13, 22, 30, 39, -1],
        [2, 11, 12, 20, 29, 38, 38, 47],
        [9, 10, 19, 28, 36, 37, 46, 54],
        [9, 17, 26, 35, 36, 44, 53, 54],
        [16, 25, 33, 34, 43, 52, 52, 61],
        [-1, 24, 33, 41, 50, 51, 60, -1],
        [-1, -1, 40, 49, 49, 58, -1, -1],
    ]),
    ((7, 5), 30.0, [
        [-1, 3, 4, 9, -1],
        [1, 7, 8, 14, -1],
        [6, 12, 13, 18, 19],
        [10, 16, 17, 23, 24],
        [15, 16, 22, 22, 28],
        [-1, 20, 26, 27, 33],
        [-1, 25, 31, 31, -1],
    ]),
    ((7, 5), 120.0, [
        [-1, -1, -1, 29, 34],
        [-1, 19, 24, 28, 33],
        [14, 18, 23, 22, 27],
        [8, 13, 17, 22, 26],
        [7, 12, 16, 16, 20],
        [1, 6, 10, 15, -1],
        [0, 5, -1, -1, -1],
    ]),
    ((7, 5), -30.0, [
        [-1, 5, 1, 1, -1],
        [-1, 10, 6, 7, 3],
        [15, 16, 12, 12, 8],
        [20, 21, 17, 18, 14],
        [26, 22, 23, 18, 19],
        [31, 27, 28, 24, -1],
        [-1, 33, 34, 29, -1],
    ]),
]


@pytest.mark.parametrize(("hw", "angle", "expected"), _DALI_NN_TIES)
def test_rotate_nn_ties_match_dali(hw, angle, expected):
    idx = np.arange(hw[0] * hw[1], dtype=np.float32).reshape(*hw, 1)
    for dev in ("cpu", "gpu"):
        out = ndd.rotate(ndd.as_batch([idx], layout="HWC"), angle=angle, keep_size=True,
                         fill_value=-1.0, interp_type=DALIInterpType.INTERP_NN, device=dev)
        np.testing.assert_array_equal(np.asarray(out.cpu().select(0))[..., 0], expected)


def test_rotate_nn_90_degrees_odd_canvas_matches_dali():
    # DALI 2.4 (recorded): 12x29 image, angle 90, size (25, 23), NN: output row 17 reads input
    # row 0 from column 5 on (cos 90 is ~6e-17 in double, rounded to float32: no drift)
    idx = np.arange(12 * 29, dtype=np.float32).reshape(12, 29, 1)
    for dev in ("cpu", "gpu"):
        out = ndd.rotate(ndd.as_batch([idx], layout="HWC"), angle=90.0, fill_value=-1.0,
                         interp_type=DALIInterpType.INTERP_NN, size=[25, 23], device=dev)
        row = np.asarray(out.cpu().select(0))[17, :, 0]
        assert row[5:11].tolist() == [9, 38, 67, 96, 125, 154]
