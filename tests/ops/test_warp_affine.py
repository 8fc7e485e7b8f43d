"""warp_affine: independent float64 reference (tests/reference/affine.py) on both backends."""

import numpy as np
import pytest
from _check import check_op, raises_at_call
from reference.affine import affine_ref, affine_ref_3d

import ndd_triton as ndd
from ndd_triton.types import DALIInterpType

M = [0.8231, 0.4155, 1.42, -0.4285, 0.8231, -1.79]  # no exact NN ties


def _images(shapes, dtype=np.uint8, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 255, size=s).astype(dtype) for s in shapes]


def _inv(m):
    a = np.vstack([np.reshape(m, (2, 3)), [0, 0, 1]])
    return np.linalg.inv(a)[:2]


def _ref(size=None, fill=None, interp=1, inverse=True, dtype=None):
    def ref(s, matrix, **_):
        m = np.reshape(matrix, (2, 3)) if inverse else _inv(matrix)
        hw = s.shape[-3:-1] if size is None else size
        return affine_ref(s, m, hw, fill, interp, dtype)

    return ref


@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.int16])
def test_warp_affine_ragged_fill_and_size(dtype):
    samples = _images([(30, 41, 3), (1, 1, 3), (7, 13, 3)], dtype)
    check_op(
        ndd.warp_affine,
        samples,
        _ref(size=(9, 14), fill=17.0),
        args={"matrix": M, "size": [9, 14], "fill_value": 17.0},
        layout="HWC",
        atol=1 if dtype != np.float32 else 1e-3,
        all_modes=dtype == np.uint8,
    )


def test_warp_affine_clamp_nn_several_tiles():
    samples = _images([(30, 41, 3), (7, 13, 1)])
    samples[1] = samples[1][..., :1]
    check_op(
        ndd.warp_affine,
        samples[:1],
        _ref(interp=0),
        args={"matrix": M, "interp_type": DALIInterpType.INTERP_NN},
        layout="HWC",
        all_modes=False,
    )
    check_op(
        ndd.warp_affine,
        samples[1:],
        _ref(),
        args={"matrix": M},
        layout="HWC",
        atol=1,
        all_modes=False,
    )


@pytest.mark.parametrize("shape", [(2, 3), (6,)])
def test_warp_affine_per_sample_matrix_shapes_and_inverse_map(shape):
    samples = _images([(12, 10, 3), (9, 15, 3)])
    mats = [
        np.array(M, np.float32).reshape(shape),
        np.array([1.1, -0.2, 2.0, 0.1, 0.9, -1.0], np.float32).reshape(shape),
    ]
    check_op(
        ndd.warp_affine,
        samples,
        _ref(inverse=False),
        per_sample={"matrix": mats},
        args={"inverse_map": False},
        layout="HWC",
        atol=1,
        all_modes=False,
    )


def test_warp_affine_matrix_as_input_and_frames():
    frames = _images([(2, 8, 11, 3)])[0]
    mats = ndd.as_batch([np.array(M, np.float32).reshape(2, 3)])
    for backend in ("cpu", "gpu"):
        data = ndd.as_batch([frames], layout="FHWC")
        data, m = (data.gpu(), mats.gpu()) if backend == "gpu" else (data, mats)
        out = ndd.warp_affine(data, m, fill_value=3.0, dtype=ndd.float32)
        assert out.layout == "FHWC"
        got = np.asarray(out.cpu().select(0))
        np.testing.assert_allclose(
            got,
            affine_ref(frames, np.reshape(M, (2, 3)), (8, 11), 3.0, dtype=np.float32),
            atol=1e-3,
        )


def test_warp_affine_transforms_matrix_is_accepted():
    img = _images([(6, 9, 1)])[0]
    m = ndd.transforms.translation(offset=[1.0, 2.0])
    out = np.asarray(ndd.warp_affine(img, matrix=m, inverse_map=False, fill_value=0.0))
    expected = affine_ref(img, [[1, 0, -1], [0, 1, -2]], (6, 9), 0.0)
    np.testing.assert_array_equal(out, expected)


def test_warp_affine_spec_examples():
    ramp = np.array([[0, 10, 20, 30], [40, 50, 60, 70], [80, 90, 100, 110]], np.uint8)[..., None]
    out = np.asarray(ndd.warp_affine(ramp, matrix=[1, 0, 1, 0, 1, 0]))[..., 0]
    np.testing.assert_array_equal(out[0], [10, 20, 30, 30])
    out = np.asarray(ndd.warp_affine(ramp, matrix=[1, 0, 1, 0, 1, 0], inverse_map=False))[..., 0]
    np.testing.assert_array_equal(out[0], [0, 0, 10, 20])
    out = np.asarray(ndd.warp_affine(ramp, matrix=[0.5, 0, 0, 0, 0.5, 0]))[..., 0]
    np.testing.assert_array_equal(out[0], [0, 3, 8, 13])
    np.testing.assert_array_equal(out[1], [10, 13, 18, 23])


