"""expand_dims: reference is np.expand_dims at the output positions; layout rules of §4.5."""

import numpy as np
import pytest
from _check import check_op, raises_at_call

import ndd_triton as ndd


def _data(shapes):
    rng = np.random.default_rng(0)
    return [rng.integers(0, 250, size=s).astype(np.uint8) for s in shapes]


@pytest.mark.parametrize("axes", [[0], [1], [2], [0, 3], [3, 0], [0, 1, 2]])
def test_expand_dims_positions(axes):
    samples = _data([(4, 6), (1, 9), (30, 41)])
    check_op(ndd.expand_dims, samples, lambda s, axes: np.expand_dims(s, sorted(axes)),
             args={"axes": axes}, all_modes=axes == [0])  # fmt: skip


@pytest.mark.parametrize(
    ("layout", "axes", "names", "expected"),
    [
        ("HW", [0, 3], "FC", "FHWC"),
        ("HW", [3, 0], "CF", "FHWC"),
        ("HWC", [0], "F", "FHWC"),
        ("HWC", [0, 3], "", None),
        ("HW", [2], "C", "HWC"),
    ],
)
def test_expand_dims_layout(layout, axes, names, expected):
    x = ndd.as_tensor(np.zeros((4, 6, 3)[: len(layout)], np.uint8), layout=layout)
    out = ndd.expand_dims(x, axes=axes, new_axis_names=names)
    assert out.layout == expected
    assert ndd.expand_dims(np.zeros((2, 3)), axes=[0, 2]).shape == (1, 2, 1, 3)


def test_expand_dims_errors():
    x = np.zeros((2, 3), np.uint8)
    with raises_at_call(RuntimeError, match="expand_dims: argument 'axes': Axis value can't be "
                       "negative; got \\[-1\\]"):  # fmt: skip
        ndd.expand_dims(x, axes=[-1])
    with raises_at_call(RuntimeError, match="argument 'axes': axis 4 is out of range for a 4-D "
                       "result"):  # fmt: skip
        ndd.expand_dims(x, axes=[0, 4])
    with raises_at_call(RuntimeError, match="argument 'axes' has repeated values"):
        ndd.expand_dims(x, axes=[1, 1])
    with raises_at_call(RuntimeError, match="argument 'new_axis_names' 'AB' has 2 letters; "
                       "expected one per new axis \\(1\\)"):  # fmt: skip
        ndd.expand_dims(x, axes=[0], new_axis_names="AB")
    with raises_at_call(TypeError, match="missing 1 required keyword-only argument: 'axes'"):
        ndd.expand_dims(x)


def test_expand_dims_one_launch_per_ragged_batch():
    batch = ndd.as_batch(_data([(3, 5), (9, 2)])).gpu()
    with ndd.profile() as prof:
        ndd.expand_dims(batch, axes=[0]).evaluate()
    (record,) = prof.records
    assert record.gpu_launches == 1
