"""Element types: `DType` and the module-level constants (`ndd.uint8`, `ndd.float32`, ...).

Names, kinds and reprs follow DALI (`u8`, `f32`, `DType(kind=Kind.unsigned, bits=8)`); every
DType maps 1:1 to a NumPy dtype (except bfloat16) and a torch dtype, which is what storage uses.
"""

from __future__ import annotations

import enum
from typing import Any

import numpy as np
import torch

from ndd_triton.core import builders
from ndd_triton.core.enums import DALIDataType


class DType:
    """An element type, comparable and hashable; `dtype(data)` builds a tensor of this type."""

    class Kind(enum.Enum):
        """Broad category of a DType."""

        signed = 1
        unsigned = 2
        float = 3
        bool = 4
        enum = 5

    __slots__ = ("_hash", "_np", "_torch", "_type_id", "bits", "exponent_bits", "kind", "name",
                 "significand_bits")  # fmt: skip

    def __init__(self, name: str, kind: DType.Kind, bits: int, np_dtype: Any, torch_dtype: Any,
                 type_id: DALIDataType | None, exponent_bits: int | None = None,
                 significand_bits: int | None = None) -> None:  # fmt: skip
        self.name = name
        self.kind = kind
        self.bits = bits
        self.exponent_bits = exponent_bits
        self.significand_bits = significand_bits
        self._np = np.dtype(np_dtype) if np_dtype is not None else None
        self._torch = torch_dtype
        self._type_id = type_id
        # Cached: dtypes are hashed on every op call (prepare's plan cache keys, arg memos).
        self._hash = hash((kind.value, bits, exponent_bits))

    @property
    def bytes(self) -> int:
        """Size of one element in bytes."""
        return self.bits // 8

    @property
    def type_id(self) -> DALIDataType | None:
        """The `DALIDataType` code, or None (bfloat16 and the enum pseudo-types have none)."""
        return self._type_id

    @property
    def numpy_dtype(self) -> np.dtype[Any]:
        """The matching NumPy dtype; raises TypeError for bfloat16."""
        if self._np is None:
            raise TypeError(f"dtype {self.name} has no NumPy equivalent")
        return self._np

    @property
    def torch_dtype(self) -> torch.dtype:
        """The matching torch dtype (storage type)."""
        return self._torch

    @property
    def is_float(self) -> bool:
        """True for floating-point types."""
        return self.kind is DType.Kind.float

    @property
    def is_integer(self) -> bool:
        """True for signed and unsigned integer types (not bool)."""
        return self.kind in (DType.Kind.signed, DType.Kind.unsigned)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DType):
            return False
        return (self.kind, self.bits, self.exponent_bits) == (other.kind, other.bits,
                                                              other.exponent_bits)  # fmt: skip

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        extra = ""
        if self.kind is DType.Kind.float:
            extra = (f", exponent_bits={self.exponent_bits}, "
                     f"significand_bits={self.significand_bits}")
        return f"DType(kind=Kind.{self.kind.name}, bits={self.bits}{extra})"

    def __str__(self) -> str:
        return self.name

    def __call__(self, data: Any, **kwargs: Any) -> Any:
        """`ndd.float32(data)` is `ndd.tensor(data, dtype=ndd.float32)`."""
        return builders.tensor(data, dtype=self, **kwargs)

    @staticmethod
    def parse(name: str) -> DType:
        """Parse a short DALI name (`u8`, `f32`) or a NumPy name (`uint8`, `float32`)."""
        found = _BY_NAME.get(name)
        if found is None:
            raise ValueError(f"Unsupported type name: {name!r}; expected a short name such as "
                             "'u8', 'i32', 'f32' or a NumPy name such as 'uint8', 'float32'")
        return found

    @staticmethod
    def from_fw_type(fw_type: Any) -> DType:
        """A NumPy dtype/scalar type or a torch dtype to DType."""
        if isinstance(fw_type, torch.dtype):
            found = _BY_TORCH.get(fw_type)
            if found is None:
                raise TypeError(f"torch dtype {fw_type} has no ndd equivalent")
            return found
        try:
            np_dtype = np.dtype(fw_type)
        except TypeError as e:
            raise TypeError(f"Cannot convert {fw_type!r} to an ndd dtype") from e
        found = _BY_NUMPY.get(np_dtype)
        if found is None:
            raise TypeError(f"NumPy dtype {np_dtype} has no ndd equivalent")
        return found

    @staticmethod
    def from_type_id(type_id: DALIDataType | int) -> DType:
        """A `DALIDataType` member (or its integer code) to DType."""
        try:
            return _BY_TYPE_ID[DALIDataType(int(type_id))]
        except (ValueError, KeyError) as e:
            raise ValueError(f"Unknown DALIDataType code {type_id!r}") from e


