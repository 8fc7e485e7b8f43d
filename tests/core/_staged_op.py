"""A test-only per-sample operator that eager mode pipelines (`_executor._Chain`).

`x + add` for float32 samples, failing on the samples whose `fail` is nonzero; while `HOLD`
is cleared, the sample whose `hold` is nonzero waits for it (to catch the pipeline mid-run).
Each call records (op tag, sample) in `LOG`, in the order the samples ran.
"""

from __future__ import annotations

import threading

import numpy as np

from ndd_triton.kernels import register
from ndd_triton.ops.opgen import make_function
from ndd_triton.ops.schema import Arg, Input, OpSchema, same_as_input

HOLD = threading.Event()
HOLD.set()
LOG: list[tuple[float, int]] = []

schema = OpSchema(name="_test_staged", doc="x + add; fails where fail != 0.",
                  inputs=(Input("input"),),
                  args=(Arg("add", "float", default=0.0, doc="Added to every element."),
                        Arg("fail", "int", default=0, per_sample=True, doc="Raise when nonzero."),
                        Arg("hold", "int", default=0, per_sample=True,
                            doc="Wait for HOLD when nonzero.")),
                  infer=same_as_input, module="_test_staged", devices=("cpu",))


@register(schema, "cpu")
def staged_cpu(out: np.ndarray, inp: np.ndarray, arg) -> None:  # type: ignore[no-untyped-def]
    """One sample."""
    if arg.hold:
        assert HOLD.wait(timeout=30), "test hold never released"
    LOG.append((float(arg.add), arg.index))
    if arg.fail:
        raise ValueError(f"sample {arg.index} failed on purpose")
    np.add(inp, np.float32(arg.add), out=out)


staged = make_function(schema)
