"""Decoders on the CPU: Pillow decode per sample (the executor maps samples over the pool).

Inference has already parsed each header (`arg.info`) and fixed the output window
(`arg.window`: y0, x0, h, w over the oriented image, or None for the whole image).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ndd_triton.core.dtype import uint8
from ndd_triton.decoders import _pillow, _sources
from ndd_triton.decoders._image_infos import ImageInfos
from ndd_triton.decoders._jpeg_rows import decode_top_rows
from ndd_triton.kernels import register
from ndd_triton.ops import decoders
from ndd_triton.ops.schema import Call, SampleArgs

_SCHEMAS = {s.name: s for s in decoders.schemas}
_DECODERS = ("decoders.image", "decoders.image_crop", "decoders.image_slice",
             "decoders.image_random_crop")  # fmt: skip


def decode_sample(out: np.ndarray, arg: SampleArgs, op: str) -> None:
    """Decode `arg.encoded` and write its window into `out` (RuntimeError names the sample and
    its source file when a reader produced it)."""
    try:
        window = arg.window
        if window is None and _pillow.decode_into(out, arg.encoded, arg.info,
                                                  int(arg.output_type),
                                                  bool(arg.adjust_orientation)):  # fmt: skip
            return
        if window is not None:
            pixels = _pillow.decode_window(arg.encoded, arg.info, int(arg.output_type),
                                           bool(arg.adjust_orientation),
                                           tuple(int(v) for v in window))  # type: ignore[arg-type]  # fmt: skip
        else:
            pixels = _pillow.decode(arg.encoded, arg.info, int(arg.output_type),
                                    bool(arg.adjust_orientation))  # fmt: skip
        if pixels.shape != out.shape:
            raise _pillow.ImageError(f"decoded shape {pixels.shape} differs from the header's "
                                     f"{out.shape}")  # fmt: skip
        _pillow.store(out, pixels)
    except _pillow.ImageError as e:
        source = _sources.sample_sources([arg.encoded])[0]  # looked up only for the message
        raise RuntimeError(f"{op}: {_sources.describe(arg.index, source)}: {e}") from e


def _make(op: str):  # type: ignore[no-untyped-def]
    def decode_cpu(out: np.ndarray, *inputs_and_arg: object) -> None:
        arg = inputs_and_arg[-1]
        assert isinstance(arg, SampleArgs)
        decode_sample(out, arg, op)

    decode_cpu.__name__ = decode_cpu.__qualname__ = f"{op.rsplit('.', 1)[1]}_cpu"
    decode_cpu.__doc__ = f"`{op}` for one sample."
    return decode_cpu


def bind_direct_rgb(call: Call) -> Callable[[np.ndarray, int], None] | None:
    """`decoders.image` of a batch whose every image decodes straight into uint8 RGB
    (`_pillow.direct_rgb`, the common case): one libjpeg call per sample, the checks of
    `decode_sample` made once here. A sample libjpeg reports on goes through `decode_sample`
    (Pillow decodes it or the error names it), exactly as it would have."""
    values = call.values  # (read directly: the checks run on every call, tiny ones too)
    dtype = values["dtype"]
    if (dtype is not uint8 and dtype != uint8) or values["window"] is not None:
        return None
    output_type, adjust = int(values["output_type"]), bool(values["adjust_orientation"])
    infos: ImageInfos = values["info"]
    if not infos.all_direct_rgb(output_type, adjust):
        return None
    encoded: list[np.ndarray] = values["encoded"]
    decode_jpeg = _pillow.direct_rgb_decoder()
    rows = values.get("rows")  # per sample, the rows the output's reader reads (None: all)
    if rows is not None:
        rows = rows.tolist()

    def one(out: np.ndarray, i: int) -> None:
        try:
            if rows is not None and rows[i] < out.shape[0] and \
                    decode_top_rows(encoded[i], rows[i], out) is not None:  # fmt: skip
                return  # (rows below them are not written: nothing reads them)
            decode_jpeg(encoded[i], "RGB", buffer=out)
        except Exception:
            decode_sample(out, SampleArgs(call, i, None), "decoders.image")

    return one


for _name in _DECODERS:
    register(_SCHEMAS[_name], "cpu",
             bind=bind_direct_rgb if _name == "decoders.image" else None)(_make(_name))


@register(_SCHEMAS["peek_image_shape"], "cpu")
def peek_image_shape_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """The header-derived (H, W, C), converted to the output dtype."""
    out[...] = np.asarray(arg.decoded_shape).astype(out.dtype)


@register(_SCHEMAS["io.file.read"], "cpu")
def file_read_cpu(inp: np.ndarray, arg: SampleArgs) -> np.ndarray:
    """The whole file as 1-D uint8 (RuntimeError names the file)."""
    path = arg.path
    try:
        return np.fromfile(path, dtype=np.uint8)
    except OSError as e:
        reason = e.strerror or str(e)
        raise RuntimeError(f"io.file.read: sample {arg.index}: cannot read file {path!r}: "
                           f"{reason}") from e  # fmt: skip
