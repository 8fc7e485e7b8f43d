"""`Reader`: the stateful base of every `ndd.readers` class (core.md §14).

A reader owns a *source* (the dataset-specific part: indexing files and loading samples) and a
position in its sample stream. The first iteration indexes the dataset and starts a prefetch
thread; `next_epoch(batch_size=N)` yields tuples of `Batch`, `next_epoch()` tuples of `Tensor`,
and `reader()` takes single steps. The position is checkpointable (`get_state`/`set_state`).

Differences from DALI 2.4:
* (documented intent over the observed quirk) a reader restored from a mid-epoch state yields
  the *rest* of that epoch from its next `next_epoch`, so an interrupted and resumed run reads
  exactly the batches the uninterrupted run would have;
* `next_epoch` while the previous epoch's iterator is not exhausted raises RuntimeError;
* `read_ahead`, `dont_use_mmap` (except Numpy), `lazy_init`, `skip_cached_images` and
  `tensor_init_bytes` are accepted and validated but have no effect (indexing is always lazy).
"""

from __future__ import annotations

import inspect
import os
import weakref
from collections import deque
from typing import Any, Protocol

import numpy as np

from ndd_triton.core.batch import Batch
from ndd_triton.core.device import Device
from ndd_triton.core.device import device as to_device
from ndd_triton.core.dtype import DType
from ndd_triton.core.storage import BatchStorage
from ndd_triton.core.tensor import Tensor
from ndd_triton.readers import _args
from ndd_triton.readers._compile_mode import CompileModeEpochs
from ndd_triton.readers._prefetch import Item, Prefetcher, stop_prefetcher
from ndd_triton.readers._sharding import StreamConfig, padded_epoch_size, shard_size
from ndd_triton.readers._state import ReaderState
from ndd_triton.runtime.compiled import DEFAULT_DEPTH

# A fixed default so that every rank of a sharded job draws the same global permutation.
_SHUFFLE_AFTER_EPOCH_SEED = 0x5EED_5EED


class Source(Protocol):
    """Dataset-specific part of a reader: index once, then load samples by index.

    Output dtypes come from the loaded storages; `layouts` gives one layout (or None) per output.
    """

    layouts: tuple[str | None, ...]

    def index(self) -> int:
        """Scan the dataset (RuntimeError when it cannot be read); returns its size."""

    def load(self, indices: np.ndarray) -> tuple[list[BatchStorage], list[str]]:
        """One storage per output holding the samples `indices`, and their source paths."""


