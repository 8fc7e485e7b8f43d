"""Decoders with device="gpu": encoded bytes on the host, decoded images in GPU memory.

This "GPU kernel" is deliberately not Triton: entropy decoding (Huffman, zlib) is serial
within an image, so a hand-written kernel would not beat the CPU, let alone nvJPEG. Two paths:

* **nvImageCodec** (`pip install ndd_triton[cuda]`, `[cuda13]` for CUDA 13; real CUDA only;
  checked with nvImageCodec 0.9 on an H200, perf/gpu.md): the batch is decoded by
  `nvidia.nvimgcodec` (nvJPEG, hardware decoder where present) on the op's stream. A plain RGB
  uint8 batch is decoded straight into the slots of the packed output (`as_images` over them);
  otherwise each image is windowed, colour-converted and rescaled into its slot with torch.
  nvJPEG output can differ from libjpeg-turbo by a few levels (4:2:0 chroma), as DALI's GPU
  decoder does (within the golden tolerance). Truncated JPEG/PNG files, which nvJPEG decodes
  silently, and any codec failure (missing codec, unsupported format) fall back to:
* **host decode + upload**: every sample is decoded as the CPU backend decodes it (one libjpeg
  call per sample for a batch of plain RGB JPEGs, `bind_direct_rgb`; else Pillow) on the CPU
  thread pool straight into one staging buffer laid out like the output (pinned memory with
  real CUDA, the output itself on the emulated device), then copied to the GPU in one transfer.

Both paths decode the same window that inference fixed, so shapes always match the spec.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ndd_triton.decoders import _header_hints
from ndd_triton.decoders._header_hints import HINT_ALL_EOI, HINT_CODE_STREAMS, HINT_EOI
from ndd_triton.decoders._pillow import ANY_DATA, GRAY, RGB, ROUNDED_GRAY_FORMATS
from ndd_triton.kernels import register
from ndd_triton.kernels.cpu.decoders import _DECODERS, _SCHEMAS, bind_direct_rgb, decode_sample
from ndd_triton.kernels.gpu._complete_files import all_complete
from ndd_triton.kernels.gpu._tables import GpuBatch, GpuRun
from ndd_triton.ops.schema import Call, SampleArgs

_nvimgcodec_decoder: Any = None


def _host_decode(run: GpuRun, out: GpuBatch, call: Call, op: str) -> None:
    """Decode on the CPU into a host buffer shaped like `out`, then one copy to the device."""
    data = out.data
    on_host = not data.is_cuda  # (`.device` makes a torch.device object: ~0.5 us more)
    host = data if on_host else torch.empty(data.numel(), dtype=data.dtype, pin_memory=True)
    flat = host.numpy()
    decode = _sample_decoder(call, op)
    # Python values for the per-sample views, made for the whole batch at once; a view made by
    # the ndarray constructor costs half a slice and a reshape
    dtype, itemsize = flat.dtype, flat.itemsize
    starts = (out.offsets if itemsize == 1 else out.offsets * itemsize).tolist()
    shapes = out.shapes.tolist()

    def one(i: int) -> None:
        decode(np.ndarray(shapes[i], dtype, flat, starts[i]), i)

    # The calling thread decodes too (it would only wait): one pool thread fewer to wake.
    # Decoding makes no torch calls, so this thread's torch threading does not matter.
    run.pool.run(one, call.batch_size, work_bytes=int(flat.nbytes), caller_helps=True)
    if not on_host:
        data.copy_(host, non_blocking=True)


def _sample_decoder(call: Call, op: str) -> Callable[[np.ndarray, int], None]:
    """`decode(out, i)` of sample i into its view `out`: the CPU backend's, one libjpeg call
    per sample for a batch that decodes straight into uint8 RGB (`bind_direct_rgb`), else
    `decode_sample`."""
    direct = bind_direct_rgb(call) if op == "decoders.image" else None
    if direct is not None:
        return direct

    def decode(view: np.ndarray, i: int) -> None:
        decode_sample(view, SampleArgs(call, i, "HWC"), op)

    return decode


def _nvimgcodec() -> Any:
    """The shared nvImageCodec decoder, or None when the package is not installed."""
    global _nvimgcodec_decoder
    if _nvimgcodec_decoder is None:
        try:
            from nvidia import nvimgcodec
        except ImportError:
            _nvimgcodec_decoder = False
        else:
            _nvimgcodec_decoder = (nvimgcodec, nvimgcodec.Decoder())
    return _nvimgcodec_decoder or None


def _convert_on_device(rgb: torch.Tensor, output_type: int, rounded: bool = False
                       ) -> torch.Tensor:  # fmt: skip
    """RGB uint8 HWC -> the output colour space, same formulas as the CPU path (`rounded`:
    grey rounded as for the formats in `_pillow.ROUNDED_GRAY_FORMATS`)."""
    if output_type == 1:
        return rgb.flip(-1)
    wide = rgb.to(torch.int32)
    if output_type == 2:
        acc = wide[..., 0] * 4899 + wide[..., 1] * 9617 + wide[..., 2] * 1868
        return ((acc + (1 << 13 if rounded else 0)) >> 14).to(torch.uint8)[..., None]
    if output_type == 3:
        m = torch.tensor([[65.481, 128.553, 24.966], [-37.797, -74.203, 112.0],
                          [112.0, -93.786, -18.214]], dtype=torch.float64, device=rgb.device)
        ycc = rgb.to(torch.float64) @ (m / 255.0).T + torch.tensor([16.0, 128.0, 128.0],
                                                                   device=rgb.device)
        return torch.floor(ycc + 0.5).clamp(0, 255).to(torch.uint8)
    return rgb


def _store_on_device(dst: torch.Tensor, pixels: torch.Tensor) -> None:
    if dst.dtype == torch.uint8:
        dst.copy_(pixels)
    elif dst.dtype.is_floating_point:  # true division, as the CPU (a Python-scalar divisor
        # would be a multiplication by 1/255 on CUDA: off by an ulp)
        dst.copy_(pixels.to(torch.float32) / torch.tensor(255.0, device=pixels.device))
    elif dst.dtype == torch.uint16:
        dst.copy_(pixels.to(torch.int32) * 257)
    else:
        dst.copy_(torch.floor(pixels.to(torch.float64) * (32767 / 255) + 0.5))


_warned = False


def _warn_fallback(op: str, error: Exception) -> None:
    """Say once per process that nvImageCodec could not be used (later failures are silent)."""
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(f"{op} (device='gpu'): nvImageCodec failed ({type(error).__name__}: "
                      f"{error}); decoding on the host instead", RuntimeWarning, stacklevel=2)


_DLPACK_CUDA = (2, 13)  # kDLCUDA, kDLCUDAManaged


def _to_torch(image: Any, stream: int | None) -> torch.Tensor:
    """An nvImageCodec Image as a torch tensor (zero-copy, on the device it is on). A device
    image's DLPack capsule is asked for with the op's stream (`stream`), as `torch.from_dlpack`
    would after looking that stream up again for every image; a host image's (the codec's CPU
    backends) with none."""
    if hasattr(image, "__dlpack__"):
        on_device = stream is not None and image.__dlpack_device__()[0] in _DLPACK_CUDA
        capsule = image.__dlpack__(stream=stream) if on_device else image.__dlpack__()
        return torch.from_dlpack(capsule)
    return torch.as_tensor(image)


def _nvimgcodec_decode(out: GpuBatch, call: Call, codec: Any) -> bool:
    """Decode with nvImageCodec into `out`; False (nothing written) when it cannot."""
    module, decoder = codec
    output_type = int(call.values["output_type"])
    # the encoded samples themselves (no copies: CodeStream reads any buffer)
    data = call.encoded  # 1-D contiguous (the op's inference made them so)
    hints = call.inputs[0].hints
    eoi = (hints.get(HINT_ALL_EOI) or hints.get(HINT_EOI)) if hints else None
    if not all_complete(data, call.values.get("info"), eoi):
        return False
    if _header_hints.stream_maker() is not module.CodeStream:  # readers: make them from now on
        _header_hints.want_code_streams(module.CodeStream)
    try:
        # nvImageCodec >= 0.6 names sRGB `SRGB`; earlier releases `RGB`
        rgb = getattr(module.ColorSpec, "SRGB", None) or module.ColorSpec.RGB
        plain = module.ColorSpec.UNCHANGED if output_type == ANY_DATA else rgb
        # JPEG grey: the codec's own luma output (libjpeg's, as the CPU path); else convert
        specs = [module.ColorSpec.GRAY if d[:2].tobytes() == b"\xff\xd8" else plain
                 for d in data] if output_type == GRAY else [plain] * len(data)  # fmt: skip
        on_device = out.data.is_cuda
        stream = torch.cuda.current_stream(out.data.device).cuda_stream if on_device else 0
        if _INTO_OUTPUT[0] and _decode_into_output(module, decoder, out, call, specs, rgb, stream):
            return True
        images: list[Any] = [None] * len(data)
        streams = _code_streams(module, call)
        for spec in dict.fromkeys(specs):  # one batched call per colour spec (at most two)
            which = [i for i, s in enumerate(specs) if s == spec]
            got = decoder.decode([streams[i] for i in which],
                                 params=_params(module, spec, call), cuda_stream=stream)
            for i, image in zip(which, got, strict=True):
                images[i] = image
        if any(im is None for im in images):  # not decodable there: the host decoder says why
            return False
        handle = stream if on_device else None
        device = out.data.device
        decoded = [_to_torch(im, handle) for im in images]
        if any(t.device != device for t in decoded):  # not where the output is: no zero-copy
            decoded = [t.to(device) for t in decoded]
    except Exception as e:  # an API or codec problem: decode on the host instead, say so once
        _warn_fallback(call.schema.name, e)
        return False
    decoded = [t[..., None] if t.ndim == 2 else t for t in decoded]
    if any(t.ndim != 3 or t.dtype != torch.uint8 for t in decoded):
        return False
    windows = call.values.get("window")
    infos = call.values.get("info")
    results = []
    shapes = out.shapes.tolist()
    for i, pixels in enumerate(decoded):
        if windows is not None:
            y0, x0, h, w = (int(v) for v in windows[i])
            pixels = pixels[y0:y0 + h, x0:x0 + w]
        if output_type in (1, 3) or (output_type == 2 and pixels.shape[-1] != 1):
            rounded = infos is not None and infos[i].format in ROUNDED_GRAY_FORMATS
            pixels = _convert_on_device(pixels, output_type, rounded)
        if list(pixels.shape) != shapes[i]:
            return False
        results.append(pixels)
    sizes = out.sizes
    if out.data.dtype == torch.uint8 and _packed(out) and results:  # one copy kernel for the batch
        torch.cat([p.reshape(-1) for p in results], out=out.data[:int(sizes.sum())])
        return True
    for i, pixels in enumerate(results):
        start = int(out.offsets[i])
        dst = out.data[start:start + int(sizes[i])].view(pixels.shape)
        _store_on_device(dst, pixels)
    return True


_INTO_OUTPUT = [True]  # False once nvImageCodec refused to decode into our buffers


def _decode_into_output(module: Any, decoder: Any, out: GpuBatch, call: Call, specs: list[Any],
                        rgb: Any, stream: int) -> bool:  # fmt: skip
    """Decode a plain RGB uint8 batch straight into the packed output's slots (nvImageCodec
    writes into Images wrapping them): no per-image DLPack wrap, no packing copy, no codec
    allocation per image (wrapping and packing the codec's images cost ~1.7 ms per 64 JPEGs
    calling nvImageCodec directly, over half of the decode: perf/gpu.md, 2026-11-27, H200;
    whether this path is faster is still to be measured there). False (nothing trusted) when
    the batch needs another path,
    the codec failed on it, or it does not support or did not honour `images=` (then it is not
    asked this way again in this process)."""
    if int(call.values["output_type"]) != RGB or call.values.get("window") is not None or \
            out.data.dtype != torch.uint8 or specs.count(rgb) != len(specs):  # fmt: skip
        return False
    if not _packed(out):
        return False
    pointers = (out.data.data_ptr() + out.offsets).tolist()  # uint8: an element is a byte
    try:
        images = _as_images(module, out, pointers, stream)
        got = decoder.decode(_code_streams(module, call), images=images,
                             params=_params(module, rgb, call), cuda_stream=stream)  # fmt: skip
        if None in got:  # the other path (and the host decoder) say why
            return False
        written = [im.__cuda_array_interface__["data"][0] for im in got] == pointers
    except (AttributeError, TypeError):  # this nvImageCodec cannot decode into given buffers
        written = False
    except Exception:  # a codec problem with this batch: the per-image path handles it
        return False
    if not written:
        _INTO_OUTPUT[0] = False
    return written


def _code_streams(module: Any, call: Call) -> list[Any]:
    """The codec's code streams of the call's samples: a reader's (`HINT_CODE_STREAMS`, made
    by this codec's `CodeStream`), else made here."""
    hints = call.inputs[0].hints
    made = hints.get(HINT_CODE_STREAMS) if hints else None
    data = call.encoded
    if made is not None and made[0] is module.CodeStream and len(made[1]) == len(data):
        return made[1]  # type: ignore[no-any-return]
    return list(map(module.CodeStream, data))


