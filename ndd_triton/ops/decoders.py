"""Image decoders, `peek_image_shape` and `io.file.read` (DALI `ndd.decoders.*`, `ndd.io.file`).

Encoded images are 1-D uint8 samples holding the file bytes. These ops take host inputs
(`cpu_inputs=True`): inference reads every sample's header (no pixel decode; plain JPEGs for
the whole batch at once, `decoders/_jpeg_batch.py`, other files with Pillow), so output
shapes are known before the run, and a corrupt, empty or oversized (decompression bomb)
sample fails at the call, naming the op, the sample index and, for data from a reader, the
sample's source file (a pending input, e.g. from `io.file.read` in deferred mode, is evaluated
at that point); a sample that fails while decoding is named the same way. Crop, slice and
random windows are computed in inference too (`ops/_decoder_windows.py`); random ones from
`rng=` or the default RNG, so a checkpoint needs only the RNG state.

Decoding is CPU work on either device: the CPU kernel decodes each sample with Pillow
(libjpeg-turbo; bit-exact with DALI's CPU decoder) on the thread pool. For crop, slice and
random windows of baseline RGB JPEGs it decodes only the rows down to the window's last one
(`decoders/_jpeg_rows.py`, same pixels), so a file truncated below the window still decodes.
With `device="gpu"` the encoded bytes stay on the host; the GPU kernel decodes with
nvImageCodec when it is installed and CUDA is real, and otherwise decodes on the CPU and
uploads the batch in one packed copy.
There is no Triton kernel for decoding: entropy decoding is serial per image and belongs to
nvJPEG/nvImageCodec, not to a hand-written kernel.
"""

from __future__ import annotations

import warnings
from types import ModuleType

import numpy as np

from ndd_triton.core.dtype import DType, float32, int16, int64, uint8, uint16
from ndd_triton.decoders._header_hints import HINT, HINT_FLAT, HINT_HWC
from ndd_triton.ops import _decoder_windows as windows
from ndd_triton.ops import limits
from ndd_triton.ops.schema import Arg, Call, Input, InputMeta, OpSchema, OutputSpec

_DTYPES = (uint8, uint16, int16, float32)
_IMAGE_TYPES = (0, 1, 2, 3, 4)
_DEPRECATED = ("memory_stats", "split_stages", "use_chunk_allocator")

_COMMON = (
    Arg("output_type", "enum", default=0, choices=_IMAGE_TYPES,
        doc="Colour space: RGB, BGR, GRAY (1 channel), YCbCr (BT.601) or ANY_DATA (the file's "
            "own channel count)."),
    Arg("dtype", "dtype", default=uint8,
        doc="Output type: uint8, or uint16/int16/float32 rescaled to [0, max] ([0, 1] for "
            "float32)."),
    Arg("adjust_orientation", "bool", default=True, doc="Apply the EXIF orientation."),
    Arg("use_fast_idct", "bool", default=False,
        doc="Accepted for DALI compatibility; the CPU decoder always uses the exact IDCT."),
    Arg("jpeg_fancy_upsampling", "bool", default=False,
        doc="GPU decoder: upsample chroma as the CPU does (the fallback path always does)."),
    Arg("affine", "bool", default=True, doc="GPU tuning hint (no effect)."),
    Arg("device_memory_padding", "int", default=16777216, doc="GPU tuning hint (no effect)."),
    Arg("device_memory_padding_jpeg2k", "int", default=0, doc="GPU tuning hint (no effect)."),
    Arg("host_memory_padding", "int", default=8388608, doc="GPU tuning hint (no effect)."),
    Arg("host_memory_padding_jpeg2k", "int", default=0, doc="GPU tuning hint (no effect)."),
    Arg("hw_decoder_load", "float", default=0.65, doc="GPU tuning hint (no effect)."),
    Arg("hybrid_huffman_threshold", "int", default=1000000, doc="GPU tuning hint (no effect)."),
    Arg("preallocate_height_hint", "int", default=0, doc="GPU tuning hint (no effect)."),
    Arg("preallocate_width_hint", "int", default=0, doc="GPU tuning hint (no effect)."),
    Arg("memory_stats", "bool", default=False, doc="Deprecated (no effect)."),
    Arg("split_stages", "bool", default=False, doc="Deprecated (no effect)."),
    Arg("use_chunk_allocator", "bool", default=False, doc="Deprecated (no effect)."),
)
_CACHE = (
    Arg("cache_size", "int", default=0, doc="Decoded-image cache (no effect)."),
    Arg("cache_threshold", "int", default=0, doc="Decoded-image cache (no effect)."),
    Arg("cache_type", "str", default="", doc="Decoded-image cache (no effect)."),
    Arg("cache_batch_copy", "bool", default=True, doc="Decoded-image cache (no effect)."),
    Arg("cache_debug", "bool", default=False, doc="Decoded-image cache (no effect)."),
)
_ENCODED = Input("input", host_values=True, doc="Encoded image files (1-D uint8 samples).")


