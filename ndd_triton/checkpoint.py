"""`ndd.checkpoint`: aggregate the states of stateful objects (readers, `RNG`) into one file.

The public module; `Checkpoint` itself lives in `runtime/checkpoint.py`, one per EvalContext.
"""

from __future__ import annotations

from ndd_triton.runtime.checkpoint import VERSION, Checkpoint
from ndd_triton.runtime.eval_context import EvalContext

__all__ = ["VERSION", "Checkpoint", "current"]


def current() -> Checkpoint:
    """The Checkpoint of the current thread's EvalContext."""
    return EvalContext.current().checkpoint