def _packed(out: GpuBatch) -> bool:
    """Whether `out`'s samples lie back to back from the buffer's start (every op output:
    known without looking when the runtime allocated it, `GpuBatch.packed`)."""
    if out.packed:
        return True
    sizes = out.sizes
    return (np.cumsum(sizes) - sizes).tolist() == out.offsets.tolist()  # (~1.5 us < array_equal)


def _params(module: Any, spec: Any, call: Call) -> Any:
    """nvImageCodec's DecodeParams for colour spec `spec` and the call's EXIF setting, made
    once per codec module and kept (the codec only reads them; ~1.2 us to make each time)."""
    key = (module, spec, bool(call.adjust_orientation))
    params = _PARAMS.get(key)
    if params is None:
        params = _PARAMS[key] = module.DecodeParams(color_spec=spec,
                                                    apply_exif_orientation=key[2])  # fmt: skip
    return params


_PARAMS: dict[tuple[Any, Any, bool], Any] = {}


class _Slot:
    """One sample's slot of a packed uint8 output as nvImageCodec's `as_images` reads a buffer
    (`__cuda_array_interface__`, version 3; no stream: the images take `as_images`' stream):
    ~0.3 us a sample, where a torch view costs ~4 us to make and its interface several more
    (torch builds it in Python). The output's storage holds the memory."""

    __slots__ = ("__cuda_array_interface__",)

    def __init__(self, pointer: int, shape: tuple[int, ...]) -> None:
        self.__cuda_array_interface__ = {"shape": shape, "typestr": "|u1", "strides": None,
                                         "data": (pointer, False), "version": 3}  # fmt: skip


