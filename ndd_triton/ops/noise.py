"""noise.gaussian / salt_and_pepper / shot: per-element random noise (DALI `ndd.noise`).

Infer reserves block-aligned draws per sample from the op's RNG (which advances it); kernels
derive every element's randomness from (RNG key, sample base + index), so CPU and GPU agree and
results do not depend on the thread count. Draws per unit: gaussian 2 per element (Box-Muller),
salt_and_pepper 2 per decision unit (replace?, salt?), shot 16 per element (inversion for small
means, up to 8 transformed-rejection attempts otherwise). Integer outputs round half away from
zero and saturate.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core.dtype import (
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ndd_triton.ops.args import non_negative
from ndd_triton.ops.random_ops import f32_args, reserve, sizes_of
from ndd_triton.ops.schema import Arg, Call, Input, OpSchema, OutputSpec, same_as_input

NOISE_DTYPES = (uint8, int8, uint16, int16, uint32, int32, uint64, int64, float16, float32,
                float64)  # fmt: skip
SHOT_DRAWS = 16  # 8 attempts x 2 draws per element (inversion uses the first two)

_INPUT = Input("input", dtypes=NOISE_DTYPES, doc="Data to add noise to (any layout).")
_RNG = Arg("rng", "rng", doc="The ndd.random.RNG to draw from (default: the thread's default RNG).")


def _gaussian_infer(call: Call) -> OutputSpec:
    spec = same_as_input(call)
    call.derive("mean", f32_args(call.mean), per_sample=True)
    call.derive("stddev", f32_args(call.stddev), per_sample=True)
    reserve(call, sizes_of(spec.shapes) * 2)  # type: ignore[arg-type]
    return spec


def channel_axis(layout: str | None, ndim: int) -> int | None:
    """The channel axis: 'C' in the layout, the last axis without a layout, else none."""
    if layout:
        return layout.index("C") if "C" in layout else None
    return ndim - 1 if ndim > 0 else None


def _salt_and_pepper_infer(call: Call) -> OutputSpec:
    spec = same_as_input(call)
    meta = call.inputs[0]
    shapes = meta.shapes
    n = call.batch_size
    extent = np.ones(n, dtype=np.int64)
    inner = np.ones(n, dtype=np.int64)
    if call.per_channel:
        if meta.layout and "C" not in meta.layout:
            raise call.error(f"argument 'per_channel' needs an input with a 'C' axis or no layout; "
                             f"got layout '{meta.layout}'")  # fmt: skip
    else:
        axis = channel_axis(meta.layout, meta.ndim)
        if axis is not None:
            extent = shapes[:, axis].copy()
            inner = np.prod(shapes[:, axis + 1 :], axis=1, dtype=np.int64)
    sizes = sizes_of(shapes)
    units = np.where(extent > 0, sizes // np.maximum(extent, 1), 0)
    call.derive("chan_extent", extent, per_sample=True)
    call.derive("chan_inner", inner, per_sample=True)
    np_type = meta.dtype.numpy_dtype
    if np_type.kind == "f":
        salt_default, pepper_default = 1.0, -1.0
    else:
        info = np.iinfo(np_type)
        salt_default, pepper_default = float(info.max), float(info.min)
    salt = call.salt_val if call.salt_val is not None else np.full(n, salt_default)
    pepper = call.pepper_val if call.pepper_val is not None else np.full(n, pepper_default)
    call.derive("salt_val", np.asarray(salt, dtype=np.float64), per_sample=True)
    call.derive("pepper_val", np.asarray(pepper, dtype=np.float64), per_sample=True)
    reserve(call, units * 2)
    return spec


def _shot_infer(call: Call) -> OutputSpec:
    spec = same_as_input(call)
    call.derive("factor", f32_args(call.factor), per_sample=True)
    reserve(call, sizes_of(spec.shapes) * SHOT_DRAWS)  # type: ignore[arg-type]
    return spec


def _schema(name: str, doc: str, args: tuple[Arg, ...], infer: object) -> OpSchema:
    return OpSchema(
        name=f"noise.{name}",
        doc=doc,
        inputs=(_INPUT,),
        args=(*args, _RNG),
        infer=infer,
        random=True,
        module="noise",
    )  # type: ignore[arg-type]


gaussian = _schema(
    "gaussian", "Adds N(mean, stddev) noise to every element; integer outputs round and saturate.",
    (Arg("mean", "float", default=0.0, per_sample=True, doc="Mean of the noise."),
     Arg("stddev", "float", default=1.0, per_sample=True, doc="Standard deviation of the noise.")),
    _gaussian_infer)  # fmt: skip
salt_and_pepper = _schema(
    "salt_and_pepper", "Replaces random pixels (or channel values) by salt or pepper values.",
    (Arg("prob", "float", default=0.05, per_sample=True,
         doc="Probability that a pixel is replaced."),
     Arg("salt_vs_pepper", "float", default=0.5, per_sample=True,
         doc="Probability that a replaced pixel becomes salt."),
     Arg("salt_val", "float", per_sample=True,
         doc="Salt value (default: 1.0 for floats, the type's maximum for integers)."),
     Arg("pepper_val", "float", per_sample=True,
         doc="Pepper value (default: -1.0 for floats, the type's minimum for integers)."),
     Arg("per_channel", "bool", default=False,
         doc="Decide independently per channel (needs a 'C' axis or no layout).")),
    _salt_and_pepper_infer)  # fmt: skip
shot = _schema(
    "shot", "Shot (Poisson) noise: Poisson(max(0, input / factor)) * factor; factor=0 keeps the "
    "input unchanged.",
    (Arg("factor", "float", default=20.0, per_sample=True, check=non_negative,
         doc="Scale: input / factor is the Poisson mean (>= 0)."),),
    _shot_infer)  # fmt: skip

schemas = [gaussian, salt_and_pepper, shot]
