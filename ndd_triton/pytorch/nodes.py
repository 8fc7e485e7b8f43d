"""torchdata.nodes integration with real state (DALI 2.4's `ndd.pytorch.nodes`, state included).

DALI 2.4 names: `Reader(reader_type, *, batch_size, output_names=None, **kwargs)` yields dicts
of the reader's outputs, `DictMapper(source, map_fn, key="data")` maps one key, and
`ToTorch(source, output_stream=None)` turns the dicts into tuples of torch tensors. Added here:
`Map(source, fn)` maps the whole dict, and every node has a working `get_state`/`reset(state)`:
the reader's position, and the state of the RNG the mapping function draws from (installed as
the thread's default RNG while it runs, on whichever thread a `Prefetcher` or
`ParallelMapper` runs it), so a `torchdata.nodes.Loader` resumes exactly.

`Reader.reset(None)` starts the next epoch (the reader's stream continues, as with
`next_epoch()`); a reset in the middle of an epoch skips the rest of it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch

try:
    import torchdata.nodes as tn
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("ndd_triton.pytorch.nodes needs torchdata (pip install torchdata)") from e

from ndd_triton.core.batch import Batch
from ndd_triton.core.tensor import Tensor
from ndd_triton.pytorch import _rngs
from ndd_triton.random import RNG
from ndd_triton.random._rng import swap_default_rng
from ndd_triton.readers._base import Reader as _ReaderBase
from ndd_triton.readers._control import next_epoch_state, rewind, shard_by_default, start_state
from ndd_triton.readers._sharding import shard_from_torch_distributed
from ndd_triton.runtime.eval_mode import EvalMode

__all__ = ["DictMapper", "Map", "Reader", "ToTorch"]


class Reader(tn.BaseNode):
    """A reader as a node yielding `{name: Batch}` dicts (or `{name: Tensor}` without batch size).

    `reader_type` is a reader class (built with `**kwargs`, checkpointing on, sharded over
    torch.distributed when a process group exists and no `shard_id`/`num_shards` is given) or
    an already built reader. `output_names` default to ("data", "label") for two outputs.
    """

    def __init__(self, reader_type: Any, *, batch_size: int | None,
                 output_names: Iterable[str] | None = None, **kwargs: Any) -> None:  # fmt: skip
        super().__init__()
        if isinstance(reader_type, _ReaderBase):
            if kwargs:
                raise TypeError(f"nodes.Reader: keyword arguments {sorted(kwargs)} are for "
                                "building a reader; got a reader instance")
            reader = reader_type
        elif isinstance(reader_type, type) and issubclass(reader_type, _ReaderBase):
            reader = reader_type(**{"enable_checkpointing": True, **kwargs})
        else:
            raise TypeError(f"nodes.Reader: argument 'reader_type' expects an ndd.readers class "
                            f"or reader; got {reader_type!r:.80}")
        shard_by_default(reader, *shard_from_torch_distributed())
        reader._on_checkpoint_register()
        self._reader = reader
        self._batch_size = batch_size
        self._names = None if output_names is None else tuple(output_names)
        self._iter: Any = None
        self._exhausted = False
        self._at_end = False
        self._started = False
        self._last = start_state(reader, batch_size or 1)

    @property
    def reader(self) -> _ReaderBase:
        """The wrapped reader."""
        return self._reader

    def get_metadata(self) -> dict[str, int]:
        """The reader's metadata (dataset size, shards, padding)."""
        return self._reader.get_metadata()

    def reset(self, initial_state: dict[str, Any] | None = None) -> None:
        """Restore `initial_state`, or start the next epoch (the first one on first use)."""
        super().reset(initial_state)
        if initial_state is not None:
            rewind(self._reader, initial_state["reader"])
            self._last = initial_state["reader"]
            self._exhausted = self._at_end = bool(initial_state["exhausted"])
            self._started = True
            self._iter = None if self._exhausted else self._open()
            return
        if self._iter is not None and not self._exhausted and self._started and \
                self._reader._open_epoch:  # fmt: skip
            self._last = next_epoch_state(self._reader)  # skip the rest of this epoch
            rewind(self._reader, self._last)
        self._started = True
        self._exhausted = self._at_end = False
        self._iter = self._open()

    def _open(self) -> Any:
        return self._reader.next_epoch(batch_size=self._batch_size)

    def next(self) -> dict[str, Any]:
        if self._exhausted or self._iter is None:
            raise StopIteration
        try:
            outputs = next(self._iter)
        except StopIteration:
            self._exhausted = True
            raise
        self._last = str(self._reader.get_state())
        self._at_end = self._reader._position[2] == 0
        names = self._names
        if names is None:
            if len(outputs) != 2:
                raise ValueError(f"nodes.Reader: the reader has {len(outputs)} outputs; give "
                                 "output_names (the default names two: 'data', 'label')")
            names = ("data", "label")
        if len(names) != len(outputs):
            raise ValueError(f"nodes.Reader: output_names names {len(names)} outputs; the "
                             f"reader has {len(outputs)}")
        return dict(zip(names, outputs, strict=True))

    def get_state(self) -> dict[str, Any]:
        return {"reader": self._last, "exhausted": self._exhausted or self._at_end}


