"""The one door from operator definitions to execution, connected by the runtime at import.

Operator modules (schemas, hand-written front functions such as `math.pow`, the generated
public functions) never import the runtime: they call `call_op`/`call_per_frame` through this
module, which `ndd_triton/__init__` connects to `runtime.prepare.call_op` and
`runtime.per_frame.call_per_frame` before it installs the public functions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ndd_triton.core.batch import Batch
from ndd_triton.core.tensor import Tensor


def _not_connected(*args: Any) -> Any:
    raise RuntimeError("ndd_triton's runtime is not connected to the operators (import ndd_triton)")


call_op: Callable[..., Any] = _not_connected
"""`call_op(schema, inputs, arg_values, batch_size, device)`: prepare and schedule one call."""
call_per_frame: Callable[..., Any] = _not_connected
"""`call_per_frame(schema, inputs, arg_values, batch_size, device)`: a call with per-frame args."""


def connect(*, op: Callable[..., Any], per_frame: Callable[..., Any]) -> None:
    """Install the runtime's entry points (called once, by `ndd_triton/__init__`)."""
    global call_op, call_per_frame
    call_op, call_per_frame = op, per_frame


def is_per_frame(value: Any) -> bool:
    """True for a Tensor/Batch argument value whose layout marks it per-frame ("F...")."""
    layout = value.layout if isinstance(value, Tensor | Batch) else None
    return layout is not None and layout[:1] == "F"
