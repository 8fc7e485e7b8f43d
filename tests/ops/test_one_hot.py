"""one_hot: an independent loop reference (ops.md §4.10)."""

import numpy as np
import pytest
from _check import check_op, raises_at_call

import ndd_triton as ndd


def ref_one_hot(sample, num_classes, axis=-1, dtype=np.float32, on_value=1.0, off_value=0.0):
    ids = np.asarray(sample)  # the legacy (1,) -> scalar rule is batch-wide: tested separately
    flat = ids.reshape(-1)
    table = np.full((flat.size, num_classes), off_value, dtype=np.float64)
    for k, v in enumerate(flat.tolist()):
        cls = int(v) if v == v else -1  # int() truncates toward zero
        if 0 <= cls < num_classes:
            table[k, cls] = on_value
    out = table.reshape(*ids.shape, num_classes)
    pos = ids.ndim if axis == -1 else axis
    return np.moveaxis(out, -1, pos).astype(dtype)


@pytest.mark.parametrize("axis", [-1, 0, 1, 2])
def test_one_hot_axes_ragged(axis):
    rng = np.random.default_rng(0)
    samples = [rng.integers(-2, 7, size=s).astype(np.int32) for s in [(3, 4), (1, 2), (9, 30)]]
    check_op(ndd.one_hot, samples, lambda s, **a: ref_one_hot(s, **a),
             args={"num_classes": 5, "axis": axis}, all_modes=axis == -1)  # fmt: skip


@pytest.mark.parametrize(
    ("dtype", "on", "off"),
    [(np.uint8, 300.0, -2.6), (np.int32, 7, -1), (np.float16, 0.5, 0.25), (np.bool_, 1, 0)],
)
def test_one_hot_dtype_and_values(dtype, on, off):
    samples = [
        np.array([0.0, 1.7, -0.5, 2.99, np.nan, 4.0], np.float32),
        np.array([3.2, -7.0], np.float32),
    ]
    # DALI 2.4 truncates and wraps: 300 -> 44, -2.6 -> -2 -> 254 in uint8
    expected_on, expected_off = (44, 254) if dtype == np.uint8 else (on, off)

    def ref(s, **a):
        return ref_one_hot(s, 4, on_value=expected_on, off_value=expected_off, dtype=dtype)

    check_op(ndd.one_hot, samples, ref, args={"num_classes": 4, "dtype": ndd.dtype(dtype),
                                              "on_value": on, "off_value": off},
             all_modes=False)  # fmt: skip


def test_one_hot_scalars_and_legacy_single_element():
    scalars = [np.array(2, np.int64), np.array(0, np.int64)]
    check_op(ndd.one_hot, scalars, lambda s, num_classes: ref_one_hot(s, num_classes),
             args={"num_classes": 4}, all_modes=False)  # fmt: skip
    out = ndd.one_hot(ndd.as_batch([np.array([1]), np.array([3])]), num_classes=4)
    assert out.shape == [(4,), (4,)]
    # DALI 2.4 (recorded): an explicit axis, even -1, turns the legacy rule off
    ones = ndd.as_batch([np.array([1], np.int32), np.array([2], np.int32)])
    assert ndd.one_hot(ones, num_classes=3, axis=-1).shape == [(1, 3), (1, 3)]
    assert ndd.one_hot(ones, num_classes=3, axis=0).shape == [(3, 1), (3, 1)]
    assert np.asarray(ndd.one_hot(ones, num_classes=3, axis=1).select(0)).tolist() == [[0, 1, 0]]
    assert ndd.one_hot(ones, num_classes=3, dtype=ndd.int32).shape == [(3,), (3,)]
    assert ndd.one_hot(np.array([1, 2]), num_classes=0).shape == (2, 0)


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_one_hot_legacy_rule_covers_any_single_element_shape(backend):
    """DALI 2.4 (recorded with tools/dali_diff.py, seeds 22/23): samples that all hold one
    element count as scalars whatever their rank; layouts are dropped, axis_name names the
    new axis; one sample of two elements turns the rule off for the batch."""
    def run(shapes, layout=None, **kw):
        b = ndd.batch([np.full(s, 1, np.int32) for s in shapes], layout=layout)
        return ndd.one_hot(b.gpu() if backend == "gpu" else b, num_classes=3, **kw)

    out = run([(1, 1), (1, 1)])
    assert out.shape == [(3,), (3,)]
    assert np.asarray(out.cpu().select(0)).tolist() == [0, 1, 0]
    assert run([(1, 1, 1)]).shape == [(3,)]
    assert run([(1, 1)], "HW").layout is None
    assert run([(1, 1)], "HW", axis_name="C").layout == "C"
    assert run([(1, 1), (2, 1)]).shape == [(1, 1, 3), (2, 1, 3)]
    assert run([(1, 1)], axis=-1).shape == [(1, 1, 3)]
    assert run([(1, 1)], axis=1).shape == [(1, 3, 1)]


