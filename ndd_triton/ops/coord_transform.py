"""coord_transform: affine map of coordinate vectors, `out = M v + T` (DALI `coord_transform`).

Each row `v` (the last dimension, n values) of an input with at least 2 dimensions becomes
`M v + T` with `M` an `m x n` matrix (row-major list, or a scalar for `s * I`; default
identity) and `T` of length m (a scalar broadcasts; default zeros), or with both given as one
`m x (n + 1)` block `MT` (e.g. the output of `transforms.*`). All three are per-sample (and
per-frame); every sample must use the same m. The sum runs in float32 in DALI's order
(products left to right, then `T`). Inputs u8/u16/i16/i32/f32; the output is float32 or, with
`dtype`, the input's type (rounded half away from zero and saturated).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ndd_triton.core.dtype import float32, int16, int32, uint8, uint16
from ndd_triton.ops._bbox import BoxTypeError, BoxValueError
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec

INPUT_DTYPES = (uint8, uint16, int16, int32, float32)


def _per_sample(call: Call, name: str) -> list[np.ndarray] | None:
    value = call.values.get(name)
    if value is None:
        return None
    return [np.asarray(v, np.float64).reshape(-1) for v in value]


def _matrices(call: Call, n: int) -> tuple[np.ndarray, np.ndarray]:
    """`([N, m, n], [N, m])` float32 matrices and translations, one per sample."""
    count = call.batch_size
    mt, m_arg, t_arg = _per_sample(call, "MT"), _per_sample(call, "M"), _per_sample(call, "T")
    if mt is not None and (m_arg is not None or t_arg is not None):
        raise call.error("the combined argument 'MT' cannot be used together with 'M' or 'T'",
                         BoxValueError)  # fmt: skip
    mats: list[np.ndarray] = []
    offs: list[np.ndarray] = []
    for i in range(count):
        if mt is not None:
            mat, off = _split(call, "MT", mt[i], n + 1, n, i)
        else:
            mat = np.eye(n) if m_arg is None else _split(call, "M", m_arg[i], n, n, i)[0]
            off = np.zeros(mat.shape[0])
            if t_arg is not None:
                off = _translation(call, t_arg[i], mat.shape[0], i)
        mats.append(mat)
        offs.append(off)
    rows = {m.shape[0] for m in mats}
    if len(rows) > 1:
        raise call.error(f"the matrices of all samples must have the same shape; got "
                         f"{sorted(rows)} rows", BoxValueError)  # fmt: skip
    m = rows.pop() if rows else n
    return (np.asarray(mats, np.float32).reshape(count, m, n),
            np.asarray(offs, np.float32).reshape(count, m))  # fmt: skip


def _split(call: Call, name: str, flat: np.ndarray, cols: int, n: int, i: int
           ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """A row-major `[m, cols]` block as (M `[m, n]`, T `[m]`); a scalar is `s * I`."""
    where = f"argument '{name}' sample {i}" if call.batch_size > 1 else f"argument '{name}'"
    if flat.size == 0:
        raise call.error(f"{where}: the matrix must not be an empty list", BoxValueError)
    if flat.size == 1:
        return np.eye(n) * flat[0], np.zeros(n)
    if flat.size % cols:
        raise call.error(f"{where}: cannot form a matrix with {flat.size} elements and {cols} "
                         f"columns (the input has {n} coordinates per row"
                         f"{'; MT has one more column' if cols > n else ''})", BoxValueError)
    block = flat.reshape(-1, cols)
    return block[:, :n], (block[:, n] if cols > n else np.zeros(block.shape[0]))


def _translation(call: Call, flat: np.ndarray, m: int, i: int) -> np.ndarray:
    if flat.size == 1:
        return np.full(m, flat[0])
    if flat.size != m:
        where = f"argument 'T' sample {i}" if call.batch_size > 1 else "argument 'T'"
        raise call.error(f"{where}: expected a single value or a list of {m} elements (one per "
                         f"output coordinate); got {flat.size}", BoxValueError)  # fmt: skip
    return flat


def _infer(call: Call) -> OutputSpec:
    meta = call.inputs[0]
    if meta.dtype not in INPUT_DTYPES:
        raise call.error(f"unsupported input type {meta.dtype}; expected one of "
                         f"{', '.join(map(str, INPUT_DTYPES))}", BoxTypeError)  # fmt: skip
    if meta.ndim < 2:
        raise call.error(f"input 0 must have at least 2 dimensions (vectors along the last "
                         f"one); got {meta.ndim}-D samples", BoxValueError)  # fmt: skip
    out_dtype = call.dtype if call.dtype is not None else float32
    if out_dtype not in (meta.dtype, float32):
        raise call.error(f"argument 'dtype': the output type must be the input's type "
                         f"({meta.dtype}) or float32; got {out_dtype}", BoxTypeError)
    widths = np.unique(meta.shapes[:, -1]) if len(meta.shapes) else np.array([1])
    if widths.size > 1:
        raise call.error(f"input 0: every sample must have the same number of coordinates "
                         f"per row; got {sorted(widths.tolist())}", BoxValueError)  # fmt: skip
    n = int(widths[0])
    mats, offs = _matrices(call, n)
    call.derive("matrix", mats, per_sample=True)
    call.derive("translation", offs, per_sample=True)
    shapes = meta.shapes.copy()
    shapes[:, -1] = mats.shape[1]
    return OutputSpec(out_dtype, shapes, meta.layout)


def _vec(name: str, doc: str) -> Any:
    return Arg(name, "float", per_sample=True, vector=True, per_frame=True, doc=doc)


schema = OpSchema(
    name="coord_transform",
    doc="Applies an affine transform `M v + T` to the coordinate vectors in the last dimension.",
    inputs=(Input("input", doc="Vectors (..., n): u8, u16, i16, i32 or f32."),),
    args=(
        _vec("M", "Row-major m x n matrix (m * n values) or a scalar (scaled identity); "
                  "default identity."),
        _vec("T", "Translation, m values or a scalar; default zeros."),
        _vec("MT", "M and T as one row-major m x (n + 1) block (exclusive with M and T); "
                   "accepts the output of `transforms.*`."),
        Arg("dtype", "dtype", doc="Output type: float32 (default) or the input's type."),
    ),
    infer=_infer,
    examples="`coord_transform([[1, 2]], M=[0, 1, 1, 0])` -> `[[2, 1]]`; "
             "`MT=[1, 0, 10, 0, 1, 20]` adds (10, 20).",
)  # fmt: skip
