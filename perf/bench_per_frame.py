"""Per-frame arguments: one call on a batch of sequences vs a Python loop over frames.

`python perf/bench_per_frame.py` prints, for a few ops on a ragged batch of uint8 sequences
(cpu backend, sync_cpu mode, best of N process-CPU times, all in one run):

* per-frame:  `op(batch, arg=ndd.per_frame(values))` (unfold, one op call, fold)
* per-sample: `op(batch, arg=one value per sample)` (the same work without per-frame values)
* frame loop: what one writes without per-frame support: `op` on every frame with its value,
  then `np.stack` per sequence

and the cost of the per-frame check the generated function adds to ordinary calls (the
generated brightness_contrast function with and without it, forwarding to a stub).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ndd_triton as ndd
from ndd_triton.ops import calls as _calls
from ndd_triton.ops.opgen import make_function


def _best(fn, repeat: int = 7, number: int = 3) -> float:
    """Best process-CPU seconds per call."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(number):
            fn()
        best = min(best, (time.process_time() - start) / number)
    return best


def _sequences(frames: list[int], h: int, w: int) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.integers(0, 255, size=(f, h, w, 3), dtype=np.uint8) for f in frames]


def _cases(seqs: list[np.ndarray]):
    rng = np.random.default_rng(1)
    values = {
        "brightness_contrast/brightness": [rng.uniform(0.5, 1.5, len(s)) for s in seqs],
        "gaussian_blur/sigma": [rng.uniform(0.5, 2.0, len(s)) for s in seqs],
        "rotate/angle": [rng.uniform(-30, 30, len(s)) for s in seqs],
    }
    for key, per_seq in values.items():
        op_name, arg = key.split("/")
        op = getattr(ndd, op_name)
        extra = {"keep_size": True} if op_name == "rotate" else {}
        yield key, op, arg, [v.astype(np.float32) for v in per_seq], extra


def _call(op, batch, kwargs) -> None:
    op(batch, **kwargs).evaluate()


def _frame_loop(op, seqs, arg, per_seq, extra) -> None:
    """What one writes without per-frame support: op on every frame alone, then stack."""
    for seq, vals in zip(seqs, per_seq, strict=True):
        np.stack([np.asarray(op(ndd.as_tensor(f, layout="HWC"), **{arg: float(v)}, **extra))
                  for f, v in zip(seq, vals, strict=True)])  # fmt: skip


def main() -> None:
    """Print the table."""
    frames = [16, 8, 12, 16]
    seqs = _sequences(frames, 48, 64)
    batch = ndd.as_batch(seqs, layout="FHWC")
    print(f"cpu, {len(seqs)} uint8 sequences of {frames} frames of 48x64x3; threads "
          f"{ndd.get_num_threads()}; best process-CPU ms per call")
    print(f"{'op/argument':32} {'per-frame':>10} {'per-sample':>11} {'frame loop':>11} "
          f"{'loop/per-frame':>15}")
    with ndd.EvalMode.sync_cpu:
        for key, op, arg, per_seq, extra in _cases(seqs):
            marked = ndd.per_frame(ndd.as_batch(per_seq))
            per_sample = ndd.as_batch([v[:1].reshape(()) for v in per_seq])

            per_frame_call = functools.partial(_call, op, batch, {arg: marked, **extra})
            per_sample_call = functools.partial(_call, op, batch, {arg: per_sample, **extra})
            frame_loop = functools.partial(_frame_loop, op, seqs, arg, per_seq, extra)
            a, b, c = _best(per_frame_call), _best(per_sample_call), _best(frame_loop, 3, 1)
            print(f"{key:32} {a * 1e3:10.2f} {b * 1e3:11.2f} {c * 1e3:11.2f} {c / a:14.1f}x")
    print_check_cost()


def print_check_cost() -> None:
    """Cost of the per-frame check in a generated function: brightness_contrast (4 per-frame
    arguments, all constants) built with and without the check, forwarding to a stub."""
    schema = ndd.brightness_contrast._schema
    plain_schema = dataclasses.replace(
        schema, args=tuple(dataclasses.replace(a, per_frame=False) for a in schema.args))
    real = _calls.call_op
    _calls.call_op = lambda *args: None  # measure the generated function alone
    try:
        checked, unchecked = make_function(schema), make_function(plain_schema)
    finally:
        _calls.call_op = real
    times = {}
    for name, fn in (("with check", checked), ("without", unchecked)) * 2:
        t = _best(lambda fn=fn: fn(None, brightness=1.5, contrast=0.5), 7, 20000)
        times[name] = min(times.get(name, t), t)
    print(f"\ngenerated brightness_contrast function alone (constants): with the per-frame check "
          f"{times['with check'] * 1e9:.0f} ns, without {times['without'] * 1e9:.0f} ns per call")


if __name__ == "__main__":
    main()
