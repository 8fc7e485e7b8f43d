"""transforms.*: independent NumPy 3x3 homogeneous references; composition with warp_affine."""

import math

import numpy as np
from _check import raises_at_call
from reference.affine import affine_ref

import ndd_triton as ndd


def h(m):
    """(2, 3) -> 3x3 homogeneous."""
    return np.vstack([np.asarray(m, np.float64).reshape(2, 3), [0, 0, 1]])


def T(tx, ty):
    return np.array([[1, 0, tx], [0, 1, ty], [0, 0, 1]], np.float64)


def R(deg):
    c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def S(sx, sy):
    return np.diag([sx, sy, 1.0])


def close(got, expected):
    got = np.asarray(got)
    assert got.dtype == np.float32
    assert got.shape == (2, 3)
    np.testing.assert_allclose(got, np.asarray(expected)[:2], atol=1e-6)


def test_basic_matrices():
    close(ndd.transforms.translation(offset=[3, -2]), T(3, -2))
    close(ndd.transforms.scale(scale=[2, 0.5], center=[4, 6]), T(4, 6) @ S(2, 0.5) @ T(-4, -6))
    close(ndd.transforms.scale(scale=3.0), S(3, 3))
    close(ndd.transforms.rotation(angle=30, center=[1, 2]), T(1, 2) @ R(30) @ T(-1, -2))
    shear = np.array([[1, 0.2, 0], [0.3, 1, 0], [0, 0, 1]])
    close(ndd.transforms.shear(shear=[0.2, 0.3], center=[5, 5]), T(5, 5) @ shear @ T(-5, -5))
    tan = np.array(
        [[1, math.tan(math.radians(10)), 0], [math.tan(math.radians(-20)), 1, 0], [0, 0, 1]]
    )
    close(ndd.transforms.shear(angles=[10, -20]), tan)
    close(
        ndd.transforms.crop(from_start=[1, 2], from_end=[3, 6], to_start=[0, 0], to_end=[1, 1]),
        S(0.5, 0.25) @ T(-1, -2),
    )
    close(
        ndd.transforms.crop(from_start=[3, 6], from_end=[1, 2], absolute=True),
        S(0.5, 0.25) @ T(-1, -2),
    )


def test_chaining_and_combine_order():
    t = ndd.transforms.translation(offset=[1, 2])
    close(ndd.transforms.rotation(t, angle=40), R(40) @ T(1, 2))
    close(ndd.transforms.rotation(t, angle=40, reverse_order=True), T(1, 2) @ R(40))
    s = ndd.transforms.scale(scale=[2, 3])
    r = ndd.transforms.rotation(angle=15)
    close(ndd.transforms.combine(t, s, r), R(15) @ S(2, 3) @ T(1, 2))
    close(ndd.transforms.combine(t, s, r, reverse_order=True), T(1, 2) @ S(2, 3) @ R(15))


def test_per_sample_args_give_a_batch():
    angles = ndd.as_batch(np.array([10.0, 20.0, -35.0], np.float32))
    centers = ndd.as_batch([np.array([1, 1.0]), np.array([0, 3.0]), np.array([2, 2.0])])
    out = ndd.transforms.rotation(angle=angles, center=centers)
    assert isinstance(out, ndd.Batch)
    assert out.batch_size == 3
    for got, a, c in zip(out, [10, 20, -35], [(1, 1), (0, 3), (2, 2)], strict=False):
        close(got, T(*c) @ R(a) @ T(-c[0], -c[1]))


def test_composed_matrix_drives_warp_affine_on_both_backends():
    img = np.random.default_rng(0).integers(0, 255, (9, 12, 3)).astype(np.uint8)
    m = ndd.transforms.combine(
        ndd.transforms.rotation(angle=20, center=[6, 4.5]),
        ndd.transforms.translation(offset=[1.5, -1]),
    )
    expected_forward = T(1.5, -1) @ T(6, 4.5) @ R(20) @ T(-6, -4.5)
    expected = affine_ref(img, np.linalg.inv(expected_forward)[:2], (9, 12), fill=0.0)
    for backend in ("cpu", "gpu"):
        x = ndd.as_tensor(img, layout="HWC")
        x = x.gpu() if backend == "gpu" else x
        out = ndd.warp_affine(x, matrix=m, inverse_map=False, fill_value=0.0)
        np.testing.assert_allclose(np.asarray(out.cpu()).astype(int), expected, atol=1)
    batch = ndd.as_batch([img, img[:5]], layout="HWC")
    mats = ndd.transforms.translation(offset=ndd.as_batch([np.array([1.0, 0]), np.array([0, 2.0])]))
    out = ndd.warp_affine(batch, mats, fill_value=0.0)  # matrices as the second input
    for got, sample, off in zip(out, [img, img[:5]], [(1, 0), (0, 2)], strict=False):
        np.testing.assert_array_equal(
            np.asarray(got), affine_ref(sample, T(*off)[:2], sample.shape[:2], 0.0)
        )


def test_transforms_errors():
    with raises_at_call(TypeError, match="offset"):
        ndd.transforms.translation()
    with raises_at_call(
        ValueError,
        match=r"transforms.translation: argument 'offset' sample 0: "
        r"only 2-D transforms are supported: expected 2 values",
    ):
        ndd.transforms.translation(offset=[1, 2, 3])
    with raises_at_call(
        ValueError,
        match=r"transforms\.shear: give exactly one of 'shear' and "
        "'angles'",
    ):
        ndd.transforms.shear()
    with raises_at_call(
        ValueError,
        match=r"argument 'angles' sample 0: shear angles must be in "
        r"\(-90, 90\)",
    ):
        ndd.transforms.shear(angles=[90, 0])
    with raises_at_call(ValueError, match=r"transforms\.combine: expects at least 2 transforms"):
        ndd.transforms.combine(ndd.transforms.translation(offset=[1, 1]))
    with raises_at_call(
        ValueError,
        match=r"transforms.rotation: input 0 sample 0: expected a "
        r"\(2, 3\) transform; got shape \(4,\)",
    ):
        ndd.transforms.rotation(np.zeros(4, np.float32), angle=3)
    with raises_at_call(ValueError, match=r"transforms\.crop: sample 0: the source box is empty"):
        ndd.transforms.crop(from_start=[1, 1], from_end=[1, 2])
    with raises_at_call(ValueError, match="argument 'axis' is for 3-D rotations"):
        ndd.transforms.rotation(angle=3, axis=[0, 0, 1])
    with raises_at_call(ValueError, match="not supported"):
        ndd.transforms.translation(offset=[1, 1], device="gpu")
