"""DType constants, names, parsing, conversion and the DALI enums."""

import numpy as np
import pytest
import torch

import ndd_triton as ndd
from ndd_triton import types


@pytest.mark.parametrize(("dt", "name", "np_type"), [
    (ndd.uint8, "u8", np.uint8), (ndd.int8, "i8", np.int8), (ndd.int16, "i16", np.int16),
    (ndd.int32, "i32", np.int32), (ndd.int64, "i64", np.int64), (ndd.uint16, "u16", np.uint16),
    (ndd.uint32, "u32", np.uint32), (ndd.uint64, "u64", np.uint64), (ndd.float16, "f16", np.float16),
    (ndd.float32, "f32", np.float32), (ndd.float64, "f64", np.float64), (ndd.bool, "bool", np.bool_),
])
def test_names_and_numpy_roundtrip(dt, name, np_type):
    assert str(dt) == dt.name == name
    assert ndd.DType.parse(name) == dt
    assert ndd.dtype(np_type) == dt
    assert ndd.dtype(np.dtype(np_type)) == dt
    assert ndd.DType.from_type_id(dt.type_id) == dt
    assert dt.bytes * 8 == dt.bits


def test_reprs_and_attributes():
    assert repr(ndd.uint8) == "DType(kind=Kind.unsigned, bits=8)"
    assert repr(ndd.float32) == ("DType(kind=Kind.float, bits=32, exponent_bits=8, "
                                 "significand_bits=23)")
    assert ndd.float16.exponent_bits == 5 and ndd.float16.significand_bits == 10
    assert ndd.int32.exponent_bits is None
    assert ndd.bfloat16.type_id is None and str(ndd.bfloat16) == "bfloat16"
    assert ndd.uint8.kind is ndd.DType.Kind.unsigned
    assert ndd.DataType.kind is ndd.DType.Kind.enum


def test_equality_hash_and_foreign_comparison():
    assert ndd.float32 == ndd.DType.parse("f32")
    assert hash(ndd.float32) == hash(ndd.DType.parse("float32"))
    assert ndd.float32 != "f32"
    assert ndd.float32 != np.float32
    assert ndd.float32 != ndd.int32
    assert len({ndd.uint8, ndd.uint8, ndd.int8}) == 2


def test_parse_accepts_short_and_numpy_names_and_rejects_others():
    assert ndd.DType.parse("float32") == ndd.float32
    assert ndd.DType.parse("uint8") == ndd.uint8
    with pytest.raises(ValueError, match="Unsupported type name: 'double'"):
        ndd.DType.parse("double")


def test_dtype_function_conversions():
    assert ndd.dtype(torch.int64) == ndd.int64
    assert ndd.dtype(torch.bfloat16) == ndd.bfloat16
    assert ndd.dtype(types.DALIDataType.FLOAT) == ndd.float32
    assert ndd.dtype("i16") == ndd.int16
    assert ndd.type_id(ndd.uint8) is types.DALIDataType.UINT8
    with pytest.raises(TypeError, match="Cannot convert None"):
        ndd.dtype(None)
    with pytest.raises(TypeError):
        ndd.dtype(object())


def test_dtype_call_creates_tensor():
    t = ndd.float32([1, 2])
    assert t.dtype == ndd.float32 and t.shape == (2,)


def test_enums_match_dali_codes():
    assert types.DALIInterpType.INTERP_LINEAR == 1 == types.INTERP_LINEAR
    assert types.DALIInterpType.INTERP_GAUSSIAN == 5
    assert types.DALIImageType.RGB == 0 and types.BGR == 1 and types.GRAY == 2
    assert types.YCbCr == 3 and types.ANY_DATA == 4
    assert types.DALIDataType.UINT8 == 0 and types.FLOAT == 9 and types.BOOL == 11


def test_star_import_and_public_names():
    namespace: dict = {}
    exec("from ndd_triton import *", namespace)
    for name in ("Tensor", "Batch", "flip", "uint8", "EvalMode", "readers", "decoders", "random"):
        assert name in namespace, name