_HELPERS: tuple[ModuleType, ModuleType, ModuleType] | None = None


def _helpers() -> tuple[ModuleType, ModuleType, ModuleType]:
    """`decoders._pillow`, `_image_infos` and `_sources`, imported on first use (`import
    ndd_triton` does not load PIL) and kept (an import statement costs ~1 us per call)."""
    global _HELPERS
    if _HELPERS is None:
        from ndd_triton.decoders import _image_infos, _pillow, _sources

        _HELPERS = (_pillow, _image_infos, _sources)
    return _HELPERS


def encoded_samples(call: Call, meta: InputMeta, what: str = "input 0") -> list[np.ndarray]:
    """The host bytes of an input of encoded data (checks dtype and rank)."""
    if meta.dtype != uint8:
        raise call.error(f"{what} must hold encoded bytes as uint8; got {meta.dtype}",
                         RuntimeError)  # fmt: skip
    if meta.ndim != 1 and len(meta.shapes):  # (an empty batch decodes to an empty batch)
        raise call.error(f"{what} must be 1-D encoded bytes per sample; got {meta.ndim}-D "
                         f"samples of shape {tuple(meta.shapes[0])}", RuntimeError)  # fmt: skip
    values = meta.values
    assert values is not None
    hints = meta.hints
    if hints and hints.get(HINT_FLAT):  # a reader's slices of one buffer: 1-D, contiguous
        return values
    return [v if v.ndim == 1 and v.flags.c_contiguous else np.ascontiguousarray(v).reshape(-1)
            for v in values]  # fmt: skip


def read_headers(call: Call) -> np.ndarray:
    """Parse every sample's header; derive `encoded`/`info`; returns `[N, 3]` decoded shapes.
    Plain JPEGs are parsed for the whole batch at once (`decoders/_image_infos.py`), the
    other samples one by one. A sample's source (the reader's file name, for messages) is
    looked up only on an error."""
    pil, _image_infos, _sources = _helpers()
    meta = call.inputs[0]
    samples = encoded_samples(call, meta)
    hints = meta.hints or {}
    hwc = hints.get(HINT_HWC)  # every sample's header parsed ahead by a reader
    if hwc is not None:
        infos = _image_infos.ImageInfos(hwc)
    else:
        infos, todo = _image_infos.plain_infos(samples, hints.get(HINT))
        for i in todo:
            try:
                infos.given[i] = pil.read_info(samples[i])
            except pil.ImageError as e:
                source = _sources.sample_sources([samples[i]])[0]
                raise call.error(f"{_sources.describe(i, source)}: {e}", RuntimeError) from None
    call.derive("encoded", samples, per_sample=True)
    call.derive("info", infos, per_sample=True)
    values = call.values
    output_type = values.get("output_type")
    if output_type is None:
        output_type = values.get("image_type", 0)
    return infos.shapes(int(output_type), bool(values["adjust_orientation"]))


def _check_common(call: Call) -> DType:
    if not call.given.isdisjoint(_DEPRECATED):
        for name in _DEPRECATED:
            if name in call.given:
                warnings.warn(f"{call.schema.name}: argument '{name}' is deprecated and has no "
                              "effect", DeprecationWarning, stacklevel=4)  # fmt: skip
    dtype: DType = call.values["dtype"]  # (not `call.dtype`: a failed attribute lookup first)
    if dtype not in _DTYPES:
        raise call.error(f"argument 'dtype' must be one of "
                         f"{', '.join(str(d) for d in _DTYPES)}; got {dtype}")
    return dtype


