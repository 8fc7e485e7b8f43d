"""ndd_triton: NVIDIA DALI dynamic mode (`ndd`) on torch storage, with Triton GPU kernels.

`import ndd_triton as ndd` runs code written for `nvidia.dali.experimental.dynamic`.
"""

from __future__ import annotations

import os as _os
import sys as _sys

# Pin Triton's FP-fusion default (it changes in Triton 3.10 and warns until pinned).
_os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
if _os.environ.get("NDD_TRITON_EMULATE_GPU") == "1" and "triton" not in _sys.modules:
    # The emulated gpu runs Triton kernels in the interpreter; Triton reads this at jit time.
    _os.environ.setdefault("TRITON_INTERPRET", "1")

from ndd_triton import (
    checkpoint,
    decoders,
    random,
    readers,
    types,
)
from ndd_triton._batch import Batch
from ndd_triton._construct import as_batch, as_tensor, batch, tensor
from ndd_triton._device import Device, device
from ndd_triton._dtype import (
    DataType,
    DType,
    ImageType,
    InterpType,
    bfloat16,
    dtype,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    type_id,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ndd_triton._dtype import bool_ as bool
from ndd_triton._eval_context import EvalContext
from ndd_triton._eval_mode import EvalMode
from ndd_triton._external_source import ExternalSource
from ndd_triton._imread import imread
from ndd_triton._opgen import install as _install
from ndd_triton._per_frame import per_frame
from ndd_triton._profiling import Profile, profile
from ndd_triton._stream import (
    Stream,
    get_current_stream,
    get_default_stream,
    set_current_stream,
    set_default_stream,
    stream,
)
from ndd_triton._tensor import Tensor
from ndd_triton._thread_pool import ThreadPool, get_num_threads, set_num_threads
from ndd_triton.readers._source_info import get_property

_OPS = _install(_sys.modules[__name__])

__version__ = "0.1.0"
__all__ = [
    "ExternalSource", "checkpoint", "get_property", "imread",
    "Batch", "DType", "DataType", "Device", "EvalContext", "EvalMode", "ImageType", "InterpType",
    "Profile", "Stream", "Tensor", "ThreadPool", "as_batch", "as_tensor", "batch", "bfloat16",
    "bool", "device", "dtype", "float16", "float32", "float64", "get_current_stream",
    "get_default_stream", "get_num_threads", "int16", "int32", "int64", "int8", "per_frame",
    "profile",
    "decoders", "random", "readers", "set_current_stream", "set_default_stream",
    "set_num_threads", "stream", "tensor",
    "type_id", "types", "uint16", "uint32", "uint64", "uint8",
    *(name for name in _OPS if "." not in name),
]  # fmt: skip
