"""transforms.*: build 2-D affine matrices (2x3 float32) for warp_affine (DALI `transforms`).

Each op returns one `(2, 3)` float32 matrix per sample, mapping a point `p` to `A @ [p, 1]`.
`translation`, `scale`, `rotation`, `shear` and `crop` take an optional input transform `T`:
the result is `new @ T` (T applies first), or `T @ new` with `reverse_order=True`.
`combine(T1, T2, ...)` gives `... @ T2 @ T1`, i.e. the transforms applied in the listed order
(reversed with `reverse_order=True`). Points are `(x, y)`; angles are in degrees. Only 2-D
transforms are supported. All matrices are computed on the host in infer (float64, stored as
float32), as DALI runs these ops on the CPU.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ndd_triton.core.dtype import float32
from ndd_triton.ops import limits
from ndd_triton.ops._affine import compose
from ndd_triton.ops.schema import REQUIRED, Arg, Call, Input, OpSchema, OutputSpec

_PREVIOUS = Input("input", optional=True, host_values=True,
                  doc="A transform (2, 3) to combine with: it applies first.")  # fmt: skip
_REVERSE = Arg(
    "reverse_order",
    "bool",
    default=False,
    doc="Apply the new transform before the input transform instead of after.",
)


def _vec(call: Call, name: str, i: int, default: tuple[float, ...] | None = None) -> np.ndarray:
    """Sample `i` of 2-vector argument `name` (a scalar is broadcast)."""
    value = call.values.get(name)
    if value is None:
        if default is None:
            raise call.error(f"argument '{name}' is required")
        return np.array(default, np.float64)
    v = np.asarray(value[i], np.float64).reshape(-1)
    if v.size == 1:
        v = np.repeat(v, 2)
    if v.size != 2:
        raise call.error(
            f"argument '{name}' sample {i}: only 2-D transforms are supported: "
            f"expected 2 values (x, y); got {v.size}"
        )
    return v


def _affine(lin: np.ndarray, shift: np.ndarray) -> np.ndarray:
    return np.concatenate([lin, shift.reshape(2, 1)], axis=1)


def _about(lin: np.ndarray, center: np.ndarray) -> np.ndarray:
    """`lin` applied about `center`: `lin @ (p - c) + c`."""
    return _affine(lin, center - lin @ center)


def _input_matrix(call: Call, k: int, i: int) -> np.ndarray:
    meta = call.inputs[k]
    assert meta is not None
    assert meta.values is not None
    value = np.asarray(meta.values[i], np.float64)
    if value.shape not in ((2, 3), (3, 3)):
        raise call.error(
            f"input {k} sample {i}: expected a (2, 3) transform; got shape {value.shape}"
        )
    return value[:2]


def _build(maker: Callable[[Call, int], np.ndarray]) -> Callable[[Call], OutputSpec]:
    def infer(call: Call) -> OutputSpec:
        n = call.batch_size
        mats = np.stack([maker(call, i) for i in range(n)]) if n else np.zeros((0, 2, 3))
        has_input = bool(call.inputs) and call.inputs[0] is not None
        if has_input:
            prev = np.stack([_input_matrix(call, 0, i) for i in range(n)])
            mats = compose(prev, mats) if call.reverse_order else compose(mats, prev)
        if not (np.abs(mats) <= np.finfo(np.float32).max).all():  # (False for NaN)
            raise call.error(f"the arguments ({limits.given_names(call)}) give a matrix that "
                             f"is not finite in float32")  # fmt: skip
        call.derive("transform_matrix", mats.astype(np.float32), per_sample=True)
        return OutputSpec(float32, np.full((n, 2), (2, 3), np.int64), None)

    return infer


def _translation(call: Call, i: int) -> np.ndarray:
    return _affine(np.eye(2), _vec(call, "offset", i))


def _scale(call: Call, i: int) -> np.ndarray:
    return _about(np.diag(_vec(call, "scale", i)), _vec(call, "center", i, (0.0, 0.0)))


def _rotation(call: Call, i: int) -> np.ndarray:
    if call.axis is not None:
        raise call.error("argument 'axis' is for 3-D rotations; only 2-D transforms are supported")
    a = np.deg2rad(float(np.asarray(call.angle[i]).reshape(())))
    lin = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    return _about(lin, _vec(call, "center", i, (0.0, 0.0)))


def _shear(call: Call, i: int) -> np.ndarray:
    if (call.shear is None) == (call.angles is None):
        raise call.error("give exactly one of 'shear' and 'angles'")
    if call.shear is not None:
        s = _vec(call, "shear", i)
    else:
        angles = _vec(call, "angles", i)
        if (np.abs(angles) >= 90).any():
            raise call.error(
                f"argument 'angles' sample {i}: shear angles must be in "
                f"(-90, 90) degrees; got {angles.tolist()}"
            )
        s = np.tan(np.deg2rad(angles))
    return _about(np.array([[1.0, s[0]], [s[1], 1.0]]), _vec(call, "center", i, (0.0, 0.0)))


def _crop(call: Call, i: int) -> np.ndarray:
    f0, f1 = _vec(call, "from_start", i, (0, 0)), _vec(call, "from_end", i, (1, 1))
    t0, t1 = _vec(call, "to_start", i, (0, 0)), _vec(call, "to_end", i, (1, 1))
    if call.absolute:
        f0, f1 = np.minimum(f0, f1), np.maximum(f0, f1)
        t0, t1 = np.minimum(t0, t1), np.maximum(t0, t1)
    if (f1 == f0).any():
        raise call.error(
            f"sample {i}: the source box is empty: from_start {f0.tolist()}, from_end {f1.tolist()}"
        )
    scale = (t1 - t0) / (f1 - f0)
    return _affine(np.diag(scale), t0 - scale * f0)


def _combine(call: Call) -> OutputSpec:
    n = call.batch_size
    given = [k for k, meta in enumerate(call.inputs) if meta is not None]
    if len(given) < 2:
        raise call.error(f"expects at least 2 transforms; got {len(given)}")
    mats = [np.stack([_input_matrix(call, k, i) for i in range(n)]) for k in given]
    order = mats if call.reverse_order else mats[::-1]
    call.derive("transform_matrix", compose(*order).astype(np.float32), per_sample=True)
    return OutputSpec(float32, np.full((n, 2), (2, 3), np.int64), None)


def _vec_arg(name: str, doc: str, default: object = None) -> Arg:
    return Arg(name, "float", default=default, per_sample=True, vector=True, doc=doc)


_CENTER = _vec_arg("center", "Point (x, y) that the transform keeps fixed; default (0, 0).")


def _schema(name: str, doc: str, args: tuple[Arg, ...], maker: Callable[[Call, int],
            np.ndarray]) -> OpSchema:  # fmt: skip
    return OpSchema(name=f"transforms.{name}", doc=doc, inputs=(_PREVIOUS,),
                    args=(*args, _REVERSE), infer=_build(maker), devices=("cpu",),
                    module="transforms")  # fmt: skip


schemas = [
    _schema("translation", "Translation matrix: p -> p + offset.",
            (_vec_arg("offset", "Translation (x, y).", REQUIRED),), _translation),
    _schema("scale", "Scaling matrix about `center`.",
            (_vec_arg("scale", "Scale factors (x, y); a scalar scales both.", REQUIRED), _CENTER,
             Arg("ndim", "int", doc="Number of dimensions (only 2 is supported).",
                 check=lambda v: None if v == 2 else f"must be 2; got {v}")), _scale),
    _schema("rotation", "Rotation matrix by `angle` degrees about `center` "
            "([[cos, -sin], [sin, cos]]).",
            (Arg("angle", "float", default=REQUIRED, per_sample=True, doc="Angle in degrees."),
             _vec_arg("axis", "Rotation axis of 3-D transforms (not supported)."), _CENTER),
            _rotation),
    _schema("shear", "Shear matrix [[1, sx], [sy, 1]] about `center`.",
            (_vec_arg("shear", "Shear factors (sx, sy)."),
             _vec_arg("angles", "Shear angles in degrees (instead of 'shear'): s = tan(angle)."),
             _CENTER), _shear),
    _schema("crop", "Matrix mapping the box [from_start, from_end] onto [to_start, to_end].",
            (_vec_arg("from_start", "Source box start (x, y); default (0, 0)."),
             _vec_arg("from_end", "Source box end; default (1, 1)."),
             _vec_arg("to_start", "Destination box start; default (0, 0)."),
             _vec_arg("to_end", "Destination box end; default (1, 1)."),
             Arg("absolute", "bool", default=False,
                 doc="Swap start and end where start > end.")), _crop),
    OpSchema(name="transforms.combine",
             doc="Combines transforms so that the result applies them in the listed order.",
             inputs=(Input("input_0", host_values=True, doc="First transform (applies first)."),
                     Input("inputs", variadic=True, host_values=True, doc="More transforms.")),
             args=(_REVERSE,), infer=_combine, devices=("cpu",), module="transforms"),
]  # fmt: skip
