"""normalize: `out = scale * (in - mean) / stddev + shift` (DALI `normalize`).

`mean` and `stddev` are given (scalars or tensors broadcastable to the sample) or computed over
`axes` per sample, or over the whole batch with `batch=True`. A computed stddev is
`sqrt(ssd / (N - ddof) + epsilon)`, taken around the given mean when only `mean` is given; a
zero stddev gives zeros, not NaN (DALI: constant input -> zeros). Integer outputs round half
away from zero and saturate.

Infer splits the work into *groups*: the elements that share one (mean, stddev) pair. A group
is one kept-coordinate row of one sample, or of every sample with `batch=True`; given
parameters are resolved on the host to one value per group (`group_params`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ndd_triton.core import dtype as dt
from ndd_triton.ops._axes import resolve_axes
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec


def _params(call: Call) -> dict[str, list[np.ndarray]]:
    """Given mean/stddev as per-sample float64 arrays."""
    given = {}
    for name in ("mean", "stddev"):
        values = call.values.get(name)
        if values is not None:
            given[name] = [np.asarray(values[i], dtype=np.float64) for i in range(call.batch_size)]
    return given


def _reduction_axes(call: Call, given: dict[str, list[np.ndarray]]) -> list[int]:
    inp = call.inputs[0]
    axes = resolve_axes(call, call.axes, call.axis_names, inp.ndim, inp.layout)
    if axes is not None:
        return sorted(axes)
    # No axes: tensors given for mean/stddev imply them (their extent-1 axes), else all axes.
    shaped = [p for arrays in given.values() for p in arrays if p.size > 1]
    if not shaped:
        return list(range(inp.ndim))
    return [d for d in range(inp.ndim) if all(p.ndim == inp.ndim and p.shape[d] == 1
                                              for p in shaped)]  # fmt: skip


def _group_values(call: Call, name: str, arrays: list[np.ndarray], keep: np.ndarray
                  ) -> list[np.ndarray]:  # fmt: skip
    """One value of a given parameter per group (kept coordinates in C order) of each sample."""
    out = []
    for i, p in enumerate(arrays):
        shape = tuple(int(e) for e in keep[i])
        if p.size == 1:
            out.append(np.full(int(np.prod(shape)), float(p.reshape(-1)[0])))
            continue
        if p.ndim != len(shape) or any(
            e not in (1, k) for e, k in zip(p.shape, shape, strict=True)
        ):
            raise call.error(f"argument '{name}' sample {i}: Normalization parameters' shape "
                             f"{p.shape} must have extent 1 or the input's extent on every "
                             f"non-reduced axis and 1 on reduced ones (expected broadcastable "
                             f"to {shape})")  # fmt: skip
        out.append(np.broadcast_to(p, shape).reshape(-1))
    return out


def _check_batch(call: Call, keep: np.ndarray, given: dict[str, list[np.ndarray]]) -> None:
    for i in range(1, call.batch_size):
        if not np.array_equal(keep[i], keep[0]):
            raise call.error(
                f"batch=True needs the same non-reduced extents in every sample; "
                f"sample {i} has {tuple(int(e) for e in keep[i])}, sample 0 has "
                f"{tuple(int(e) for e in keep[0])}"
            )
    for name, arrays in given.items():
        if any(not np.array_equal(a, arrays[0]) for a in arrays[1:]):
            raise call.error(f"argument '{name}' must be the same for every sample with "
                             "batch=True")  # fmt: skip


def _output_dtype(call: Call) -> dt.DType:
    out = call.dtype
    if out is None:
        return dt.float32
    if out != dt.float32 and not out.is_integer:
        raise call.error(f"argument 'dtype' must be float32 or an integer type; got {out}",
                         RuntimeError)  # fmt: skip
    return out  # type: ignore[no-any-return]


def _infer(call: Call) -> OutputSpec:
    inp = call.inputs[0]
    if not (inp.dtype.is_integer or inp.dtype.is_float) or inp.dtype == dt.bfloat16:
        raise call.error(f"input 0 has dtype {inp.dtype}; expected an integer or float type",
                         TypeError)  # fmt: skip
    if call.ddof < 0:
        raise call.error(f"argument 'ddof' must be non-negative; got {call.ddof}")
    if call.epsilon < 0:
        raise call.error(f"argument 'epsilon' must be non-negative; got {call.epsilon}")
    out_dtype = _output_dtype(call)
    given = _params(call)
    axes = _reduction_axes(call, given)
    keep = inp.shapes.copy()
    keep[:, axes] = 1
    if call.batch:
        _check_batch(call, keep, given)
    params: dict[str, Any] = {name: _group_values(call, name, arrays, keep)
                              for name, arrays in given.items()}  # fmt: skip
    if "stddev" in params and call.epsilon:
        # DALI 2.4 adds epsilon to a given stddev's square too: (x - m) / sqrt(stddev² + eps)
        params["stddev"] = [np.sqrt(np.square(v) + float(call.epsilon)) for v in params["stddev"]]
    call.derive("norm_axes", tuple(axes))
    call.derive("group_params", params)
    return OutputSpec(out_dtype, inp.shapes.copy(), inp.layout)


schema = OpSchema(
    name="normalize",
    doc="Normalizes samples: scale * (input - mean) / stddev + shift, with mean and stddev "
    "given or computed over `axes` (per sample, or over the batch with batch=True).",
    inputs=(Input("input", doc="Samples of any layout, integer or float."),),
    args=(
        Arg("axes", "int", vector=True, doc="Axes to compute the statistics over; default: all."),
        Arg("axis_names", "layout", doc="Axes to compute the statistics over, by layout letter."),
        Arg(
            "mean",
            "float",
            per_sample=True,
            vector=True,
            doc="Mean to subtract: a scalar or a tensor broadcastable to the sample; computed "
            "when not given.",
        ),
        Arg(
            "stddev",
            "float",
            per_sample=True,
            vector=True,
            doc="Standard deviation (divides by sqrt(stddev² + epsilon); ddof unused); computed "
            "when not given.",
        ),
        Arg("batch", "bool", default=False, doc="Compute the statistics over the whole batch."),
        Arg("ddof", "int", default=0, doc="Delta degrees of freedom of the computed variance."),
        Arg("epsilon", "float", default=0.0, doc="Added to the variance (computed, or stddev²)."),
        Arg("scale", "float", default=1.0, doc="Multiplier applied after normalizing."),
        Arg("shift", "float", default=0.0, doc="Offset added after scaling."),
        Arg(
            "dtype",
            "dtype",
            default=None,
            doc="Output dtype: float32 (default) or an integer type (rounded, saturated).",
        ),
    ),
    infer=_infer,
)