class Reader(CompileModeEpochs):
    """Base of the `ndd.readers` classes; see the module docstring."""

    _SPECIFIC: dict[str, Any] = {}  # reader-specific keywords and defaults
    _DEVICES: tuple[str, ...] = ("cpu",)
    _SHUFFLE_AFTER_EPOCH = True  # accepts shuffle_after_epoch(_seed)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Give each reader class its full keyword signature (for help() and IDEs)."""
        super().__init_subclass__(**kwargs)
        positional = inspect.Parameter.POSITIONAL_OR_KEYWORD
        params = [inspect.Parameter(n, positional, default=d) for n, d in
                  (("max_batch_size", None), ("name", None), ("device", "cpu"),
                   ("num_inputs", None))]  # fmt: skip
        keywords = {**cls._SPECIFIC, **_args.COMMON,
                    **(_args.SHUFFLE_AFTER_EPOCH if cls._SHUFFLE_AFTER_EPOCH else {})}  # fmt: skip
        params += [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=v)
                   for k, v in keywords.items()]  # fmt: skip
        cls.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]

    def __init__(self, max_batch_size: int | None = None, name: str | None = None,
                 device: Any = "cpu", num_inputs: int | None = None,
                 **kwargs: Any) -> None:  # fmt: skip
        cls = type(self).__name__
        args = _args.parse_common(cls, kwargs, self._SPECIFIC, self._SHUFFLE_AFTER_EPOCH)
        if max_batch_size is not None:
            _args.check_int(cls, "max_batch_size", max_batch_size, minimum=1)
        if name is not None and not isinstance(name, str):
            raise TypeError(f"{cls}: argument 'name' expects a str; got {type(name).__name__}")
        dev = to_device(device)
        assert dev is not None
        if dev.device_type not in self._DEVICES:
            raise ValueError(f'Invalid device "{dev.device_type}" for operator readers__{cls}')
        self._args = args
        self._given = frozenset(kwargs)  # keywords the user passed (vs defaults)
        self._max_batch_size = max_batch_size
        self._name = name
        self._device: Device = dev
        self._seed = _args.resolve_seed(args["seed"])
        given = args.get("shuffle_after_epoch_seed")
        self._shuffle_seed = (_SHUFFLE_AFTER_EPOCH_SEED if given is None
                              else int(given) & (2**63 - 1))  # fmt: skip
        self._checkpointing = bool(args["enable_checkpointing"])
        self._capture = False
        self._mode: str | None = None  # "sample", "batch" or "call"
        self._batch_size: int | None = None
        self._call_batch_size: int | None = None
        self._position = (0, 0, 0)
        self._pending_state: ReaderState | None = None
        self._open_epoch = False
        self._compiled: tuple[Any, Any] | None = None  # compile mode (`_compile_mode`)
        self._ahead: deque[tuple[tuple[Any, ...], bool]] = deque()
        self._dataset_size: int | None = None
        self._holder: dict[str, Prefetcher] = {}
        weakref.finalize(self, stop_prefetcher, self._holder)
        self._source = self._make_source(args)

    def _make_source(self, args: dict[str, Any]) -> Source:
        raise NotImplementedError

    # ---- properties ------------------------------------------------------------------------
    @property
    def name(self) -> str | None:
        """Key used by checkpoints (None if not given)."""
        return self._name

    @property
    def max_batch_size(self) -> int | None:
        """Upper bound on `next_epoch(batch_size)`, and the default batch size when given."""
        return self._max_batch_size

    @property
    def device(self) -> Device:
        """Device of the outputs."""
        return self._device

    def __repr__(self) -> str:
        shown = {k: v for k, v in self._args.items() if v != _args.default_of(k, self._SPECIFIC)}
        inner = ", ".join(f"{k}={v!r}" for k, v in shown.items())
        return f"readers.{type(self).__name__}({inner})"

    # ---- iteration -------------------------------------------------------------------------
    def next_epoch(self, batch_size: int | None = None, ctx: Any = None,
                   capture: bool = False, compile: bool = False,
                   compile_depth: int = DEFAULT_DEPTH) -> Any:  # fmt: skip
        """Iterator over one epoch: tuples of Batch (with a batch size) or of Tensor.

        `compile=True` (the seeds' spelling) and `capture=True` (DALI 2.4's) run the epoch in
        compile mode (docs/compile.md; `_compile_mode`): the loop body's op calls are traced in
        the first iteration and issued `compile_depth` iterations ahead after that. Both need a
        batch size and are refused with checkpointing enabled."""
        cls = type(self).__name__
        capture = capture or compile
        if batch_size is not None:
            _args.check_int(cls, "batch_size", batch_size, minimum=1)
            if self._max_batch_size is not None and batch_size > self._max_batch_size:
                raise ValueError(f"batch_size {batch_size} is larger than the max_batch_size "
                                 f"{self._max_batch_size} given to the {cls} constructor")
        _check_ctx(ctx)
        size = batch_size if batch_size is not None else self._max_batch_size
        if capture:
            if self._checkpointing:
                raise NotImplementedError("Checkpointing is currently not supported in capture "
                                          "mode.")
            if size is None:
                raise ValueError(f"capture=True requires a non-None batch_size: {cls}.next_epoch "
                                 "in compile mode (compile=True / capture=True) yields Batches; "
                                 "pass batch_size=N (sample mode cannot be compiled)")
            _args.check_int(cls, "compile_depth", compile_depth, minimum=0)
            self._capture = True
        if self._open_epoch:
            raise RuntimeError(f"{cls}.next_epoch: the iterator of the previous next_epoch() "
                               "call is not exhausted; consume it fully (or create a new reader) "
                               "before starting the next epoch")
        self._enter_mode("sample" if size is None else "batch")
        if self._mode == "batch" and self._batch_size is not None and size != self._batch_size:
            raise ValueError(f"batch_size {size} is different than the max_batch_size "
                             f"{self._batch_size} used in the previous call")
        self._start(size or 1)
        self._open_epoch = True
        if capture:
            return self._compiled_epoch(f"readers.{cls}", size, compile_depth)
        return self._epoch(as_batch=size is not None)

    def _epoch(self, as_batch: bool, ended: bool = False) -> Any:
        while self._ahead and not ended:  # taken ahead by compile mode and not adopted
            values, ended = self._ahead.popleft()
            self._open_epoch = self._open_epoch and not ended
            yield values
        while not ended:  # (`ended` already: a compiled epoch adopted all of them)
            try:
                item = self._take()
            except Exception:
                self._open_epoch = False  # the next call re-raises the loading error itself
                raise
            if item.last_in_epoch:
                self._open_epoch = False
            yield self._wrap(item, as_batch)
            ended = item.last_in_epoch
        self._open_epoch = False

    def __call__(self, *, batch_size: int | None = None) -> tuple[Any, ...]:
        """One direct step: a tuple of Tensors (no batch size) or of Batches."""
        cls = type(self).__name__
        if batch_size is not None:
            _args.check_int(cls, "batch_size", batch_size, minimum=1)
        if self._mode == "call" and batch_size != self._call_batch_size:
            raise RuntimeError(f"{cls}: the batch size of direct calls must be uniform: got "
                               f"batch_size={batch_size} after batch_size={self._call_batch_size}")
        self._enter_mode("call")
        self._call_batch_size = batch_size
        self._start(batch_size or 1)
        return self._wrap(self._take(), as_batch=batch_size is not None)

    def _enter_mode(self, mode: str) -> None:
        if self._mode is not None and self._mode != mode:
            raise RuntimeError("Cannot mix samples, batches and _run/__call__ on the same reader.")
        self._mode = mode

    def _start(self, batch_size: int) -> Prefetcher:
        """Index the dataset and start prefetching on first use; the running prefetcher after."""
        prefetcher = self._holder.get("prefetcher")
        if prefetcher is not None:
            return prefetcher
        size = self._index()
        position = self._position
        if self._pending_state is not None:
            position = self._apply_pending(self._pending_state, size, batch_size)
            self._pending_state = None
        cfg = self._stream_config(size)
        depth = int(self._args["prefetch_queue_depth"])
        prefetcher = Prefetcher(cfg, self._source.load, batch_size, position, depth,
                                self._name or type(self).__name__)  # fmt: skip
        self._holder["prefetcher"] = prefetcher
        self._position = position
        self._batch_size = batch_size
        return prefetcher

    def _index(self) -> int:
        if self._dataset_size is None:
            size = self._source.index()
            cls = type(self).__name__
            if size == 0:
                raise RuntimeError(f"{cls}: the dataset is empty; no samples were found")
            self._dataset_size = size
            if shard_size(self._stream_config(size)) == 0:
                raise RuntimeError(f"{cls}: shard {self._args['shard_id']} of "
                                   f"{self._args['num_shards']} is empty: the dataset has only "
                                   f"{size} samples")
        return self._dataset_size

    def _apply_pending(self, state: ReaderState, size: int,
                       batch_size: int) -> tuple[int, int, int]:  # fmt: skip
        cls = type(self).__name__
        if state.dataset_size != size:
            raise ValueError(f"{cls}: the restored state was saved for a dataset of "
                             f"{state.dataset_size} samples; this reader has {size}")
        if state.offset % batch_size:
            raise ValueError(f"{cls}: the restored state is {state.offset} samples into an epoch "
                             f"read with batch_size {state.batch_size}; it cannot continue with "
                             f"batch_size {batch_size}")
        self._seed, self._shuffle_seed = state.seed, state.shuffle_seed
        return (state.epoch, state.start, state.offset)

    def _stream_config(self, size: int) -> StreamConfig:
        a = self._args
        return StreamConfig(size, a["shard_id"], a["num_shards"], a["stick_to_shard"],
                            a["pad_last_batch"], a["random_shuffle"], a["initial_fill"],
                            self._seed, bool(a.get("shuffle_after_epoch", False)),
                            self._shuffle_seed)  # fmt: skip

    def _take(self) -> Item:
        """The next batch. After a loading error, or in a forked child (where the parent's
        prefetch thread does not exist), a new prefetcher starts at the position after the last
        batch handed out: the reader then behaves as a new one restored from `get_state()`, so
        an I/O error is not permanent and a retry reads the failed batch again."""
        prefetcher = self._holder.get("prefetcher")
        if prefetcher is None or prefetcher.forked:
            self._holder.pop("prefetcher", None)
            assert self._batch_size is not None
            prefetcher = self._start(self._batch_size)
        try:
            item = prefetcher.take()
        except BaseException:
            self._holder.pop("prefetcher", None)
            prefetcher.stop()
            raise
        self._position = item.after
        return item

    def _wrap(self, item: Item, as_batch: bool) -> tuple[Any, ...]:
        out: list[Any] = []
        for storage, layout in zip(item.outputs, self._source.layouts, strict=True):
            dtype = DType.from_fw_type(storage.dtype)
            if self._device != Device.CPU:
                from ndd_triton.core.construct import move_storage

                storage = move_storage(storage, self._device)
            if as_batch:
                out.append(Batch._concrete(storage, dtype, layout))
            else:
                out.append(Tensor._wrap(storage.samples[0], self._device, layout))
        return tuple(out)

    @property
    def _iterated(self) -> bool:
        return self._batch_size is not None

    # ---- metadata and state ----------------------------------------------------------------
    def get_metadata(self, batch_size: int | None = None) -> dict[str, int]:
        """Dataset size, padded size and sharding settings (indexes the dataset if needed)."""
        cfg = self._stream_config(self._index())
        a = self._args
        return {"epoch_size": cfg.dataset_size, "epoch_size_padded": padded_epoch_size(cfg),
                "number_of_shards": a["num_shards"], "shard_id": a["shard_id"],
                "pad_last_batch": int(a["pad_last_batch"]),
                "stick_to_shard": int(a["stick_to_shard"])}  # fmt: skip

    @property
    def _label(self) -> str:
        """'File reader' or 'File reader 'name'' for messages (no 'reader None')."""
        cls = type(self).__name__
        return f"{cls} reader {self._name!r}" if self._name else f"{cls} reader"

    def get_state(self, *, cuda_stream: Any = None) -> ReaderState:
        """The position after the last batch handed out (needs `enable_checkpointing=True`)."""
        cls = type(self).__name__
        if not self._checkpointing:
            raise RuntimeError(f"Cannot get the state of {self._label}: it was "
                               "initialized with checkpointing disabled; construct it with "
                               "enable_checkpointing=True")
        if not self._iterated:
            raise RuntimeError(f"Cannot get the reader's state before its first iteration "
                               f"({self._label}); call next_epoch first")
        assert self._dataset_size is not None
        assert self._batch_size is not None
        epoch, start, offset = self._position
        return ReaderState(cls, self._dataset_size, epoch, start, offset, self._batch_size,
                           self._seed, self._shuffle_seed)  # fmt: skip

    def set_state(self, state: Any) -> None:
        """Restore a position from `get_state()` or its string form, before the first iteration."""
        cls = type(self).__name__
        if self._iterated:
            raise RuntimeError(f"Cannot set the reader's state after iteration has begun "
                               f"({self._label}); set it on a freshly built reader")
        parsed = ReaderState.parse(state)
        if parsed.reader_type != cls:
            raise ValueError(f"{cls}.set_state: the state belongs to a {parsed.reader_type} "
                             f"reader, not a {cls} reader")
        self._checkpointing = True
        self._pending_state = parsed

    def _on_checkpoint_register(self) -> None:
        """Checkpoint.register hook: enable checkpointing, if it is not too late."""
        if self._checkpointing:
            return
        if self._iterated:
            raise RuntimeError(f"Cannot register {self._label} "
                               "for checkpointing: it was already iterated with checkpointing "
                               "disabled; construct it with enable_checkpointing=True")
        if self._capture:
            raise NotImplementedError("Checkpointing is currently not supported in capture mode.")
        self._checkpointing = True


