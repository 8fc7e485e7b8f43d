"""Compile mode's fusion of a CPU decoder with the op that reads it (`runtime/fusion.py` plans
the other groups): *decode_slice*, `decoders.image` read only by `slice` (the detection
recipe's window from `random_bbox_crop`), decodes each window as `decoders.image_slice` does,
with the bytes of the full decode there (`decoders/_roi_decode.py`); no decoded batch is made
and no slice pass runs. On the GPU, or when a window leaves its image (slice fills), cuts
channels or converts the type, the two calls run on their own.

Measured and not kept: the same for `decoders.image` -> `random_resized_crop` (the RN50
recipe: each sample's source pixels decoded into a scratch image, then resized from it) was
bit-exact but 0.88-0.92x the separate calls' images/s here (perf/README.md, "Compile mode").
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ndd_triton.runtime.dispatch import make_run, make_stage
from ndd_triton.runtime.fusion_geometry import window_start
from ndd_triton.runtime.fusion_group import Group, sole_producer
from ndd_triton.runtime.invocation import Invocation
from ndd_triton.runtime.trace import CallRecord

DECODE_KINDS = frozenset(("decode_slice",))


def decode_groups(program: list[CallRecord], uses: dict[tuple[int, int], int],
                  groups: dict[int, Group]) -> None:  # fmt: skip
    """Add the decode_slice groups to `groups` (a slice in another group already stays there:
    a GPU pass reads its window)."""
    for p, rec in enumerate(program):
        d = sole_producer(program, uses, rec, ("decoders.image",)) \
            if rec.name == "slice" and p not in groups else None  # fmt: skip
        if d is not None:
            groups[d] = groups[p] = Group("decode_slice", (d, p))


def decode_invocation(name: str, members: list[Any], ctx: Any) -> Invocation | None:
    """The group's one invocation (producing slice's output), or None."""
    decode, sliced = members
    dev = decode.dev
    if dev.device_type != "cpu" or decode.call.window is not None:
        return None
    call = _windowed_decode(decode.call, decode.specs[0], sliced.call, sliced.specs[0])
    if call is None:
        return None
    kernel = decode.kernel
    return Invocation(name, make_run(call, kernel, decode.batches, sliced.specs, dev, ctx), ctx,
                      None, make_stage(call, kernel, decode.batches, sliced.specs, dev, ctx))


def _windowed_decode(decode: Any, decoded: Any, sliced: Any, spec: Any) -> Any:
    """decoders.image's call decoding only slice's window of each image, or None when a
    window leaves the image (slice fills), cuts the channels or converts the type."""
    if decoded.layout != "HWC" or spec.dtype != decoded.dtype:
        return None
    start = window_start(sliced, spec)
    if start is None:
        return None
    values = dict(decode.values)
    values["window"] = np.concatenate([start, spec.shapes[:, :2]], axis=1)
    return dataclasses.replace(decode, values=values,
                               per_sample=set(decode.per_sample) | {"window"})  # fmt: skip