def test_warp_affine_one_launch_per_ragged_batch():
    batch = ndd.as_batch(_images([(3, 5, 3), (9, 2, 3), (4, 4, 3)]), layout="HWC").gpu()
    with ndd.profile() as prof:
        ndd.warp_affine(batch, matrix=M, size=[5, 6]).evaluate()
    (record,) = prof.records
    assert record.gpu_launches == 1


def test_warp_affine_errors():
    img = np.zeros((4, 5, 3), np.uint8)
    with raises_at_call(RuntimeError, match="warp_affine: no transform given"):
        ndd.warp_affine(img)
    with raises_at_call(
        RuntimeError,
        match=r"argument 'matrix' sample 0: matrix parameter must "
        r"have 6 elements \(2x3\); got shape \(9,\)",
    ):
        ndd.warp_affine(img, matrix=list(range(9)))
    with raises_at_call(
        RuntimeError,
        match=r"input 1 \(mtx\) sample 0: expected a \(2, 3\) "
        r"matrix; got shape \(6,\)",
    ):
        ndd.warp_affine(img, ndd.as_tensor(np.zeros(6, np.float32)))
    with raises_at_call(ValueError, match="given both as input 1 and as argument 'matrix'"):
        ndd.warp_affine(img, ndd.as_tensor(np.eye(2, 3, dtype=np.float32)), matrix=M)
    with raises_at_call(
        ValueError,
        match="argument 'interp_type': only INTERP_NN and "
        "INTERP_LINEAR are supported; got INTERP_CUBIC",
    ):
        ndd.warp_affine(img, matrix=M, interp_type=DALIInterpType.INTERP_CUBIC)
    with raises_at_call(ValueError, match="sample 1: the affine matrix is singular"):
        ndd.warp_affine(
            ndd.as_batch([img, img]),
            inverse_map=False,
            matrix=ndd.as_batch([np.eye(2, 3), np.zeros((2, 3))]),
        )
    with raises_at_call(
        ValueError,
        match=r"argument 'size' sample 0: expected 2 values \(H, W\); "
        "got 3",
    ):
        ndd.warp_affine(img, matrix=M, size=[1, 2, 3])
    with raises_at_call(ValueError, match="warp_affine: input 0 has layout 'CHW'"):
        ndd.warp_affine(ndd.as_tensor(img, layout="CHW"), matrix=M)
    with raises_at_call(ValueError, match="argument 'dtype': expected one of"):
        ndd.warp_affine(img, matrix=M, dtype=ndd.float64)


M3 = [0.91, 0.12, -0.05, 0.7, -0.1, 0.88, 0.2, -0.4, 0.07, 0.03, 1.1, 0.3]


def test_warp_affine_volumes_and_frames():
    rng = np.random.default_rng(4)
    vols = [rng.integers(0, 255, (4, 5, 6, 2)).astype(np.uint8),
            rng.integers(0, 255, (3, 7, 2, 2)).astype(np.uint8)]  # fmt: skip
    m = np.reshape(M3, (3, 4))
    check_op(ndd.warp_affine, vols,
             lambda s, **_: affine_ref_3d(s, m, (3, 4, 5), 11.0),
             args={"matrix": M3, "size": [3, 4, 5], "fill_value": 11.0}, layout="DHWC", atol=1,
             all_modes=False)  # fmt: skip
    check_op(
        ndd.warp_affine,
        vols[:1],
        lambda s, **_: affine_ref_3d(s, m, s.shape[:3], None, 0),
        args={
            "matrix": ndd.as_tensor(m.astype(np.float32)),
            "interp_type": DALIInterpType.INTERP_NN,
        },
        layout="DHWC",
        all_modes=False,
    )
    frames = [rng.integers(0, 255, (2, 3, 4, 5, 1)).astype(np.float32)]
    check_op(
        ndd.warp_affine,
        frames,
        lambda s, **_: affine_ref_3d(s, m, (3, 4, 5)),
        args={"matrix": M3},
        layout="FDHWC",
        atol=1e-3,
        all_modes=False,
    )
    with raises_at_call(RuntimeError, match=r"matrix parameter must have 12 elements \(3x4\)"):
        ndd.warp_affine(ndd.as_tensor(vols[0], layout="DHWC"), matrix=M)


