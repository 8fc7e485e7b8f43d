"""`Loader`: a resumable PyTorch data loader over an ndd reader and a per-batch function.

`Loader(reader, fn, batch_size=...)` is iterable once per epoch and yields what `fn(*batches)`
returns as torch tensors (a tuple, or a dict with `output_names`). It runs `fn` up to
`prefetch` batches ahead of the consumer on the consumer's thread (in eager mode the ops then
run on the executor while the training step runs), converts a batch only when it is handed out,
and remembers, per prefetched batch, the reader position and the RNG states right after it.
`state_dict()` is the snapshot of the last batch handed out, so a job killed at any step and
restarted with `load_state_dict()` reads exactly the remaining samples with exactly the same
augmentations: random ops in `fn` draw from the loader's own RNG (installed as the thread's
default RNG while `fn` runs) or from the generators passed in `rngs`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ndd_triton.core.storage import ensure_pool_for
from ndd_triton.pytorch import _convert, _rngs
from ndd_triton.pytorch._policy import LastBatchPolicy, batches_yielded, samples_kept
from ndd_triton.random import RNG
from ndd_triton.random._rng import swap_default_rng
from ndd_triton.readers._base import Reader
from ndd_triton.readers._control import (
    EpochPlan,
    epoch_plan,
    pad_by_default,
    remember_seeds,
    rewind,
    shard_by_default,
    start_state,
)
from ndd_triton.readers._sharding import shard_from_torch_distributed
from ndd_triton.runtime.eval_mode import EvalMode

_FORMAT = "ndd_triton.pytorch.Loader/1"
_WHERE = "ndd_triton.pytorch.Loader"
_STREAM_ARGS = ("shard_id", "num_shards", "stick_to_shard", "pad_last_batch", "random_shuffle",
                "initial_fill", "shuffle_after_epoch")  # fmt: skip


@dataclass(slots=True)
class _Item:
    outputs: dict[Any, Any] | None  # None: a batch the DROP policy skips
    index: int  # batch index within the reader's epoch
    state: dict[str, Any]  # the loader's state right after this batch


class Loader:
    """Iterate `fn(*reader_batches)` as torch tensors, with resumable state (module docstring).

    Args:
        reader: an `ndd.readers` reader (its position is saved and restored by the loader).
        fn: the per-batch function: takes the reader's outputs (Batches), returns a Batch, a
            tuple/list of them or a dict; None yields the reader's outputs.
        batch_size: samples per batch (default: the reader's `max_batch_size`).
        output_names: names of the outputs: batches are then yielded as dicts.
        pad: zero-pad ragged outputs to the batch's largest sample (else ValueError).
        squeeze: names (or positions) of outputs whose trailing axis of size 1 is dropped,
            e.g. `("label",)`: readers give `(N, 1)` labels, classification losses want `(N,)`.
        device: where the tensors go (None: where `fn` produced them).
        pin_memory: copy CPU outputs headed for a CUDA device through pinned memory
            (default: True then).
        prefetch: batches `fn` runs ahead of the consumer (1: the next batch is processed
            while the training step runs; more holds more host buffers, perf/README.md).
        eval_mode: the `ndd.EvalMode` `fn` runs in.
        last_batch_policy: "fill", "drop" or "partial" (`LastBatchPolicy`); drop and partial
            turn the reader's `pad_last_batch` on (each epoch then reads its whole shard).
        seed: seed of the loader's RNG (default: random; saved in the state either way).
        rngs: more generators `fn` draws from (ndd RNG, torch.Generator, numpy Generator):
            their states are saved and restored with the loader's.
        shard: "auto" shards a reader built without `shard_id`/`num_shards` over the
            torch.distributed process group (rank, world size, `pad_last_batch`); False never.
    """

    def __init__(self, reader: Reader, fn: Callable[..., Any] | None = None, *,
                 batch_size: int | None = None, output_names: Sequence[str] | None = None,
                 pad: bool = False, squeeze: Sequence[str | int] = (), device: Any = None,
                 pin_memory: bool | None = None, prefetch: int = 1,
                 eval_mode: EvalMode = EvalMode.eager, last_batch_policy: Any = "fill",
                 seed: int | None = None, rngs: Sequence[Any] = (),
                 shard: Any = "auto") -> None:  # fmt: skip
        if not isinstance(reader, Reader):
            raise TypeError(f"{_WHERE}: argument 'reader' expects an ndd.readers reader; got "
                            f"{type(reader).__name__}")
        if fn is not None and not callable(fn):
            raise TypeError(f"{_WHERE}: argument 'fn' expects a callable or None; got "
                            f"{type(fn).__name__}")
        size = batch_size if batch_size is not None else reader.max_batch_size
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"{_WHERE}: argument 'batch_size' expects a positive int (or a "
                             f"reader with max_batch_size); got {size!r}")
        if isinstance(prefetch, bool) or not isinstance(prefetch, int) or prefetch < 0:
            raise ValueError(f"{_WHERE}: argument 'prefetch' expects an int >= 0; got "
                             f"{prefetch!r}")
        if not isinstance(eval_mode, EvalMode):
            raise TypeError(f"{_WHERE}: argument 'eval_mode' expects an ndd.EvalMode; got "
                            f"{type(eval_mode).__name__}")
        if shard not in ("auto", False):
            raise ValueError(f"{_WHERE}: argument 'shard' must be 'auto' or False; got "
                             f"{shard!r}")
        for rng in rngs:
            _rngs.check(rng, _WHERE)
        self._reader = reader
        self._fn = fn
        self._batch_size = size
        self._names = None if output_names is None else tuple(output_names)
        if self._names is not None and not all(isinstance(n, str) for n in self._names):
            raise TypeError(f"{_WHERE}: argument 'output_names' expects a sequence of str; got "
                            f"{output_names!r}")
        self._pad = bool(pad)
        self._squeeze = frozenset([squeeze] if isinstance(squeeze, str | int) else squeeze)
        self._device = None if device is None else torch.device(device)
        if self._device is not None and self._device.type == "cuda" and \
                not torch.cuda.is_available():  # fmt: skip
            raise ValueError(f"{_WHERE}: device {device!r} was asked for, but CUDA is not "
                             "available")
        self._pin = pin_memory if pin_memory is not None else (
            self._device is not None and self._device.type == "cuda")  # fmt: skip
        self._prefetch = prefetch
        # keep the pooled host buffers of the batches in flight recyclable (perf/README.md,
        # "PyTorch loader")
        ensure_pool_for(prefetch + 1)
        self._eval_mode = eval_mode
        self._policy = LastBatchPolicy.parse(last_batch_policy, _WHERE)
        self._rng = RNG(seed)
        self._rngs = list(rngs)
        if shard == "auto":
            rank, world = shard_from_torch_distributed()
            shard_by_default(reader, rank, world)
        if self._policy is not LastBatchPolicy.FILL:
            pad_by_default(reader, f"{_WHERE}: last_batch_policy={self._policy.value!r}")
        reader._on_checkpoint_register()  # turns checkpointing on (or says why it cannot)
        remember_seeds(reader)
        self._queue: deque[_Item] = deque()
        self._epoch_iter: Iterator[Any] | None = None
        self._plan: EpochPlan | None = None
        self._next_index = 0
        self._epoch = 0
        self._generation = 0  # bumped by load_state_dict: stale epoch iterators stop
        self._consumed = self._state(reader_state=start_state(reader, size))

    # ---- sizes -----------------------------------------------------------------------------
    @property
    def batch_size(self) -> int:
        """Samples per batch."""
        return self._batch_size

    @property
    def reader(self) -> Reader:
        """The reader the loader drives."""
        return self._reader

    def __len__(self) -> int:
        """Batches per epoch (what tqdm and LR schedulers need)."""
        plan = epoch_plan(self._reader, self._reader._position[0], self._batch_size)
        return batches_yielded(self._policy, plan, self._batch_size)

    # ---- iteration -------------------------------------------------------------------------
    def __iter__(self) -> Iterator[Any]:
        """The batches of one epoch; an epoch left early is continued by the next `iter()`."""
        return self._run(self._generation)

    def _run(self, generation: int) -> Iterator[Any]:
        if self._epoch_iter is None:
            self._begin_epoch()
        while generation == self._generation:
            self._fill()
            if not self._queue:
                break
            item = self._queue.popleft()
            if item.outputs is None:  # dropped by the DROP policy
                self._consumed = item.state
                continue
            out = self._convert(item)
            self._consumed = item.state
            item = None  # type: ignore[assignment]  # hold no batch while the consumer works:
            yield out  # pooled host buffers are recycled only once nothing refers to them
            out = None
        if generation == self._generation and self._epoch_iter is not None:
            self._epoch_iter = None
            self._epoch += 1
            self._consumed = {**self._consumed, "epoch": self._epoch}

    def _begin_epoch(self) -> None:
        self._epoch_iter = self._reader.next_epoch(batch_size=self._batch_size)
        epoch, _, offset = self._reader._position
        self._plan = epoch_plan(self._reader, epoch, self._batch_size)
        self._next_index = offset // self._batch_size

    def _fill(self) -> None:
        """Run `fn` until `prefetch` batches wait beyond the one handed out next."""
        while self._epoch_iter is not None and len(self._queue) <= self._prefetch:
            try:
                batches = next(self._epoch_iter)
            except StopIteration:
                return
            index = self._next_index
            self._next_index += 1
            assert self._plan is not None
            outputs = None
            if index < batches_yielded(self._policy, self._plan, self._batch_size):
                outputs = self._call(batches)
            last = self._reader._position[2] == 0
            self._queue.append(_Item(outputs, index, self._state(
                reader_state=str(self._reader.get_state()), epoch=self._epoch + last)))
            if last:
                return

    def _call(self, batches: tuple[Any, ...]) -> dict[Any, Any]:
        previous = swap_default_rng(self._rng)
        try:
            with self._eval_mode:
                result = batches if self._fn is None else self._fn(*batches)
        finally:
            swap_default_rng(previous)
        return _convert.as_outputs(result, self._names, _WHERE)

    def _convert(self, item: _Item) -> Any:
        assert item.outputs is not None
        assert self._plan is not None
        keep = samples_kept(self._policy, self._plan, item.index, self._batch_size)
        out = {}
        outputs, item.outputs = item.outputs, None
        for position, (key, value) in enumerate(outputs.items()):
            t = _convert.to_torch(value, self._pad, _WHERE, key)
            squeeze = key in self._squeeze or position in self._squeeze
            out[key] = _convert.finish(t, squeeze, keep, self._device, self._pin)
        if self._names is not None or not all(isinstance(k, int) for k in out):
            return out
        values = tuple(out.values())
        return values

    # ---- state -----------------------------------------------------------------------------
    def _state(self, reader_state: str, epoch: int | None = None) -> dict[str, Any]:
        return {"format": _FORMAT, "epoch": self._epoch if epoch is None else epoch,
                "reader": reader_state, "stream": self._stream_args(),
                "rng": _rngs.get(self._rng),
                "rngs": [_rngs.get(r) for r in self._rngs]}  # fmt: skip

    def _stream_args(self) -> dict[str, Any]:
        """The reader arguments that decide the sample order (checked on load)."""
        return {k: self._reader._args.get(k) for k in _STREAM_ARGS}

    def state_dict(self) -> dict[str, Any]:
        """Position after the last batch handed out: reader position, RNG states, epoch."""
        return dict(self._consumed)

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from `state_dict()` (of this loader, or of one built the same way)."""
        if not isinstance(state, dict) or state.get("format") != _FORMAT:
            raise ValueError(f"{_WHERE}.load_state_dict: expected a dict from "
                             f"Loader.state_dict() (format {_FORMAT!r}); got {state!r:.100}")
        if len(state["rngs"]) != len(self._rngs):
            raise ValueError(f"{_WHERE}.load_state_dict: the state holds {len(state['rngs'])} "
                             f"states for 'rngs'; this loader has {len(self._rngs)} generators")
        saved = state.get("stream", {})
        differ = {k: (v, saved[k]) for k, v in self._stream_args().items()
                  if k in saved and saved[k] != v}  # fmt: skip
        if differ:
            shown = ", ".join(f"{k}={new!r} (saved: {old!r})" for k, (new, old) in differ.items())
            raise ValueError(f"{_WHERE}.load_state_dict: the state was saved by a loader whose "
                             f"reader reads another sample order; this reader has {shown}")
        self._generation += 1
        self._queue.clear()
        self._epoch_iter = None
        rewind(self._reader, state["reader"])
        _rngs.put(self._rng, state["rng"])
        for rng, saved in zip(self._rngs, state["rngs"], strict=True):
            _rngs.put(rng, saved)
        self._epoch = int(state["epoch"])
        self._consumed = dict(state)
