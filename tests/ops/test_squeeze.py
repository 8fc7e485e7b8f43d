"""squeeze: reference is np.squeeze (NumPy semantics for negative axes, spec §4.6)."""

import numpy as np
import pytest
from _check import check_op, raises_at_call

import ndd_triton as ndd


def _data(shapes, dtype=np.uint8):
    rng = np.random.default_rng(0)
    return [rng.integers(0, 250, size=s).astype(dtype) for s in shapes]


@pytest.mark.parametrize("axes", [[2], [-1], [0, 2], [2, -3]])
def test_squeeze_axes(axes):
    samples = _data([(1, 6, 1), (1, 9, 1), (1, 41, 1)], np.float32)
    check_op(ndd.squeeze, samples, lambda s, axes: np.squeeze(s, tuple(axes)),
             args={"axes": axes}, all_modes=axes == [2])  # fmt: skip


def test_squeeze_per_sample_axes():
    samples = _data([(1, 6, 1), (1, 9, 1)])
    check_op(ndd.squeeze, samples, lambda s, axes: np.squeeze(s, tuple(axes.tolist())),
             per_sample={"axes": [np.array([0]), np.array([2])]}, all_modes=False)  # fmt: skip
    out = ndd.squeeze(ndd.as_batch(samples, layout="FWC"),
                      axes=ndd.as_batch([np.array([0]), np.array([2])]))  # fmt: skip
    assert out.layout is None  # different letters removed per sample


@pytest.mark.parametrize(
    ("layout", "kwargs", "expected"),
    [
        ("HWC", {"axis_names": "C"}, "HW"),
        ("FXC", {"axes": [0, 2]}, "X"),
        ("FXC", {"axis_names": "CF"}, "X"),
        ("FXC", {"axes": [-1]}, "FX"),
    ],
)
def test_squeeze_layout(layout, kwargs, expected):
    x = ndd.as_tensor(np.zeros((1, 5, 1), np.uint8), layout=layout)
    assert ndd.squeeze(x, **kwargs).layout == expected


def test_squeeze_zero_volume_allows_any_axis():
    out = ndd.squeeze(np.zeros((0, 3), np.uint8), axes=[1])
    assert out.shape == (0,)


def test_squeeze_errors():
    x = ndd.as_tensor(np.zeros((1, 5, 1), np.uint8), layout="HWC")
    with raises_at_call(RuntimeError, match="squeeze: give exactly one of 'axes' and "
                       "'axis_names'; got neither"):  # fmt: skip
        ndd.squeeze(x)
    with raises_at_call(RuntimeError, match="got both"):
        ndd.squeeze(x, axes=[0], axis_names="H")
    with raises_at_call(RuntimeError, match="squeeze: sample 0: cannot remove axis 1 of extent 5"):
        ndd.squeeze(x, axes=[1])
    with raises_at_call(RuntimeError, match="argument 'axes' sample 0: axis 3 is out of range for "
                       "3-D input"):  # fmt: skip
        ndd.squeeze(x, axes=[3])
    with raises_at_call(RuntimeError, match="argument 'axis_names' 'D': axis 'D' is not in the "
                       "input layout 'HWC'"):  # fmt: skip
        ndd.squeeze(x, axis_names="D")
    batch = ndd.as_batch([np.zeros((1, 1, 2))] * 2)
    with raises_at_call(RuntimeError, match="must remove the same number of axes from every"):
        ndd.squeeze(batch, axes=ndd.as_batch([np.array([0]), np.array([0, 1])]))


def test_squeeze_one_launch_per_ragged_batch():
    batch = ndd.as_batch(_data([(3, 1), (9, 1)])).gpu()
    with ndd.profile() as prof:
        ndd.squeeze(batch, axes=[1]).evaluate()
    (record,) = prof.records
    assert record.gpu_launches == 1
