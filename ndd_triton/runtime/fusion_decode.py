"""Compile mode's fusion of a CPU decoder with the op that reads it (`runtime/fusion.py` plans
the other groups): *decode_slice*, `decoders.image` read only by `slice` (the detection
recipe's window from `random_bbox_crop`), decodes each window as `decoders.image_slice` does,
with the bytes of the full decode there (`decoders/_roi_decode.py`); no decoded batch is made
and no slice pass runs. On the GPU, or when a window leaves its image (slice fills), cuts
channels or converts the type, the two calls run on their own.

*decode_rows*: `decoders.image` read only by a `random_resized_crop` or `resize` (the RN50
recipe's decoder, also as the head of its resample_cmn group), both on the CPU: the two run as
their own calls, but the decoder decodes each baseline JPEG only down to the last row the resize
reads (its window's and its filter's taps; `decoders/_jpeg_rows.py`, the same pixels as the
full decode there) and leaves the rows below unwritten, which nothing reads.

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
from ndd_triton.runtime.fusion_group import RESAMPLE_OPS, Group, sole_producer
from ndd_triton.runtime.invocation import Invocation
from ndd_triton.runtime.trace import CallRecord

DECODE_KINDS = frozenset(("decode_slice", "decode_rows"))
# Source rows a resize's taps may read beyond its window, in filter radii (lanczos3's 3, plus
# a margin for the tap tables' neighbours) of max(1, rows per output row), plus 2 rows.
_TAP_RADII = 4


def decode_groups(program: list[CallRecord], uses: dict[tuple[int, int], int],
                  groups: dict[int, Group]) -> None:  # fmt: skip
    """Add the decode_slice groups to `groups` (a slice in another group already stays there:
    a GPU pass reads its window)."""
    for p, rec in enumerate(program):
        d = sole_producer(program, uses, rec, ("decoders.image",)) \
            if rec.name == "slice" and p not in groups else None  # fmt: skip
        if d is not None:
            groups[d] = groups[p] = Group("decode_slice", (d, p))


def decode_rows_head(program: list[CallRecord], uses: dict[tuple[int, int], int],
                     r: int) -> tuple[int, ...]:  # fmt: skip
    """(the CPU `decoders.image` that only the CPU resample `r` reads,) or ()."""
    d = sole_producer(program, uses, program[r], ("decoders.image",)) \
        if program[r].name in RESAMPLE_OPS and not program[r].gpu else None  # fmt: skip
    return (d,) if d is not None and not program[d].gpu else ()


def rows_groups(program: list[CallRecord], uses: dict[tuple[int, int], int],
                groups: dict[int, Group]) -> None:  # fmt: skip
    """Add a decode_rows group for each CPU resample in no group with a CPU decoder head."""
    for r in range(len(program)):
        heads = decode_rows_head(program, uses, r) if r not in groups else ()
        if heads and heads[0] not in groups:
            groups[heads[0]] = groups[r] = Group("decode_rows", (heads[0], r))


def limit_rows(decode: Any, resample: Any, decode_inv: Invocation, resample_inv: Invocation,
               ctx: Any) -> Invocation | None:  # fmt: skip
    """A second invocation of the (CPU) decoder that decodes each image only down to the last
    row `resample` reads (a `rows` value per sample), with `resample`'s own invocation (not run
    yet) made to read it: the crop's bytes are the same. The decoder's own invocation is left
    as it is, for the caller's reads of its result (whole images, decoded on that read).
    None when it does not apply (or either call already ran: the caller read its result)."""
    if decode.dev.device_type != "cpu" or decode.call.window is not None or \
            not decode_inv.deferred or not resample_inv.deferred:  # fmt: skip
        return None
    rows = _rows_read(resample.call, decode.specs[0])
    if rows is None:
        return None
    call = _with_sample_value(decode.call, "rows", rows)
    args = (call, decode.kernel, decode.batches, decode.specs, decode.dev, ctx)
    rows_inv = Invocation(decode.call.schema.name, make_run(*args), ctx, None, make_stage(*args))
    batches = [decode.results(rows_inv), *resample.batches[1:]]
    args = (resample.call, resample.kernel, batches, resample.specs, resample.dev, ctx)
    resample_inv.run_fn, resample_inv.stage_fn = make_run(*args), make_stage(*args)
    return rows_inv


def _rows_read(resample: Any, decoded: Any) -> np.ndarray | None:
    """Per sample, the rows of the decoded HWC image the resize reads at most (an exclusive
    bound, clipped to the image), or None when it resizes other axes."""
    values = resample.values
    if decoded.layout != "HWC" or resample.resample_axes != "HW":
        return None
    origin = np.asarray(values["resample_origin"], np.float64)[:, 0]
    step = np.asarray(values["resample_step"], np.float64)[:, 0]
    n_out = np.asarray(values["resample_out"], np.float64)[:, 0]
    last = np.maximum(origin, origin + step * n_out)  # the window's end, either direction
    reach = last + _TAP_RADII * np.maximum(1.0, np.abs(step)) + 2
    height = decoded.shapes[:, 0].astype(np.int64)
    return np.minimum(height, np.ceil(reach).astype(np.int64))


def decode_invocation(name: str, kind: str, members: list[Any], ctx: Any
                      ) -> Invocation | None:  # fmt: skip
    """A decode_slice group's one invocation (producing slice's output), or None (decode_rows:
    always, its members run as their own calls, see `limit_rows`)."""
    if kind != "decode_slice":
        return None
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
    return _with_sample_value(decode, "window", np.concatenate([start, spec.shapes[:, :2]],
                                                               axis=1))  # fmt: skip


def _with_sample_value(call: Any, name: str, value: np.ndarray) -> Any:
    """A copy of prepared `call` whose per-sample value `name` (derived by infer) is `value`;
    `call` itself stays as it is (its own invocation may still run)."""
    call = dataclasses.replace(call, values=dict(call.values), per_sample=set(call.per_sample))
    call.derive(name, value, per_sample=True)
    return call