_K = DType.Kind
bool_ = DType("bool", _K.bool, 8, np.bool_, torch.bool, DALIDataType.BOOL)
int8 = DType("i8", _K.signed, 8, np.int8, torch.int8, DALIDataType.INT8)
int16 = DType("i16", _K.signed, 16, np.int16, torch.int16, DALIDataType.INT16)
int32 = DType("i32", _K.signed, 32, np.int32, torch.int32, DALIDataType.INT32)
int64 = DType("i64", _K.signed, 64, np.int64, torch.int64, DALIDataType.INT64)
uint8 = DType("u8", _K.unsigned, 8, np.uint8, torch.uint8, DALIDataType.UINT8)
uint16 = DType("u16", _K.unsigned, 16, np.uint16, torch.uint16, DALIDataType.UINT16)
uint32 = DType("u32", _K.unsigned, 32, np.uint32, torch.uint32, DALIDataType.UINT32)
uint64 = DType("u64", _K.unsigned, 64, np.uint64, torch.uint64, DALIDataType.UINT64)
float16 = DType("f16", _K.float, 16, np.float16, torch.float16, DALIDataType.FLOAT16, 5, 10)
bfloat16 = DType("bfloat16", _K.float, 16, None, torch.bfloat16, None, 8, 7)
float32 = DType("f32", _K.float, 32, np.float32, torch.float32, DALIDataType.FLOAT, 8, 23)
float64 = DType("f64", _K.float, 64, np.float64, torch.float64, DALIDataType.FLOAT64, 11, 52)
# Enum pseudo-types: tensors holding enum codes (DALI reports them as DTypes of kind `enum`).
DataType = DType("DALIDataType", _K.enum, 32, np.int32, torch.int32, None)
ImageType = DType("DALIImageType", _K.enum, 32, np.int32, torch.int32, None)
InterpType = DType("DALIInterpType", _K.enum, 32, np.int32, torch.int32, None)

ALL_DTYPES: tuple[DType, ...] = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                                 float16, bfloat16, float32, float64)  # fmt: skip
_BY_NAME: dict[str, DType] = {}
for _d in ALL_DTYPES:
    _BY_NAME[_d.name] = _d
    _BY_NAME[str(_d.torch_dtype).removeprefix("torch.")] = _d
_BY_NUMPY = {d.numpy_dtype: d for d in ALL_DTYPES if d._np is not None}
_BY_TORCH = {d.torch_dtype: d for d in ALL_DTYPES}
_BY_TYPE_ID = {d.type_id: d for d in ALL_DTYPES if d.type_id is not None}


def dtype(x: Any) -> DType:
    """Convert a DType, DALIDataType, type name, NumPy or torch dtype to a DType."""
    if isinstance(x, DType):
        return x
    if x is None:
        raise TypeError("Cannot convert None to a dtype")
    if isinstance(x, DALIDataType):
        return DType.from_type_id(x)
    if isinstance(x, str):
        return DType.parse(x)
    if isinstance(x, bool | int):
        raise TypeError(f"Cannot convert {type(x).__name__} {x!r} to a dtype; pass a DType such "
                        "as ndd.float32 or a types.DALIDataType member")
    return DType.from_fw_type(x)


def type_id(x: Any) -> DALIDataType | None:
    """The DALIDataType code of a dtype-like."""
    return dtype(x).type_id


def to_dtype_arg(x: Any, what: str) -> DType:
    """Convert an operator's `dtype=` argument (DType, DALIDataType code or dtype name)."""
    if isinstance(x, int) and not isinstance(x, bool):
        try:
            return DType.from_type_id(x)
        except ValueError as e:
            raise ValueError(f"{what}: {e}") from None
    try:
        return dtype(x)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{what} expects a dtype such as ndd.float32; got {type(x).__name__} "
                        f"{x!r}") from e