class Map(tn.BaseNode):
    """Apply `fn(dict) -> dict` to every item; random ops in `fn` draw from the node's RNG.

    `seed` seeds that RNG; `rngs` are more generators `fn` uses (saved and restored too);
    `eval_mode` is the `ndd.EvalMode` `fn` runs in.
    """

    def __init__(self, source: tn.BaseNode, fn: Callable[[dict[str, Any]], Any], *,
                 seed: int | None = None, rngs: Iterable[Any] = (),
                 eval_mode: EvalMode = EvalMode.eager) -> None:  # fmt: skip
        super().__init__()
        self.source = source
        self._fn = fn
        self._rng = RNG(seed)
        self._rngs = list(rngs)
        for rng in self._rngs:
            _rngs.check(rng, type(self).__name__)
        self._eval_mode = eval_mode

    def reset(self, initial_state: dict[str, Any] | None = None) -> None:
        super().reset(initial_state)
        if initial_state is None:
            self.source.reset(None)
            return
        self.source.reset(initial_state["source"])
        _rngs.put(self._rng, initial_state["rng"])
        for rng, saved in zip(self._rngs, initial_state["rngs"], strict=True):
            _rngs.put(rng, saved)

    def _apply(self, item: dict[str, Any]) -> Any:
        return self._fn(item)

    def next(self) -> Any:
        item = next(self.source)
        previous = swap_default_rng(self._rng)
        try:
            with self._eval_mode:
                return self._apply(item)
        finally:
            swap_default_rng(previous)

    def get_state(self) -> dict[str, Any]:
        return {"source": self.source.state_dict(), "rng": _rngs.get(self._rng),
                "rngs": [_rngs.get(r) for r in self._rngs]}  # fmt: skip


class DictMapper(Map):
    """Apply `map_fn` to the value under `key` of every dict (DALI 2.4's node, with state)."""

    def __init__(self, source: tn.BaseNode, map_fn: Callable[[Any], Any], key: str = "data",
                 **kwargs: Any) -> None:  # fmt: skip
        super().__init__(source, map_fn, **kwargs)
        self._key = key

    def _apply(self, item: dict[str, Any]) -> Any:
        if self._key not in item:
            raise KeyError(f"DictMapper: key {self._key!r} is not in the item (keys: "
                           f"{sorted(item)})")
        return {**item, self._key: self._fn(item[self._key])}


class ToTorch(tn.BaseNode):
    """Dicts of ndd Tensors/Batches to tuples of torch tensors (DALI 2.4's node).

    GPU data: `output_stream` (default: torch's current stream at construction) waits for the
    producing stream, with no host sync. `pad=True` zero-pads ragged batches.
    """

    def __init__(self, source: tn.BaseNode, output_stream: Any = None, *,
                 pad: bool = False) -> None:  # fmt: skip
        super().__init__()
        self.source = source
        if output_stream is None and torch.cuda.is_available():
            output_stream = torch.cuda.current_stream()
        self._stream = output_stream
        self._pad = pad

    def reset(self, initial_state: dict[str, Any] | None = None) -> None:
        super().reset(initial_state)
        self.source.reset(None if initial_state is None else initial_state["source"])

    def _convert(self, value: Any) -> torch.Tensor:
        if isinstance(value, Batch):
            return value.torch(pad=self._pad)
        if isinstance(value, Tensor):
            return value.torch()
        return torch.as_tensor(value)

    def next(self) -> tuple[torch.Tensor, ...]:
        item = next(self.source)
        values = item.values() if isinstance(item, dict) else item
        if self._stream is not None:
            with torch.cuda.stream(self._stream):
                return tuple(self._convert(v) for v in values)
        return tuple(self._convert(v) for v in values)

    def get_state(self) -> dict[str, Any]:
        return {"source": self.source.state_dict()}