def test_one_hot_layout():
    x = ndd.as_tensor(np.array([0, 2], np.int32), layout="W")
    assert ndd.one_hot(x, num_classes=3, axis_name="C").layout == "WC"
    assert ndd.one_hot(x, num_classes=3, axis=0, axis_name="K").layout == "KW"
    assert ndd.one_hot(x, num_classes=3).layout is None


def test_one_hot_errors():
    x = np.array([0, 1], np.int32)
    with raises_at_call(RuntimeError, match="one_hot: argument 'axis' 3 is out of range for 1-D "
                       "input \\(expected -1 or 0\\.\\.1\\)"):  # fmt: skip
        ndd.one_hot(x, num_classes=3, axis=3)
    with raises_at_call(ValueError, match="one_hot: argument 'num_classes' must be non-negative; "
                       "got -1"):  # fmt: skip
        ndd.one_hot(x, num_classes=-1)
    with raises_at_call(TypeError, match="one_hot: argument 'dtype' is bfloat16"):
        ndd.one_hot(x, num_classes=2, dtype=ndd.bfloat16)
    with raises_at_call(ValueError, match="one_hot: argument 'axis_name' must be one letter"):
        ndd.one_hot(x, num_classes=2, axis_name="AB")


def test_one_hot_one_launch_per_ragged_batch():
    batch = ndd.as_batch([np.array([1, 2, 3]), np.array([0])]).gpu()
    with ndd.profile() as prof:
        ndd.one_hot(batch, num_classes=4).evaluate()
    (record,) = prof.records
    assert record.gpu_launches == 1


# DALI 2.4 (recorded on x86-64): on_value -> output value, per dtype (C++ float -> int casts).
_VALUES = [197.8, -1.6, 300.7, -300.2, 1e10, -1e10, 70000.5, 0.5, -0.5, 2.5, 3e9, -3e9]
_DALI_ON_VALUES = {
    "uint8": [197, 255, 44, 212, 0, 0, 112, 0, 0, 2, 0, 0],
    "int8": [-59, -1, 44, -44, 0, 0, 112, 0, 0, 2, 0, 0],
    "int16": [197, -1, 300, -300, 0, 0, 4464, 0, 0, 2, 0, 0],
    "uint16": [197, 65535, 300, 65236, 0, 0, 4464, 0, 0, 2, 0, 0],
    "int32": [197, -1, 300, -300, -(2**31), -(2**31), 70000, 0, 0, 2, -(2**31), -(2**31)],
    "uint32": [197, 2**32 - 1, 300, 4294966996, 1410065408, 2884901888, 70000, 0, 0, 2,
               3000000000, 1294967296],
    "int64": [197, -1, 300, -300, 10**10, -(10**10), 70000, 0, 0, 2, 3 * 10**9, -3 * 10**9],
}  # fmt: skip


@pytest.mark.parametrize("dtype", list(_DALI_ON_VALUES))
def test_one_hot_on_off_value_conversion_matches_dali(dtype):
    x = ndd.as_tensor(np.array([0, 1], np.int32))
    for dev in ("cpu", "gpu"):
        got = []
        for v in _VALUES:
            out = ndd.one_hot(x, num_classes=2, dtype=getattr(ndd, dtype), on_value=7.0,
                              off_value=v, device=dev).cpu()  # fmt: skip
            arr = np.asarray(out)
            assert arr[0, 0] == 7
            got.append(int(arr[0, 1]))
        assert got == _DALI_ON_VALUES[dtype]
