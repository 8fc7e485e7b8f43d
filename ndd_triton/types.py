"""DALI-compatible enums (`nvidia.dali.types` names) so a migration is an import change.

`import nvidia.dali.types as types` becomes `from ndd_triton import types`; the members keep
DALI's names and integer codes, and operators accept the members or the plain integers.
"""

from __future__ import annotations

import enum


class DALIDataType(enum.IntEnum):
    """Element type codes, as in `nvidia.dali.types.DALIDataType`."""

    UINT8 = 0
    UINT16 = 1
    UINT32 = 2
    UINT64 = 3
    INT8 = 4
    INT16 = 5
    INT32 = 6
    INT64 = 7
    FLOAT16 = 8
    FLOAT = 9
    FLOAT64 = 10
    BOOL = 11


class DALIInterpType(enum.IntEnum):
    """Interpolation codes, as in `nvidia.dali.types.DALIInterpType`."""

    INTERP_NN = 0
    INTERP_LINEAR = 1
    INTERP_CUBIC = 2
    INTERP_LANCZOS3 = 3
    INTERP_TRIANGULAR = 4
    INTERP_GAUSSIAN = 5


class DALIImageType(enum.IntEnum):
    """Colour space codes, as in `nvidia.dali.types.DALIImageType`."""

    RGB = 0
    BGR = 1
    GRAY = 2
    YCbCr = 3
    ANY_DATA = 4


# Module-level aliases, as `nvidia.dali.types` has them (types.INTERP_LINEAR, types.RGB, ...).
INTERP_NN = DALIInterpType.INTERP_NN
INTERP_LINEAR = DALIInterpType.INTERP_LINEAR
INTERP_CUBIC = DALIInterpType.INTERP_CUBIC
INTERP_LANCZOS3 = DALIInterpType.INTERP_LANCZOS3
INTERP_TRIANGULAR = DALIInterpType.INTERP_TRIANGULAR
INTERP_GAUSSIAN = DALIInterpType.INTERP_GAUSSIAN
RGB = DALIImageType.RGB
BGR = DALIImageType.BGR
GRAY = DALIImageType.GRAY
YCbCr = DALIImageType.YCbCr
ANY_DATA = DALIImageType.ANY_DATA
UINT8 = DALIDataType.UINT8
UINT16 = DALIDataType.UINT16
UINT32 = DALIDataType.UINT32
UINT64 = DALIDataType.UINT64
INT8 = DALIDataType.INT8
INT16 = DALIDataType.INT16
INT32 = DALIDataType.INT32
INT64 = DALIDataType.INT64
FLOAT16 = DALIDataType.FLOAT16
FLOAT = DALIDataType.FLOAT
FLOAT64 = DALIDataType.FLOAT64
BOOL = DALIDataType.BOOL

__all__ = [
    "ANY_DATA",
    "BGR",
    "BOOL",
    "FLOAT",
    "FLOAT16",
    "FLOAT64",
    "GRAY",
    "INT8",
    "INT16",
    "INT32",
    "INT64",
    "INTERP_CUBIC",
    "INTERP_GAUSSIAN",
    "INTERP_LANCZOS3",
    "INTERP_LINEAR",
    "INTERP_NN",
    "INTERP_TRIANGULAR",
    "RGB",
    "UINT8",
    "UINT16",
    "UINT32",
    "UINT64",
    "DALIDataType",
    "DALIImageType",
    "DALIInterpType",
    "YCbCr",
]  # fmt: skip