def _check_ctx(ctx: Any) -> None:
    from ndd_triton.runtime.eval_context import EvalContext

    if ctx is not None and not isinstance(ctx, EvalContext):
        raise TypeError(f"next_epoch: argument 'ctx' expects an EvalContext or None; got "
                        f"{type(ctx).__name__}")


def file_size(path: str) -> int:
    """Size of `path` in bytes, as a RuntimeError naming the file when it cannot be read."""
    try:
        return os.path.getsize(path)
    except OSError as e:
        raise RuntimeError(f"Cannot read file {path!r}: {e.strerror}") from e


def pack_arrays(arrays: list[np.ndarray], what: str) -> BatchStorage:
    """One packed CPU storage holding copies of `arrays` (one dtype for the whole batch)."""
    from ndd_triton.core.dtype import dtype as to_dtype

    dtypes = {a.dtype for a in arrays}
    if len(dtypes) > 1:
        raise RuntimeError(f"{what}: the samples of one batch must share a dtype; got "
                           f"{sorted(str(d) for d in dtypes)}")
    ranks = {a.ndim for a in arrays}
    if len(ranks) > 1:
        raise RuntimeError(f"{what}: the samples of one batch must have the same number of "
                           f"dimensions; got shapes {[a.shape for a in arrays]}")
    torch_dtype = to_dtype(arrays[0].dtype).torch_dtype
    storage = BatchStorage.allocate([a.shape for a in arrays], torch_dtype, Device.CPU)
    for array, sample in zip(arrays, storage.samples, strict=True):
        if array.size:
            sample.numpy()[...] = array
    return storage
