"""Colour adjustments (DALI brightness, contrast, brightness_contrast, hue, saturation, hsv,
color_twist): each one is a per-sample affine colour transform `out = M · pixel + offset`.

Infer turns the per-sample arguments into `color_matrix` (`[N, C_out, C_in]`, 1x1 for the
elementwise ops, 3x3 YIQ-space matrices for hue/saturation) and `color_offset` (`[N, C_out]`);
the kernels (`kernels/{cpu,gpu}/color.py`) only apply them, so all seven ops share one kernel.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core import dtype as _dtype
from ndd_triton.core.dtype import DType
from ndd_triton.ops import limits
from ndd_triton.ops._color_matrix import half_range, hsv_matrices, scalar_affine, type_range
from ndd_triton.ops.schema import Arg, Call, InferFn, Input, OpSchema, OutputSpec

COLOR_LAYOUTS = ("HWC", "FHWC", "DHWC")
COLOR_DTYPES = (_dtype.uint8, _dtype.int8, _dtype.int16, _dtype.int32, _dtype.float16,
                _dtype.float32)  # fmt: skip
_IMAGE_TYPES = (0, 1)  # RGB, BGR (BGR gives the same result: the matrices are symmetric in R/B)


def _out_dtype(call: Call, default: DType | None = None) -> DType:
    dtype = call.dtype or default or call.inputs[0].dtype
    if dtype not in COLOR_DTYPES:
        raise call.error(f"argument 'dtype' must be one of "
                         f"{', '.join(str(d) for d in COLOR_DTYPES)}; got {dtype}", TypeError)
    return dtype


def _spec(call: Call, matrix: np.ndarray, offset: np.ndarray, dtype: DType) -> OutputSpec:
    """Store the per-sample matrices for the kernels; shapes and layout pass through."""
    inp = call.inputs[0]
    if matrix.shape[1] == 3:
        channels = inp.shapes[:, (inp.layout or "HWC").index("C")]
        bad = np.flatnonzero(channels != 3)
        if len(bad):
            i = int(bad[0])
            raise call.error(f"input 0 sample {i}: expected 3 channels (RGB); got "
                             f"{int(channels[i])}")
    n = call.batch_size
    f32_max = float(np.finfo(np.float32).max)
    if not ((np.abs(matrix) <= f32_max).all() and (np.abs(offset) <= f32_max).all()):
        raise call.error(f"the arguments ({limits.given_names(call)}) give a colour transform "
                         "that is not finite in float32")  # fmt: skip
    call.derive("color_matrix", np.broadcast_to(matrix, (n, *matrix.shape[1:]))
                .astype(np.float32), per_sample=True)  # fmt: skip
    call.derive("color_offset", np.broadcast_to(offset, (n, offset.shape[1]))
                .astype(np.float32), per_sample=True)  # fmt: skip
    return OutputSpec(dtype, inp.shapes.copy(), inp.layout)


def _center(call: Call) -> np.ndarray:
    if call.contrast_center is not None:
        return np.asarray(call.contrast_center, dtype=np.float64)
    return np.full(call.batch_size, half_range(call.inputs[0].dtype))


def _infer_brightness(call: Call) -> OutputSpec:
    dtype = _out_dtype(call)
    # out = shift · range(out type) + brightness · in
    return _spec(call, *scalar_affine(call.brightness, call.brightness_shift * type_range(dtype)),
                 dtype)  # fmt: skip


def _infer_contrast(call: Call) -> OutputSpec:
    dtype = _out_dtype(call)
    center = _center(call)
    # out = center + contrast · (in - center)
    return _spec(call, *scalar_affine(call.contrast, center * (1.0 - call.contrast)), dtype)


def _infer_brightness_contrast(call: Call) -> OutputSpec:
    dtype = _out_dtype(call)
    center = _center(call)
    b, c = call.brightness, call.contrast
    # out = shift · range + brightness · (center + contrast · (in - center))
    offset = call.brightness_shift * type_range(dtype) + b * center * (1.0 - c)
    return _spec(call, *scalar_affine(b * c, offset), dtype)


def _hsv(call: Call, hue: np.ndarray | float = 0.0, saturation: np.ndarray | float = 1.0,
         value: np.ndarray | float = 1.0) -> np.ndarray:  # fmt: skip
    n = call.batch_size
    return hsv_matrices(*(np.broadcast_to(np.asarray(v, dtype=np.float64), (n,))
                          for v in (hue, saturation, value)))  # fmt: skip


def _infer_hue(call: Call) -> OutputSpec:
    return _spec(call, _hsv(call, hue=call.hue), np.zeros((1, 3)), _out_dtype(call))


def _infer_saturation(call: Call) -> OutputSpec:
    return _spec(call, _hsv(call, saturation=call.saturation), np.zeros((1, 3)), _out_dtype(call))


def _infer_hsv(call: Call) -> OutputSpec:
    # [Q] DALI's hsv defaults to uint8 output even for float input (spec ops.md §2.7).
    matrix = _hsv(call, call.hue, call.saturation, call.value)
    return _spec(call, matrix, np.zeros((1, 3)), _out_dtype(call, _dtype.uint8))


def _infer_color_twist(call: Call) -> OutputSpec:
    # out = brightness · (contrast · (M · in - c) + c), c = 0.5 for float inputs and 128 for
    # every integer type (DALI 2.4: i16 and i32 too, unlike `contrast`'s half range)
    b, c = call.brightness, call.contrast
    matrix = (b * c)[:, None, None] * _hsv(call, call.hue, call.saturation)
    center = 0.5 if call.inputs[0].dtype.is_float else 128.0
    offset = np.repeat((b * (1.0 - c) * center)[:, None], 3, axis=1)
    return _spec(call, matrix, offset, _out_dtype(call))


def _f(name: str, default: float, doc: str) -> Arg:
    return Arg(name, "float", default=default, per_sample=True, per_frame=True, doc=doc)


_DTYPE = Arg("dtype", "dtype", doc="Output type; default: the input type.")
_IMAGE_TYPE = Arg("image_type", "enum", default=0, choices=_IMAGE_TYPES,
                  doc="Colour space of input and output: RGB or BGR.")  # fmt: skip
_BRIGHTNESS = _f("brightness", 1.0, "Multiplier of the intensity.")
_SHIFT = _f("brightness_shift", 0.0, "Additive shift, in units of the output type's range.")
_CONTRAST = _f("contrast", 1.0, "Contrast factor around the centre; 0 gives uniform grey.")
_CENTER = Arg("contrast_center", "float", per_sample=True, per_frame=True,
              doc="Intensity left unchanged by contrast; default: half the input type's range.")
_HUE = _f("hue", 0.0, "Hue rotation in degrees.")
_SATURATION = _f("saturation", 1.0, "Saturation factor; 0 gives greyscale.")
_INPUT = (Input("input", layouts=COLOR_LAYOUTS, dtypes=COLOR_DTYPES),)


def _schema(name: str, doc: str, args: tuple[Arg, ...], infer: InferFn) -> OpSchema:
    return OpSchema(name=name, doc=doc, inputs=_INPUT, args=(*args, _DTYPE), infer=infer,
                    module="color")


schemas = [
    _schema("brightness", "Scales intensities: `brightness_shift · range + brightness · in`.",
            (_BRIGHTNESS, _SHIFT), _infer_brightness),
    _schema("contrast", "Stretches intensities around a centre: `c + contrast · (in - c)`.",
            (_CONTRAST, _CENTER), _infer_contrast),
    _schema("brightness_contrast", "Contrast, then brightness, in one pass.",
            (_BRIGHTNESS, _SHIFT, _CONTRAST, _CENTER), _infer_brightness_contrast),
    _schema("hue", "Rotates the hue of RGB images (a linear transform in YIQ space).",
            (_HUE, _IMAGE_TYPE), _infer_hue),
    _schema("saturation", "Scales the saturation of RGB images (linear, in YIQ space).",
            (_SATURATION, _IMAGE_TYPE), _infer_saturation),
    _schema("hsv", "Hue rotation, saturation and value scaling of RGB images (YIQ space); "
            "the output type defaults to uint8, as in DALI.",
            (_HUE, _SATURATION, _f("value", 1.0, "Intensity multiplier.")), _infer_hsv),
    _schema("color_twist", "Hue, saturation, contrast and brightness of RGB images in one pass.",
            (_BRIGHTNESS, _CONTRAST, _HUE, _SATURATION, _IMAGE_TYPE), _infer_color_twist),
]
