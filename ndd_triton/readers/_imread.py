"""`ndd.imread`: read and decode image files (`io.file.read` followed by `decoders.image`)."""

from __future__ import annotations

import inspect
import os
from typing import Any

import numpy as np

from ndd_triton.core.batch import Batch
from ndd_triton.core.construct import as_batch, as_tensor
from ndd_triton.core.tensor import Tensor
from ndd_triton.ops import decoders as _decoder_schemas
from ndd_triton.ops.opgen import public_function


def _path_bytes(path: Any, where: str) -> np.ndarray:
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"imread: {where} must be a str or os.PathLike path; got "
                        f"{type(path).__name__} {path!r:.80}")
    return np.frombuffer(os.fsencode(path), dtype=np.uint8).copy()


def imread(filepaths: Any, /, *, device: Any = "cpu", **kwargs: Any) -> Tensor | Batch:
    """Read and decode image files: a path gives a Tensor, a list of paths a Batch.

    A Tensor/Batch of UTF-8 path bytes is accepted too. Keywords are those of
    `decoders.image` (`output_type`, `dtype`, `adjust_orientation`, ...). A missing file
    raises RuntimeError naming it.
    """
    decode = public_function("decoders.image")
    allowed = set(decode._schema.arg_map) | {"batch_size"}
    for name in kwargs:
        if name not in allowed:
            raise TypeError(f"imread() got an unexpected keyword argument '{name}'")
    if isinstance(filepaths, Tensor | Batch):
        paths = filepaths
    elif isinstance(filepaths, list | tuple):
        if not filepaths:
            raise ValueError("imread: the list of paths is empty")
        paths = as_batch([_path_bytes(p, f"path {i}") for i, p in enumerate(filepaths)])
    else:
        paths = as_tensor(_path_bytes(filepaths, "the path"))
    encoded = public_function("io.file.read")(paths)
    return decode(encoded, device=device, **kwargs)  # type: ignore[no-any-return]


def _signature() -> inspect.Signature:
    """DALI's signature: the path positional-only, then every `decoders.image` keyword."""
    schema = next(s for s in _decoder_schemas.schemas if s.name == "decoders.image")
    kw = inspect.Parameter.KEYWORD_ONLY
    params = [inspect.Parameter("filepaths", inspect.Parameter.POSITIONAL_ONLY),
              inspect.Parameter("device", kw, default="cpu"),
              inspect.Parameter("batch_size", kw, default=None)]  # fmt: skip
    params += [inspect.Parameter(a.name, kw, default=None)
               for a in sorted(schema.args, key=lambda a: a.name)]  # fmt: skip
    return inspect.Signature(params)


imread.__signature__ = _signature()  # type: ignore[attr-defined]