_SLOTS = [True]  # False once `as_images` refused `_Slot`s: torch views from then on


def _as_images(module: Any, out: GpuBatch, pointers: list[int], stream: int) -> Any:
    """nvImageCodec Images over the packed uint8 output's slots (at `pointers`)."""
    if _SLOTS[0]:
        try:
            # (`map` over the class: no comprehension frame, ~15% less per slot)
            return module.as_images(list(map(_Slot, pointers, map(tuple, out.shapes.tolist()))),
                                    cuda_stream=stream)  # fmt: skip
        except Exception:  # (an nvImageCodec that reads buffers otherwise)
            _SLOTS[0] = False
    return module.as_images(_targets(out), cuda_stream=stream)


def _targets(out: GpuBatch) -> list[torch.Tensor]:
    """The packed output's sample slots as torch views (`_as_images` without `_Slot`s)."""
    flat = out.data
    return [flat[o:o + n].view(h, w, c) for o, n, (h, w, c) in
            zip(out.offsets.tolist(), out.sizes.tolist(), out.shapes.tolist(), strict=True)]


def _device_codec_wanted(out: GpuBatch) -> bool:
    """Decode on the device only when the output is in real CUDA memory."""
    return bool(out.data.is_cuda)


def _make(op: str):  # type: ignore[no-untyped-def]
    def decode_gpu(run: GpuRun, out: GpuBatch, *inputs_and_call: Any) -> None:
        call = inputs_and_call[-1]
        assert isinstance(call, Call)
        if _device_codec_wanted(out) and call.batch_size:
            codec = _nvimgcodec()
            if codec is not None and _nvimgcodec_decode(out, call, codec):
                return
        _host_decode(run, out, call, op)

    decode_gpu.__name__ = decode_gpu.__qualname__ = f"{op.rsplit('.', 1)[1]}_gpu"
    decode_gpu.__doc__ = f"`{op}` on the GPU (nvImageCodec, else host decode + one upload)."
    return decode_gpu


for _name in _DECODERS:
    register(_SCHEMAS[_name], "gpu")(_make(_name))

