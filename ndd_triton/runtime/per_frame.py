"""Per-frame argument values for sequence inputs (DALI `per_frame`).

`ndd.per_frame(x)` marks an argument value as per-frame by giving it a layout that starts with
"F" (data untouched). An argument whose schema says `per_frame=True` and that gets such a value
while input 0 is a sequence (layout `F...`) uses value `f` of sample `i` for frame `f` of
sample `i`; one value is broadcast to every frame. A non-sequence input ignores the mark, as in
DALI (the value must then be an ordinary per-sample value).

How a per-frame call runs, with no kernel knowing about it: the generated op function routes
the call here (`_opgen`), which
1. unfolds input 0 into one sample per frame (a zero-copy view of the same packed buffer),
2. expands every Tensor/Batch argument to one value per frame (per-frame values split, per-sample
   values repeated) and repeats per-sample data inputs,
3. calls the op once on the frame batch (so a GPU op is still one launch for the whole batch),
4. folds the frame outputs back into F-leading sequences (a view again).
Unfold and fold are lazy producers (`_per_frame_storage`), so prepare never waits for data.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ndd_triton.core.batch import Batch
from ndd_triton.core.construct import as_batch, as_tensor
from ndd_triton.core.layout import default_layout
from ndd_triton.core.tensor import Tensor
from ndd_triton.ops import _affine
from ndd_triton.ops.calls import is_per_frame as is_marked
from ndd_triton.ops.schema import OpSchema
from ndd_triton.runtime import per_frame_storage as producers
from ndd_triton.runtime.prepare import call_op


def per_frame(input: Any, /, *, batch_size: Any = None, device: Any = None,
              replace: Any = None) -> Tensor | Batch:  # fmt: skip
    """Marks `input` as a sequence (layout starting with "F"); the data is untouched.

    Use it for per-frame argument values of sequence operators: `ndd.rotate(video,
    angle=ndd.per_frame(angles))` rotates frame `f` of each sample by `angles[f]`. A layout-less
    input gets "F" padded with "*"; an input whose layout does not start with "F" is rejected
    unless `replace=True` replaces its first character.

    Args:
        input: A Tensor, Batch, or anything `ndd.as_tensor` accepts, of at least 1 dimension.
        batch_size: Number of samples to repeat a Tensor input to (a Batch is returned).
        device: 'cpu' or 'gpu'; default: the input's device.
        replace: Replace the first layout character with "F" instead of requiring it.
    """
    x = input if isinstance(input, Tensor | Batch) else as_tensor(input)
    if device is not None:
        x = x.to_device(device)
    ndim = x.ndim
    if ndim == 0:
        raise ValueError("per_frame: Cannot mark zero-dimensional input as a sequence; give at "
                         "least one value per sample, e.g. shape (1,)")
    layout = x.layout
    if not layout:
        layout = "F" + "*" * (ndim - 1)
    elif layout[0] != "F":
        if not replace:
            raise ValueError(f"per_frame: Per-frame argument input must be a sequence. The input "
                             f"layout should start with 'F', got: {layout}; pass replace=True "
                             "to replace the first character")
        layout = "F" + layout[1:]
    if isinstance(x, Tensor) and batch_size is None:
        shapes = np.array([x.shape], dtype=np.int64)
        one = Batch._pending(producers.Relayout(x, 1), x.dtype, layout, x.device, 1, shapes)
        return Tensor._pending(one, 0)
    n = x.batch_size if isinstance(x, Batch) else _positive(batch_size)
    shapes = np.array(x.shape if isinstance(x, Batch) else [x.shape] * n, dtype=np.int64)
    return Batch._pending(producers.Relayout(x, n), x.dtype, layout, x.device, n,
                          shapes.reshape(n, ndim))  # fmt: skip


def _positive(batch_size: Any) -> int:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int | np.integer) or \
            batch_size < 1:  # fmt: skip
        raise ValueError(f"per_frame: batch_size must be a positive int; got {batch_size!r}")
    return int(batch_size)


# ---- routing an op call with per-frame argument values ---------------------------------------
def _sequence_layout(schema: OpSchema, x: Tensor | Batch) -> str | None:
    """Layout op input 0 gets (the schema default for a layout-less input)."""
    if x.layout:
        return x.layout
    layouts = schema.inputs[0].layouts
    return default_layout(x.ndim, layouts) if layouts else None


def _batch_size(inputs: Sequence[Any], arg_values: Sequence[Any], batch_size: Any
                ) -> tuple[int, bool] | None:  # fmt: skip
    """(N, result is a Batch), or None when the batch sizes disagree (the op reports that)."""
    sizes = {v.batch_size for v in (*inputs, *arg_values) if isinstance(v, Batch)}
    if len(sizes) > 1:
        return None
    if sizes:
        return sizes.pop(), True
    if batch_size is None:
        return 1, False
    if isinstance(batch_size, bool) or not isinstance(batch_size, int | np.integer) or \
            batch_size < 1:  # fmt: skip
        return None
    return int(batch_size), True


def _host_samples(value: Tensor | Batch, n: int) -> list[np.ndarray]:
    """Per-sample host values of an argument (arguments live on the host, as in DALI)."""
    if isinstance(value, Tensor):
        return [np.asarray(value.cpu())] * n
    return [np.asarray(t) for t in value.cpu()]


def _frame_values(op: str, what: str, value: Tensor | Batch, frames: np.ndarray
                  ) -> list[np.ndarray]:  # fmt: skip
    """One host value per frame from a per-frame value (`[F, ...]` per sample, or `[1, ...]`)."""
    out: list[np.ndarray] = []
    for i, (sample, count) in enumerate(zip(_host_samples(value, len(frames)), frames.tolist(),
                                            strict=True)):  # fmt: skip
        given = sample.shape[0] if sample.ndim else 1
        if given not in (1, count):
            raise ValueError(f"{op}: {what} sample {i} has {given} per-frame values but input 0 "
                             f"sample {i} has {count} frames; give one value per frame (or a "
                             "single value for all frames)")
        sample = sample.reshape(1) if sample.ndim == 0 else sample
        out += [sample[0]] * count if given == 1 else list(sample)
    return out


def _repeated_values(value: Tensor | Batch, frames: np.ndarray) -> list[np.ndarray]:
    """Per-sample host values repeated once per frame."""
    samples = _host_samples(value, len(frames))
    return [s for s, count in zip(samples, frames.tolist(), strict=True) for _ in range(count)]


def _as_arg_batch(values: list[np.ndarray], vector: bool) -> Batch:
    """A host Batch holding one argument value per frame."""
    if vector:
        values = [v.reshape(1) if v.ndim == 0 else v for v in values]
    return as_batch([np.ascontiguousarray(v) for v in values])


# Ops whose frames must agree on something the per-frame values would make differ, keyed by op
# name: a hook gets (frames, input-0 shapes, per-frame host argument values, given args) and
# returns extra per-frame argument values.
SequenceHook = Callable[[np.ndarray, np.ndarray, dict[str, Any], dict[str, Any]],
                        dict[str, list[np.ndarray]]]  # fmt: skip
SEQUENCE_HOOKS: dict[str, SequenceHook] = {}


def _sequence(schema: OpSchema, inputs: Sequence[Any], arg_values: Sequence[Any],
              batch_size: Any) -> tuple[Tensor | Batch, np.ndarray, bool] | None:  # fmt: skip
    """(input 0, its `[N, ndim]` shapes, result is a Batch) when input 0 is a sequence, else None
    (not a sequence, or a call the op itself rejects: it reports the error)."""
    first = inputs[0] if inputs else None
    if first is not None and not isinstance(first, Tensor | Batch):
        try:
            first = as_tensor(first)
        except (TypeError, ValueError, RuntimeError):
            return None
    sized = _batch_size([first, *inputs[1:]], arg_values, batch_size)
    if first is None or first.ndim == 0 or sized is None:
        return None
    layout = _sequence_layout(schema, first)
    if not layout or layout[0] != "F":
        return None  # not a sequence: DALI ignores the per-frame mark
    n, is_batch = sized
    shapes = np.array(first.shape if isinstance(first, Batch) else [first.shape] * n,
                      dtype=np.int64).reshape(n, first.ndim)  # fmt: skip
    empty = np.flatnonzero(shapes[:, 0] == 0)
    if empty.size:
        raise ValueError(f"{schema.name}: input 0 sample {int(empty[0])} has no frames; "
                         "per-frame arguments need sequences of at least one frame")
    return first, shapes, is_batch


def _frame_inputs(schema: OpSchema, first: Tensor | Batch, inputs: Sequence[Any],
                  shapes: np.ndarray) -> list[Any]:  # fmt: skip
    """Inputs of the frame call: input 0 unfolded, per-sample inputs repeated per frame."""
    frames = shapes[:, 0]
    total = int(frames.sum())
    layout = _sequence_layout(schema, first)
    assert layout is not None
    unfolded = Batch._pending(producers.Unfold(first, len(frames)), first.dtype, layout[1:],
                              first.device, total, np.repeat(shapes[:, 1:], frames, axis=0))
    result: list[Any] = [unfolded]
    for k, x in enumerate(inputs[1:], start=1):
        spec = schema.inputs[min(k, len(schema.inputs) - 1)]
        if spec.host_values and is_marked(x):
            result.append(as_batch(_frame_values(schema.name, f"input {k}", x, frames)))
        elif isinstance(x, Batch):
            rows = np.array(x.shape, dtype=np.int64).reshape(len(frames), x.ndim)
            result.append(Batch._pending(producers.Repeat(x, frames), x.dtype, x.layout,
                                         x.device, total, np.repeat(rows, frames, axis=0)))
        else:
            result.append(x)  # None or a Tensor: the same for every frame
    return result


def _frame_args(schema: OpSchema, arg_values: Sequence[Any], shapes: np.ndarray) -> list[Any]:
    """Arguments of the frame call: per-frame values split, per-sample Batches repeated."""
    frames = shapes[:, 0]
    host: dict[str, Any] = {}
    result: list[Any] = []
    for arg, value in zip(schema.args, arg_values, strict=True):
        marked = arg.per_frame and is_marked(value)
        if marked:
            host[arg.name] = _frame_values(schema.name, f"argument '{arg.name}'", value, frames)
        elif isinstance(value, Batch):
            host[arg.name] = _repeated_values(value, frames)
        result.append(None if marked or isinstance(value, Batch) else value)
    hook = SEQUENCE_HOOKS.get(schema.name)
    if hook is not None:
        given = {a.name: v for a, v in zip(schema.args, arg_values, strict=True) if v is not None}
        host.update(hook(frames, shapes, host, given))
    index = {a.name: k for k, a in enumerate(schema.args)}
    for name, values in host.items():
        result[index[name]] = _as_arg_batch(values, schema.arg_map[name].vector)
    return result


def call_per_frame(schema: OpSchema, inputs: Sequence[Any], arg_values: Sequence[Any],
                   batch_size: Any, device: Any) -> Any:  # fmt: skip
    """Run `schema` with per-frame argument values (see the module docstring)."""
    sequence = _sequence(schema, inputs, arg_values, batch_size)
    if sequence is None:
        return call_op(schema, inputs, arg_values, batch_size, device)
    first, shapes, is_batch = sequence
    results = call_op(schema, _frame_inputs(schema, first, inputs, shapes),
                      _frame_args(schema, arg_values, shapes), None, device)  # fmt: skip
    frames = shapes[:, 0].copy()
    if not isinstance(results, tuple):
        return _fold(schema.name, results, frames, is_batch)
    return tuple(_fold(schema.name, out, frames, is_batch) for out in results)


def _fold(op: str, out: Batch, frames: np.ndarray, is_batch: bool) -> Tensor | Batch:
    """The frame outputs of one op output folded into sequences (a Tensor for Tensor calls)."""
    inner: np.ndarray | None = getattr(out, "_shapes", None)  # inferred shapes, no waiting
    shapes = None
    if inner is not None:
        starts = np.concatenate([[0], np.cumsum(frames)[:-1]])
        for i, (start, count) in enumerate(zip(starts.tolist(), frames.tolist(), strict=True)):
            run = inner[start:start + count]
            if (run != run[0]).any():
                raise ValueError(f"{op}: the per-frame arguments give the frames of sample {i} "
                                 f"different output shapes {[tuple(r) for r in run.tolist()]}; "
                                 "a sequence needs one frame shape (set the output size)")
        shapes = np.concatenate([frames[:, None], inner[starts]], axis=1)
    layout = "F" + out.layout if out.layout else None
    folded = Batch._pending(producers.Fold(out, frames, op), out.dtype, layout, out.device,
                            len(frames), shapes)  # fmt: skip
    return folded if is_batch else Tensor._pending(folded, 0)


# ---- rotate: one canvas per sequence -----------------------------------------------------------
def sequence_canvas(angles: Sequence[float], h: int, w: int) -> tuple[int, int]:
    """DALI's rotate canvas of a sequence whose frames turn by different angles.

    The bounding box of all frames' rotated images, each extent raised by 1 where needed to get
    the parity most frames ask for (ties: even). A frame asks for the parity of the input extent
    its rotated extent is closest to (|sin| >= |cos|: the other one), as a single image does.
    Fitted to DALI 2.4: the angle goes to radians in float32 (so 45 degrees swaps and 135 does
    not), and extents up to 0.01 above an integer round down (5x12 at 80 degrees: width
    7.0078 -> 7). Matches 300 random sequences and 400 random single images exactly.
    """
    ext_h = ext_w = 0.0
    odd_h = odd_w = 0
    for angle in angles:
        rad = float(np.float32(angle) * _DEG_TO_RAD)
        cos, sin = abs(math.cos(rad)), abs(math.sin(rad))
        ext_w = max(ext_w, w * cos + h * sin)
        ext_h = max(ext_h, w * sin + h * cos)
        like_h, like_w = (w, h) if sin >= cos else (h, w)
        odd_h += like_h % 2
        odd_w += like_w % 2
    out_h = math.ceil(ext_h - 0.01)
    out_w = math.ceil(ext_w - 0.01)
    out_h += (out_h - int(2 * odd_h > len(angles))) % 2
    out_w += (out_w - int(2 * odd_w > len(angles))) % 2
    return out_h, out_w


_DEG_TO_RAD = np.float32(math.pi / 180)


def volume_sequence_canvas(rotations: Sequence[np.ndarray], dhw: np.ndarray) -> np.ndarray:
    """(D, H, W) rotate canvas of a volume sequence: the 2-D sequence rule in 3-D.

    Bounding box of every frame's rotated volume; each extent gets the parity most frames ask
    for (ties: even), a frame asking for the parity of the input extent contributing most
    (`ops/_affine.rotated_canvas_3d`). Checked against 24 DALI 2.4 cases (all equal).
    """
    ext_xyz = np.asarray(dhw, np.float64)[::-1]
    box = np.zeros(3)
    odd = np.zeros(3, dtype=np.int64)
    for rot in rotations:
        box = np.maximum(box, np.abs(rot) @ ext_xyz)
        like = ext_xyz[np.argmax(np.abs(rot) + 1e-9 * np.eye(3), axis=1)].astype(np.int64)
        odd += like % 2
    out = np.ceil(box - 1e-4).astype(np.int64)
    out += (out - (2 * odd > len(rotations))) % 2
    return out[::-1]


def _frame_axes(host: dict[str, Any], given: dict[str, Any], total: int) -> list[Any] | None:
    """The rotation axis of every frame (None when absent: rotate reports it)."""
    if "axis" in host:
        return list(host["axis"])
    axis = given.get("axis")
    if axis is None:
        return None
    return [np.asarray(axis.cpu() if isinstance(axis, Tensor) else axis, np.float64)] * total


def _rotate_hook(frames: np.ndarray, shapes: np.ndarray, host: dict[str, Any],
                 given: dict[str, Any]) -> dict[str, list[np.ndarray]]:  # fmt: skip
    """Per-frame `size` = the sequence canvas, unless the output size is given."""
    angles = host.get("angle")
    if angles is None or given.get("size") is not None or given.get("keep_size"):
        return {}
    flat = np.array([float(np.asarray(a).reshape(-1)[0]) if np.size(a) else np.nan
                     for a in angles])  # fmt: skip
    volumes = shapes.shape[1] == 5
    axes = _frame_axes(host, given, len(flat)) if volumes else None
    if not np.isfinite(flat).all() or shapes.shape[1] not in (4, 5) or (volumes and (
            axes is None or any(np.size(a) != 3 or not np.any(a) for a in axes))):  # fmt: skip
        return {}  # rotate reports the problem
    sizes: list[np.ndarray] = []
    start = 0
    for i, count in enumerate(frames.tolist()):
        run = flat[start:start + count].tolist()
        if volumes:
            assert axes is not None
            rots = [_affine.rotation_3d(a, np.asarray(ax, np.float64).reshape(3))
                    for a, ax in zip(run, axes[start:start + count], strict=True)]  # fmt: skip
            canvas = volume_sequence_canvas(rots, shapes[i, 1:4])
        else:
            canvas = np.array(sequence_canvas(run, int(shapes[i, 1]), int(shapes[i, 2])))
        sizes += [canvas.astype(np.float64)] * count
        start += count
    return {"size": sizes}


SEQUENCE_HOOKS["rotate"] = _rotate_hook
