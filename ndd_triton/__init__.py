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
from ndd_triton.core.batch import Batch
from ndd_triton.core.construct import as_batch, as_tensor, batch, tensor
from ndd_triton.core.device import Device, device
from ndd_triton.core.dtype import (
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
from ndd_triton.core.dtype import bool_ as bool
from ndd_triton.core.malloc_tuning import tune_malloc as _tune_malloc
from ndd_triton.core.tensor import Tensor
from ndd_triton.ops import calls as _calls
from ndd_triton.ops.limits import limits, set_limits
from ndd_triton.ops.opgen import install as _install
from ndd_triton.readers._external_source import ExternalSource
from ndd_triton.readers._imread import imread
from ndd_triton.readers._source_info import get_property
from ndd_triton.runtime import torch_compile as _torch_compile  # noqa: F401  (skip in Dynamo)
from ndd_triton.runtime.eval_context import EvalContext, get_current_stream, set_current_stream
from ndd_triton.runtime.eval_mode import EvalMode
from ndd_triton.runtime.per_frame import call_per_frame as _call_per_frame
from ndd_triton.runtime.per_frame import per_frame
from ndd_triton.runtime.prepare import call_op as _call_op
from ndd_triton.runtime.profiling import Profile, profile
from ndd_triton.runtime.stream import (
    Stream,
    get_default_stream,
    set_default_stream,
    stream,
)
from ndd_triton.runtime.thread_pool import ThreadPool, get_num_threads, set_num_threads

_tune_malloc()  # freed batch memory stays mapped: no page faults per batch (glibc)

# The composition root: the runtime executes what the operator layer defines.
_calls.connect(op=_call_op, per_frame=_call_per_frame)
_OPS = _install(_sys.modules[__name__])

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """`ndd.pytorch` (PyTorch integration) is imported on first use, as in DALI 2.4."""
    if name == "pytorch":
        import importlib

        return importlib.import_module(f"{__name__}.pytorch")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ExternalSource", "checkpoint", "get_property", "imread",
    "Batch", "DType", "DataType", "Device", "EvalContext", "EvalMode", "ImageType", "InterpType",
    "Profile", "Stream", "Tensor", "ThreadPool", "as_batch", "as_tensor", "batch", "bfloat16",
    "bool", "device", "dtype", "float16", "float32", "float64", "get_current_stream",
    "get_default_stream", "get_num_threads", "int16", "int32", "int64", "int8", "per_frame",
    "profile", "limits", "set_limits",
    "decoders", "random", "readers", "set_current_stream", "set_default_stream",
    "set_num_threads", "stream", "tensor",
    "type_id", "types", "uint16", "uint32", "uint64", "uint8",
    *(name for name in _OPS if "." not in name),
]  # fmt: skip