def _infer_image(call: Call) -> OutputSpec:
    dtype = _check_common(call)
    shapes = read_headers(call)
    call.derive("window", None)
    call.derive("rows", None)  # (per sample, the rows its reader reads: decoded down to them)
    return OutputSpec(dtype, shapes, "HWC")


def _with_windows(call: Call, window_fn) -> OutputSpec:  # type: ignore[no-untyped-def]
    dtype = _check_common(call)
    dims = read_headers(call)
    table = window_fn(call, dims)
    call.derive("window", table, per_sample=True)
    shapes = dims.copy()
    shapes[:, :2] = table[:, 2:]
    return OutputSpec(dtype, shapes, "HWC")


def _infer_crop(call: Call) -> OutputSpec:
    return _with_windows(call, windows.crop_windows)


def _infer_slice(call: Call) -> OutputSpec:
    return _with_windows(call, windows.slice_windows)


def _infer_random_crop(call: Call) -> OutputSpec:
    area, ratio = call.random_area, call.random_aspect_ratio
    if len(area) != 2 or not 0 < area[0] <= area[1] <= 1:
        raise call.error(f"argument 'random_area' expects [min, max] with 0 < min <= max <= 1; "
                         "got "
                         f"{area}")  # fmt: skip
    if len(ratio) != 2 or not 0 < ratio[0] <= ratio[1]:
        raise call.error(f"argument 'random_aspect_ratio' expects [min, max] with 0 < min <= "
                         f"max; got {ratio}")  # fmt: skip
    if call.num_attempts < 1:
        raise call.error(f"argument 'num_attempts' must be positive; got {call.num_attempts}")
    limits.check_count(call, "num_attempts", 4 * call.num_attempts, "random draws")
    from ndd_triton.random import get_default_rng

    def draw(c: Call, dims: np.ndarray) -> np.ndarray:
        # After the headers were read: a call that fails consumes no random numbers.
        rng = c.rng or get_default_rng()
        count = 2 * int(c.num_attempts) + 2
        uniforms = rng.take_uniform(c.batch_size * count, np.float64)
        return windows.random_windows(c, dims, uniforms.reshape(c.batch_size, count))

    return _with_windows(call, draw)


_CROP_ARGS = (
    Arg("crop", "float", vector=True, per_sample=True, doc="Window (H, W); extents truncated."),
    Arg("crop_h", "float", default=0.0, per_sample=True, doc="Window height (with crop_w)."),
    Arg("crop_w", "float", default=0.0, per_sample=True, doc="Window width (with crop_h)."),
    Arg("crop_d", "float", default=0.0, per_sample=True, doc="Window depth (volumes only)."),
    Arg("crop_pos_x", "float", default=0.5, per_sample=True,
        doc="Normalised x start: x0 = round(pos * (W - crop_w))."),
    Arg("crop_pos_y", "float", default=0.5, per_sample=True,
        doc="Normalised y start: y0 = round(pos * (H - crop_h))."),
    Arg("crop_pos_z", "float", default=0.5, per_sample=True, doc="Normalised z start (volumes)."),
    Arg("rounding", "str", default="round", choices=("round", "truncate"),
        doc="Start rounding: 'round' (half away from zero) or 'truncate'."),
)
_SLICE_ARGS = (
    Arg("start", "int", vector=True, per_sample=True, doc="Absolute start per listed axis."),
    Arg("end", "int", vector=True, per_sample=True, doc="Absolute end (exclusive)."),
    Arg("shape", "int", vector=True, per_sample=True, doc="Absolute extent."),
    Arg("rel_start", "float", vector=True, per_sample=True, doc="Start as a fraction."),
    Arg("rel_end", "float", vector=True, per_sample=True, doc="End as a fraction."),
    Arg("rel_shape", "float", vector=True, per_sample=True, doc="Extent as a fraction."),
    Arg("axes", "int", vector=True, default=(1, 0),
        doc="Axes the coordinates refer to (default W, H)."),
    Arg("axis_names", "layout", default="WH", doc="Axes by name; exclusive with 'axes'."),
    Arg("normalized_anchor", "bool", default=True,
        doc="A float positional anchor is a fraction of the extent."),
    Arg("normalized_shape", "bool", default=True,
        doc="A float positional shape is a fraction of the extent."),
)
_RANDOM_ARGS = (
    Arg("random_area", "float", vector=True, default=(0.08, 1.0),
        doc="Range of the window area as a fraction of the image area."),
    Arg("random_aspect_ratio", "float", vector=True, default=(0.75, 1.333333),
        doc="Range of the window aspect ratio (W/H), sampled log-uniformly."),
    Arg("num_attempts", "int", default=10,
        doc="Draws before falling back to the whole image."),
    Arg("rng", "rng", doc="Random generator (default: the thread's default RNG)."),
)


