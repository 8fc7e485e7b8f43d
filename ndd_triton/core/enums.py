"""DALI's enum types (`DALIDataType`, `DALIInterpType`, `DALIImageType`), with DALI's codes.

The public module `ndd_triton.types` re-exports them with `nvidia.dali.types`' aliases.
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
