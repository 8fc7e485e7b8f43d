"""lookup_table: a dict-based reference (ops.md §4.11)."""

import numpy as np
import pytest
from _check import check_op, raises_at_call

import ndd_triton as ndd

KEYS = [0, 2, 3, 4, 5, 3, 65535]
VALUES = [0.2, 0.4, 0.5, 0.6, 0.7, 0.1, 9.5]


def ref_lookup(sample, keys, values, default_value=0.0, dtype=np.float32):
    table = dict(zip(keys, values, strict=False))  # later duplicates overwrite earlier ones
    flat = [table.get(int(v), default_value) for v in np.asarray(sample).reshape(-1).tolist()]
    out = np.array(flat, dtype=np.float64).reshape(np.shape(sample))
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        out = np.clip(np.sign(out) * np.floor(np.abs(out) + 0.5), info.min, info.max)
    return out.astype(dtype)


@pytest.mark.parametrize("in_dtype", [np.uint8, np.int16, np.int32, np.int64, np.uint16])
def test_lookup_table_integer_inputs(in_dtype):
    info = np.iinfo(in_dtype)
    values = np.array([0, 1, 2, 3, 4, 5, 6, info.max, info.min], dtype=np.int64)
    samples = [values.astype(in_dtype).reshape(3, 3), np.arange(40).reshape(5, 8).astype(in_dtype)]
    args = {"keys": KEYS, "values": VALUES, "default_value": 0.99}
    check_op(ndd.lookup_table, samples, lambda s, **a: ref_lookup(s, **a), args=args,
             all_modes=in_dtype == np.uint8)  # fmt: skip


def test_lookup_table_output_dtype_rounds_and_saturates():
    samples = [np.arange(6, dtype=np.int32), np.array([-1, 70000], np.int32)]
    args = {"keys": [0, 1, 2, 3], "values": [300.0, -5.0, 2.5, -2.5], "default_value": 7.4,
            "dtype": ndd.uint8}  # fmt: skip

    def ref(s, **a):
        return ref_lookup(s, a["keys"], a["values"], a["default_value"], np.uint8)

    check_op(ndd.lookup_table, samples, ref, args=args, all_modes=False)
    out = ndd.lookup_table(np.array([2, 3]), keys=[2, 3], values=[2.5, -2.5], dtype=ndd.int8)
    assert np.asarray(out).tolist() == [3, -3]


def test_lookup_table_no_keys_gives_default():
    out = ndd.lookup_table(np.array([0, 5], np.uint8), default_value=3.0)
    assert np.asarray(out).tolist() == [3.0, 3.0]


def test_lookup_table_errors():
    x = np.array([1, 2], np.int32)
    with raises_at_call(RuntimeError, match="lookup_table: input 0 has dtype f32; lookup_table "
                       "expects integer inputs"):  # fmt: skip
        ndd.lookup_table(x.astype(np.float32), keys=[1], values=[1.0])
    with raises_at_call(RuntimeError, match="arguments 'keys' and 'values' must have the same "
                       "length; got 2 keys and 1 values"):  # fmt: skip
        ndd.lookup_table(x, keys=[1, 2], values=[1.0])
    with raises_at_call(RuntimeError, match="argument 'keys': keys must be in \\[0, 65535\\]; got "
                       "65536"):  # fmt: skip
        ndd.lookup_table(x, keys=[65536], values=[1.0])
    with raises_at_call(RuntimeError, match="got -1"):
        ndd.lookup_table(x, keys=[-1], values=[1.0])
    with raises_at_call(TypeError, match="lookup_table: argument 'dtype' is bfloat16"):
        ndd.lookup_table(x, keys=[1], values=[1.0], dtype=ndd.bfloat16)


def test_lookup_table_one_launch_per_ragged_batch():
    batch = ndd.as_batch([np.array([1, 2, 3], np.uint8), np.array([0], np.uint8)]).gpu()
    with ndd.profile() as prof:
        ndd.lookup_table(batch, keys=[1], values=[2.0]).evaluate()
    (record,) = prof.records
    assert record.gpu_launches == 1
