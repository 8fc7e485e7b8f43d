"""transpose: reference is np.transpose; layout rules of ops.md §4.3."""

import numpy as np
import pytest
from _check import check_op, raises_at_call

import ndd_triton as ndd


def _data(shapes, dtype=np.uint8, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 250, size=s).astype(dtype) for s in shapes]


@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.int64])
def test_transpose_ragged_hwc_to_chw(dtype):
    samples = _data([(5, 7, 3), (1, 1, 3), (30, 41, 3)], dtype)  # several tiles in sample 2
    check_op(ndd.transpose, samples, lambda s, perm: np.transpose(s, perm),
             args={"perm": [2, 0, 1]}, layout="HWC")  # fmt: skip


@pytest.mark.parametrize(
    ("shape", "perm"),
    [
        ((2, 3, 4, 5), [3, 1, 0, 2]),
        ((6,), [0]),
        ((2, 3, 1, 2, 3, 2), [5, 4, 3, 2, 1, 0]),
        ((4, 0, 3), [1, 2, 0]),
    ],
)
def test_transpose_ranks_and_empty(shape, perm):
    samples = _data([shape, tuple(max(1, v - 1) if v else 0 for v in shape)], np.int16)
    check_op(ndd.transpose, samples, lambda s, perm: np.transpose(s, perm), args={"perm": perm},
             all_modes=False)  # fmt: skip


def test_transpose_default_reverses_axes():
    samples = _data([(2, 3, 4), (4, 1, 2)])
    check_op(ndd.transpose, samples, lambda s: np.transpose(s), all_modes=False)


@pytest.mark.parametrize(
    ("kwargs", "layout"),
    [
        ({"perm": [2, 0, 1]}, "CHW"),
        ({}, "CWH"),
        ({"perm": [2, 0, 1], "transpose_layout": False}, "HWC"),
        ({"perm": [1, 2, 0], "output_layout": "XYZ"}, "XYZ"),
        ({"perm": [1, 0, 2], "transpose_layout": False, "output_layout": "ABC"}, "ABC"),
    ],
)
def test_transpose_layout_rules(kwargs, layout):
    x = ndd.as_tensor(np.zeros((2, 3, 4), np.uint8), layout="HWC")
    assert ndd.transpose(x, **kwargs).layout == layout
    assert ndd.transpose(np.zeros((2, 3)), perm=[1, 0]).layout is None


def test_transpose_errors():
    x = np.zeros((2, 3, 4), np.uint8)
    with raises_at_call(RuntimeError, match="transpose: argument 'perm' has 2 entries; expected "
                       "one per input dimension \\(3\\)"):  # fmt: skip
        ndd.transpose(x, perm=[1, 0])
    with raises_at_call(RuntimeError, match="transpose: argument 'perm': Invalid permutation "
                       "\\[0, 0, 1\\]"):  # fmt: skip
        ndd.transpose(x, perm=[0, 0, 1])
    with raises_at_call(RuntimeError, match="Invalid permutation \\[-1, 0, 1\\]"):
        ndd.transpose(x, perm=[-1, 0, 1])
    with raises_at_call(ValueError, match="transpose: argument 'output_layout' 'AB' has 2 letters; "
                       "expected 3"):  # fmt: skip
        ndd.transpose(x, output_layout="AB")
    with raises_at_call(TypeError, match="transpose: argument 'perm' does not accept a Tensor"):
        ndd.transpose(x, perm=ndd.as_tensor(np.array([0, 1, 2])))


def test_transpose_one_launch_per_ragged_batch():
    batch = ndd.as_batch(_data([(3, 5, 3), (9, 2, 3), (1, 1, 3)]), layout="HWC").gpu()
    with ndd.profile() as prof:
        ndd.transpose(batch, perm=[2, 0, 1]).evaluate()
    (record,) = prof.records
    assert record.gpu_launches == 1


@pytest.mark.parametrize("perm", [[2, 0, 1], [1, 2, 0], [1, 0, 2], [0, 1, 2]])
def test_transpose_row_tiles_split_rows_and_samples(small_tiles, perm):
    samples = _data([(7, 13, 3), (1, 1, 3), (9, 5, 3)])
    check_op(ndd.transpose, samples, lambda s, perm: np.transpose(s, perm),
             args={"perm": perm}, all_modes=False)  # fmt: skip
