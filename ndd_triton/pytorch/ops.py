"""ndd operators as torch custom ops: callable inside `torch.compile(fullgraph=True)`.

Each op is a `torch.library.custom_op` in the `ndd` namespace (`torch.ops.ndd.<name>`, or the
objects of this module) with a fake (meta) implementation, so Dynamo and Inductor treat it as
one opaque node whose output shape and dtype are known without running it: no graph break.
At run time it wraps the tensor as an ndd batch without a copy, runs the ndd operator (CPU
kernels for CPU tensors, Triton kernels for CUDA tensors, on torch's current stream) and
returns the result as a torch tensor.

Tensors are batches of channel-last images, `(N, H, W, C)`, or one image `(H, W, C)`; arguments
are per batch (the same for every sample). Covered: flip, resize, crop, crop_mirror_normalize,
brightness_contrast, color_twist, normalize, cast, gaussian_blur. The ordinary ndd API stays
a clean graph break inside compiled code (runtime/torch_compile.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ndd_triton.core.construct import as_batch
from ndd_triton.core.dtype import dtype as to_ndd_dtype
from ndd_triton.ops.opgen import public_function
from ndd_triton.runtime.eval_context import get_current_stream

__all__ = ["brightness_contrast", "cast", "color_twist", "crop", "crop_mirror_normalize",
           "flip", "gaussian_blur", "normalize", "resize"]  # fmt: skip

_NS = "ndd"


def _images(x: torch.Tensor, where: str) -> tuple[torch.Tensor, bool]:
    """`x` as an `(N, H, W, C)` batch, and whether it was one `(H, W, C)` image."""
    if x.dim() == 3:
        return x.unsqueeze(0), True
    if x.dim() != 4:
        raise ValueError(f"ndd.{where}: expected (N, H, W, C) images or one (H, W, C) image; "
                         f"got a tensor of shape {tuple(x.shape)}")
    return x, False


def _run(name: str, x: torch.Tensor, **args: Any) -> torch.Tensor:
    """Run ndd operator `name` on the images `x` and return a torch tensor of the result."""
    images, single = _images(x, name)
    images = images.contiguous()
    if images.is_cuda:  # ndd's stream reads x after the producer on torch's current stream
        stream = get_current_stream()
        if stream is not None and stream.torch_stream is not None:
            stream.torch_stream.wait_stream(torch.cuda.current_stream())
    batch = as_batch(images, layout="HWC")
    out = public_function(name)(batch, **args).torch()  # consumer stream waits, no host sync
    out = out.clone() if out.data_ptr() == images.data_ptr() else out
    return out[0] if single else out


def _like(x: torch.Tensor, shape: tuple[int, ...] | None = None,
          dtype: torch.dtype | None = None) -> torch.Tensor:  # fmt: skip
    return x.new_empty(shape if shape is not None else x.shape, dtype=dtype or x.dtype)


def _op(name: str) -> Callable[[Callable[..., Any]], Any]:
    return torch.library.custom_op(f"{_NS}::{name}", mutates_args=())


# ---- geometry ---------------------------------------------------------------------------------
@_op("flip")
def flip(x: torch.Tensor, horizontal: bool = True, vertical: bool = False) -> torch.Tensor:
    """Mirror the images horizontally and/or vertically (ndd.flip)."""
    return _run("flip", x, horizontal=int(horizontal), vertical=int(vertical))


@flip.register_fake
def _(x: torch.Tensor, horizontal: bool = True, vertical: bool = False) -> torch.Tensor:
    return _like(x)


@_op("resize")
def resize(x: torch.Tensor, height: int, width: int, interp_type: str = "linear",
           antialias: bool = True) -> torch.Tensor:  # fmt: skip
    """Resize every image to `height` x `width` (ndd.resize; output dtype = input dtype)."""
    return _run("resize", x, size=(height, width), interp_type=_interp(interp_type),
                antialias=antialias)  # fmt: skip


@resize.register_fake
def _(x: torch.Tensor, height: int, width: int, interp_type: str = "linear",
      antialias: bool = True) -> torch.Tensor:  # fmt: skip
    return _like(x, (*x.shape[:-3], height, width, x.shape[-1]))


def _interp(name: str) -> Any:
    from ndd_triton.core.enums import DALIInterpType

    try:
        return getattr(DALIInterpType, f"INTERP_{name.upper()}")
    except AttributeError:
        raise ValueError(f"ndd.resize: argument 'interp_type' must be one of 'nn', 'linear', "
                         f"'cubic', 'lanczos3', 'triangular', 'gaussian'; got {name!r}") from None


@_op("crop")
def crop(x: torch.Tensor, height: int, width: int, crop_pos_x: float = 0.5,
         crop_pos_y: float = 0.5) -> torch.Tensor:  # fmt: skip
    """A `height` x `width` window at relative position (crop_pos_x, crop_pos_y) (ndd.crop);
    windows reaching outside the image are zero-padded."""
    return _run("crop", x, crop=(height, width), crop_pos_x=crop_pos_x, crop_pos_y=crop_pos_y,
                out_of_bounds_policy="pad")  # fmt: skip


@crop.register_fake
def _(x: torch.Tensor, height: int, width: int, crop_pos_x: float = 0.5,
      crop_pos_y: float = 0.5) -> torch.Tensor:  # fmt: skip
    return _like(x, (*x.shape[:-3], height, width, x.shape[-1]))


@_op("crop_mirror_normalize")
def crop_mirror_normalize(x: torch.Tensor, height: int = 0, width: int = 0,
                          crop_pos_x: float = 0.5, crop_pos_y: float = 0.5,
                          mean: list[float] | None = None, std: list[float] | None = None,
                          mirror: bool = False, dtype: torch.dtype = torch.float32,
                          output_layout: str = "CHW") -> torch.Tensor:  # fmt: skip
    """Crop (0: no crop), mirror, `(x - mean) / std`, cast to `dtype`, `output_layout` "CHW" or
    "HWC" (ndd.crop_mirror_normalize); out-of-bounds windows are zero-padded."""
    args: dict[str, Any] = {"mirror": int(mirror), "dtype": to_ndd_dtype(dtype),
                            "output_layout": output_layout, "out_of_bounds_policy": "pad"}
    if height and width:
        args.update(crop=(height, width), crop_pos_x=crop_pos_x, crop_pos_y=crop_pos_y)
    if mean is not None:
        args["mean"] = list(mean)
    if std is not None:
        args["std"] = list(std)
    return _run("crop_mirror_normalize", x, **args)


@crop_mirror_normalize.register_fake
def _(x: torch.Tensor, height: int = 0, width: int = 0, crop_pos_x: float = 0.5,
      crop_pos_y: float = 0.5, mean: list[float] | None = None, std: list[float] | None = None,
      mirror: bool = False, dtype: torch.dtype = torch.float32,
      output_layout: str = "CHW") -> torch.Tensor:  # fmt: skip
    h, w, c = x.shape[-3:]
    if height and width:
        h, w = height, width
    if output_layout not in ("CHW", "HWC"):
        raise ValueError(f"ndd.crop_mirror_normalize: argument 'output_layout' must be 'CHW' or "
                         f"'HWC'; got {output_layout!r}")
    tail = (c, h, w) if output_layout == "CHW" else (h, w, c)
    return _like(x, (*x.shape[:-3], *tail), dtype)


# ---- colour and intensity ---------------------------------------------------------------------
@_op("brightness_contrast")
def brightness_contrast(x: torch.Tensor, brightness: float = 1.0, brightness_shift: float = 0.0,
                        contrast: float = 1.0,
                        contrast_center: float | None = None) -> torch.Tensor:  # fmt: skip
    """`brightness * (contrast_center + contrast * (x - contrast_center)) + shift * max`
    (ndd.brightness_contrast; output dtype = input dtype)."""
    args: dict[str, Any] = {"brightness": brightness, "brightness_shift": brightness_shift,
                            "contrast": contrast}  # fmt: skip
    if contrast_center is not None:
        args["contrast_center"] = contrast_center
    return _run("brightness_contrast", x, **args)


@brightness_contrast.register_fake
def _(x: torch.Tensor, brightness: float = 1.0, brightness_shift: float = 0.0,
      contrast: float = 1.0, contrast_center: float | None = None) -> torch.Tensor:  # fmt: skip
    return _like(x)


@_op("color_twist")
def color_twist(x: torch.Tensor, brightness: float = 1.0, contrast: float = 1.0,
                saturation: float = 1.0, hue: float = 0.0) -> torch.Tensor:  # fmt: skip
    """Brightness, contrast, saturation and hue (degrees) of RGB images (ndd.color_twist)."""
    return _run("color_twist", x, brightness=brightness, contrast=contrast,
                saturation=saturation, hue=hue)  # fmt: skip


@color_twist.register_fake
def _(x: torch.Tensor, brightness: float = 1.0, contrast: float = 1.0, saturation: float = 1.0,
      hue: float = 0.0) -> torch.Tensor:  # fmt: skip
    return _like(x)


@_op("normalize")
def normalize(x: torch.Tensor, mean: float | None = None, stddev: float | None = None,
              scale: float = 1.0, shift: float = 0.0, epsilon: float = 0.0) -> torch.Tensor:
    """`(x - mean) / stddev * scale + shift` as float32; mean and stddev of each image when not
    given (ndd.normalize over all axes)."""
    args: dict[str, Any] = {"scale": scale, "shift": shift, "epsilon": epsilon}
    if mean is not None:
        args["mean"] = mean
    if stddev is not None:
        args["stddev"] = stddev
    return _run("normalize", x, **args)


@normalize.register_fake
def _(x: torch.Tensor, mean: float | None = None, stddev: float | None = None,
      scale: float = 1.0, shift: float = 0.0, epsilon: float = 0.0) -> torch.Tensor:
    return _like(x, dtype=torch.float32)


@_op("cast")
def cast(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Convert to `dtype` with DALI's rounding and saturation (ndd.cast), unlike `Tensor.to`."""
    return _run("cast", x, dtype=to_ndd_dtype(dtype))


@cast.register_fake
def _(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    return _like(x, dtype=dtype)


@_op("gaussian_blur")
def gaussian_blur(x: torch.Tensor, sigma: float = 0.0, window_size: int = 0) -> torch.Tensor:
    """Gaussian blur of every image (ndd.gaussian_blur; give sigma, window_size or both)."""
    args: dict[str, Any] = {}
    if sigma:
        args["sigma"] = sigma
    if window_size:
        args["window_size"] = window_size
    if not args:
        raise ValueError("ndd.gaussian_blur: give 'sigma' or 'window_size' (or both)")
    return _run("gaussian_blur", x, **args)


@gaussian_blur.register_fake
def _(x: torch.Tensor, sigma: float = 0.0, window_size: int = 0) -> torch.Tensor:
    return _like(x)