def _infer_peek(call: Call) -> OutputSpec:
    if not (call.dtype.is_float or call.dtype.is_integer):
        raise call.error(f"argument 'dtype' must be a numeric type; got {call.dtype}")
    shapes = read_headers(call)
    call.derive("decoded_shape", shapes, per_sample=True)
    return OutputSpec(call.dtype, np.full((call.batch_size, 1), 3, np.int64), None)


def _infer_file_read(call: Call) -> OutputSpec:
    meta = call.inputs[0]
    if meta.dtype != uint8 or meta.ndim != 1:
        raise call.error(f"input 0 must be 1-D uint8 samples holding UTF-8 file paths (e.g. "
                         f"np.frombuffer(path.encode(), np.uint8)); got {meta.ndim}-D "
                         f"{meta.dtype}")  # fmt: skip
    assert meta.values is not None
    paths = []
    for i, value in enumerate(meta.values):
        try:
            paths.append(bytes(np.ascontiguousarray(value)).decode("utf-8"))
        except UnicodeDecodeError as e:
            raise call.error(f"sample {i}: the path is not valid UTF-8 ({e})") from None
    call.derive("path", paths, per_sample=True)
    return OutputSpec(uint8, None, None, ndim=1)


_DECODE = "Decodes images (JPEG, JPEG 2000, TIFF, PNG, BMP, PNM, WebP) to HWC."
schemas = [
    OpSchema(name="decoders.image", doc=_DECODE, inputs=(_ENCODED,), args=_COMMON + _CACHE,
             infer=_infer_image, module="decoders", cpu_inputs=True, shapes_from_data=True),
    OpSchema(name="decoders.image_crop", doc=_DECODE + " Returns a window of each image.",
             inputs=(_ENCODED,), args=_COMMON + _CROP_ARGS, infer=_infer_crop,
             module="decoders", cpu_inputs=True, shapes_from_data=True),
    OpSchema(name="decoders.image_slice", doc=_DECODE + " Returns a slice of each image.",
             inputs=(Input("data", host_values=True, doc="Encoded image files."),
                     Input("anchor", optional=True, host_values=True,
                           doc="Slice start per axis (float: normalized)."),
                     Input("shape_input", optional=True, host_values=True,
                           doc="Slice extent per axis (float: normalized).")),
             args=_COMMON + _SLICE_ARGS, infer=_infer_slice, module="decoders", cpu_inputs=True,
             shapes_from_data=True),
    OpSchema(name="decoders.image_random_crop",
             doc=_DECODE + " Returns a random window (area and aspect ratio) of each image.",
             inputs=(_ENCODED,), args=_COMMON + _RANDOM_ARGS, infer=_infer_random_crop,
             random=True, module="decoders", cpu_inputs=True, shapes_from_data=True),
    OpSchema(name="peek_image_shape", doc="Shape (H, W, C) of each encoded image, from its "
             "header only.", inputs=(_ENCODED,), args=(
                 Arg("dtype", "dtype", default=int64, doc="Output type."),
                 Arg("image_type", "enum", default=0, choices=_IMAGE_TYPES,
                     doc="Colour space that decides C (RGB: 3, GRAY: 1, ANY_DATA: stored)."),
                 Arg("adjust_orientation", "bool", default=True,
                     doc="Swap H and W for EXIF orientations 5-8.")),
             infer=_infer_peek, devices=("cpu",), module="decoders", cpu_inputs=True),
    OpSchema(name="io.file.read", doc="Reads whole files; input: UTF-8 paths as 1-D uint8.",
             inputs=(Input("filepaths", host_values=True, doc="Paths as 1-D uint8 samples."),),
             args=(Arg("dont_use_mmap", "bool", default=False, doc="Accepted (no effect)."),
                   Arg("use_o_direct", "bool", default=False, doc="Accepted (no effect).")),
             infer=_infer_file_read, devices=("cpu",), module="decoders", cpu_inputs=True),
]