def _small_blocks(monkeypatch, module):
    """Tiny GPU program shapes (2 rows x 4 pixels, 8-pixel spans): several row blocks, column
    spans, steps and ragged tails per sample at tens of pixels."""
    monkeypatch.setattr(module, "BLOCK_Y", 2)
    monkeypatch.setattr(module, "BLOCK_X", 4)
    monkeypatch.setattr(module, "SPAN", 8)
    if hasattr(module, "ROW_BLOCK_Y"):
        monkeypatch.setattr(module, "ROW_BLOCK_Y", 2)
        monkeypatch.setattr(module, "ROW_BLOCK_X", 4)


@pytest.mark.parametrize("interp", [0, 1])
@pytest.mark.parametrize("fill", [None, 23.0])
def test_warp_affine_gpu_row_blocks_channels_and_tails(monkeypatch, interp, fill):
    from ndd_triton.kernels.gpu import warp_affine as gpu_warp

    _small_blocks(monkeypatch, gpu_warp)
    mixed = _images([(9, 19, 3), (5, 9, 1), (7, 11, 5), (1, 1, 2), (3, 2, 4)], seed=3)
    args = {"matrix": M, "size": [11, 17], "interp_type": interp}
    if fill is not None:
        args["fill_value"] = fill
    # one channel count per batch (constexpr CH) and mixed counts (CH from the sample table)
    for group in (mixed[:1], mixed[1:2], mixed[3:4], mixed[4:], mixed):
        check_op(ndd.warp_affine, group, _ref(size=(11, 17), fill=fill, interp=interp),
                 args=args, layout="HWC", atol=1 if interp else 0, all_modes=False,
                 backends=("gpu",))  # fmt: skip


def test_warp_affine_gpu_volume_row_blocks(monkeypatch):
    from ndd_triton.kernels.gpu import warp_affine as gpu_warp

    _small_blocks(monkeypatch, gpu_warp)
    rng = np.random.default_rng(8)
    vols = [rng.integers(0, 255, (3, 5, 9, 3)).astype(np.uint8),
            rng.integers(0, 255, (2, 3, 2, 1)).astype(np.uint8)]  # fmt: skip
    m = np.reshape(M3, (3, 4))
    for interp, fill in ((1, 11.0), (0, None)):
        args = {"matrix": M3, "size": [3, 5, 10], "interp_type": interp}
        if fill is not None:
            args["fill_value"] = fill
        check_op(ndd.warp_affine, vols,
                 lambda s, interp=interp, fill=fill, **_: affine_ref_3d(s, m, (3, 5, 10), fill,
                                                                        interp),
                 args=args, layout="DHWC", atol=1, all_modes=False,
                 backends=("gpu",))  # fmt: skip


def test_block_tile_counts_cover_each_block_once():
    from ndd_triton.kernels.gpu._tiles import block_tile_counts

    planes, rows, cols = np.array([2, 1, 0, 3]), np.array([5, 1, 4, 0]), np.array([7, 20, 3, 2])
    counts = block_tile_counts(planes, rows, cols, 2, 8)
    expected = [sum(1 for p in range(planes[s]) for y in range(0, rows[s], 2)
                    for x in range(0, cols[s], 8)) for s in range(4)]  # fmt: skip
    assert counts.tolist() == expected
    assert block_tile_counts(np.zeros(0), np.zeros(0), np.zeros(0), 2, 8).shape == (0,)


@pytest.mark.parametrize("interp", [0, 1])
def test_warp_affine_gpu_int64_addresses(monkeypatch, interp):
    """The int64 in-plane address path (taken for planes of 2**31 elements and more), forced on
    small images and volumes."""
    from ndd_triton.kernels.gpu import warp_affine as gpu_warp

    monkeypatch.setattr(gpu_warp, "I32_LIMIT", 1)
    images = _images([(9, 13, 3), (4, 5, 3)], seed=9)
    check_op(ndd.warp_affine, images, _ref(fill=4.0, interp=interp),
             args={"matrix": M, "fill_value": 4.0, "interp_type": interp}, layout="HWC",
             atol=1 if interp else 0, all_modes=False, backends=("gpu",))  # fmt: skip
    vol = [np.random.default_rng(1).integers(0, 255, (3, 4, 5, 2)).astype(np.uint8)]
    m = np.reshape(M3, (3, 4))
    check_op(ndd.warp_affine, vol, lambda s, **_: affine_ref_3d(s, m, s.shape[:3], None, interp),
             args={"matrix": M3, "interp_type": interp}, layout="DHWC", atol=1,
             all_modes=False, backends=("gpu",))  # fmt: skip
