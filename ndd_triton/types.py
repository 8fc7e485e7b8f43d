"""DALI-compatible enums (`nvidia.dali.types` names) so a migration is an import change.

`import nvidia.dali.types as types` becomes `from ndd_triton import types`; the members keep
DALI's names and integer codes, and operators accept the members or the plain integers.
"""

from __future__ import annotations

from ndd_triton.core.enums import DALIDataType, DALIImageType, DALIInterpType

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
