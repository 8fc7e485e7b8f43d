"""A test-only operator whose CPU kernel blocks on an event and records where it ran.

Lets tests observe the executor without sleeps: eager must return while the kernel is blocked.
"""

from __future__ import annotations

import threading

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops.opgen import make_function
from ndd_triton.ops.schema import Arg, Input, OpSchema, same_as_input

GATE = threading.Event()
RAN_ON: list[str] = []
CALLS = {"count": 0}

schema = OpSchema(name="_test_gated", doc="Copy the input once GATE is set; optionally fail.",
                  inputs=(Input("input"),),
                  args=(Arg("fail", "int", default=0, doc="Raise RuntimeError when nonzero."),),
                  infer=same_as_input, module="_test_gated", devices=("cpu",))


@register(schema, "cpu", inline=False)  # it blocks: never run on the caller in eager mode
def gated_cpu(out: np.ndarray, inp: np.ndarray, arg) -> None:
    """Wait for GATE, record the thread, then copy (or fail)."""
    assert GATE.wait(timeout=30), "test gate never opened"
    RAN_ON.append(threading.current_thread().name)
    CALLS["count"] += 1
    if arg.fail:
        raise RuntimeError("gated op failed on purpose")
    out[...] = inp


gated = make_function(schema)
