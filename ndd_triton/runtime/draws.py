"""Per-call random draws of the ops whose output specs do not depend on them (`OpSchema.draws`).

Such an op's `infer` is deterministic, so a plan remembers its result per input shapes and a
repeated GPU call can be replayed whole (`runtime/call_replay.py`); what is random is only
*where* in its RNG's stream each call reads. Every call reserves its draws in prepare, after
infer, in program order (`take_draws`): the stream is consumed exactly as when infer drew the
numbers itself, so results stay the same for the same seed whatever path ran the call. The
kernels read the numbers from `call.draw_at`: on the host through `schema.draw_values`
(NumPy, `random/_philox.draws_u32`), on the device through the Philox helpers
(`kernels/gpu/_philox.py`) where infer derived `draws_on_device`.
"""

from __future__ import annotations

from typing import Any

from ndd_triton.ops.schema import DRAWS_ON_DEVICE as ON_DEVICE
from ndd_triton.ops.schema import Call
from ndd_triton.random._rng import RNG, get_default_rng


def call_rng(values: dict[str, Any], arg: str | None) -> RNG:
    """The RNG a call draws from: its `rng` argument, else the thread's default RNG."""
    rng = values.get(arg) if arg is not None else None
    return rng if rng is not None else get_default_rng()


def take_draws(call: Call, count: int) -> None:
    """Reserve the call's `count` draws; derive its host-side values unless its kernel
    computes them on the device."""
    schema = call.schema
    call.draw_at = call_rng(call.values, schema.rng_arg).take_position(count)
    if schema.draw_values is not None and not call.values.get(ON_DEVICE):
        schema.draw_values(call)
        # its values are now this call's own: the launch memo must not take them for those
        # of every call of its infer result
        call.signature = None

