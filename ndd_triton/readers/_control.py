"""Control of a reader from a loader: rewind to a saved position, shard by default, epoch plan.

`ndd_triton.pytorch` drives readers it does not construct: it restores a saved position on a
reader that was already iterated (`rewind`), shards a reader built without sharding arguments
over a torch.distributed job (`shard_by_default`), and needs to know which batches of an epoch
hold real samples (`epoch_plan`) for its last-batch policies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ndd_triton.readers._base import Reader
from ndd_triton.readers._sharding import shard_bounds


def rewind(reader: Reader, state: Any = None) -> None:
    """Make `reader` a fresh reader (stopped prefetching) at `state`, or at its very start."""
    prefetcher = reader._holder.pop("prefetcher", None)
    if prefetcher is not None:
        prefetcher.stop()
    reader._mode = None
    reader._batch_size = None
    reader._call_batch_size = None
    reader._open_epoch = False
    reader._position = (0, 0, 0)
    reader._pending_state = None
    remember_seeds(reader)
    reader._seed, reader._shuffle_seed = reader._initial_seeds  # type: ignore[attr-defined]
    if state is not None:
        reader.set_state(state)


def remember_seeds(reader: Reader) -> None:
    """Record the construction seeds (before a restored state replaces them)."""
    if not hasattr(reader, "_initial_seeds"):
        reader._initial_seeds = (reader._seed, reader._shuffle_seed)  # type: ignore[attr-defined]


def shard_by_default(reader: Reader, shard_id: int, num_shards: int) -> bool:
    """Shard a reader built without `shard_id`/`num_shards` as `shard_id` of `num_shards`.

    Also turns on `pad_last_batch` unless it was given, so every shard reads the same number of
    batches. Returns False (and changes nothing) when the user chose the sharding.
    """
    given = getattr(reader, "_given", frozenset())
    if num_shards <= 1 or {"shard_id", "num_shards"} & given:
        return False
    if reader._iterated:
        raise RuntimeError(f"Cannot shard {type(reader).__name__} reader {reader.name!r} over "
                           "torch.distributed: it was already iterated; pass shard_id and "
                           "num_shards to its constructor")
    reader._args["shard_id"] = int(shard_id)
    reader._args["num_shards"] = int(num_shards)
    if "pad_last_batch" not in given:
        reader._args["pad_last_batch"] = True
    if reader._dataset_size is not None:
        reader._dataset_size = None  # re-check that the new shard is not empty
    return True


@dataclass(frozen=True, slots=True)
class EpochPlan:
    """Batches the reader yields in an epoch, real samples in it, and the fewest of any shard."""

    batches: int
    valid: int
    min_valid: int


def epoch_plan(reader: Reader, epoch: int, batch_size: int) -> EpochPlan:
    """The plan of epoch `epoch` (the reader's own epoch counter) at `batch_size`."""
    cfg = reader._stream_config(reader._index())
    n, size = cfg.num_shards, cfg.dataset_size
    if cfg.pad_last_batch:
        shard = cfg.shard_id if cfg.stick_to_shard else (cfg.shard_id + epoch) % n
        begin, end = shard_bounds(shard, n, size)
        largest = -(-size // n)
        return EpochPlan(-(-largest // batch_size), end - begin, size // n)
    begin, end = shard_bounds(cfg.shard_id, n, size)
    return EpochPlan(-(-(end - begin) // batch_size), end - begin, end - begin)



def pad_by_default(reader: Reader, why: str) -> None:
    """Turn on `pad_last_batch` (each epoch reads its whole shard, from its start) unless the
    user set it to False, which is a ValueError naming `why` it is needed."""
    if reader._args["pad_last_batch"]:
        return
    cls = type(reader).__name__
    if "pad_last_batch" in getattr(reader, "_given", frozenset()):
        raise ValueError(f"{why} needs a reader that reads whole shards per epoch; {cls} reader "
                         f"{reader.name!r} was built with pad_last_batch=False")
    if reader._iterated:
        raise RuntimeError(f"{why} needs pad_last_batch=True, and {cls} reader {reader.name!r} "
                           "was already iterated without it; pass pad_last_batch=True")
    reader._args["pad_last_batch"] = True


def start_state(reader: Reader, batch_size: int) -> str:
    """The reader's state at the very start of its stream (seeds included), as text."""
    from ndd_triton.readers._state import ReaderState

    remember_seeds(reader)
    if reader._pending_state is not None:
        return str(reader._pending_state)
    seed, shuffle_seed = reader._initial_seeds  # type: ignore[attr-defined]
    return str(ReaderState(type(reader).__name__, reader._index(), 0, 0, 0, batch_size, seed,
                           shuffle_seed))  # fmt: skip


def next_epoch_state(reader: Reader) -> str:
    """The state at the start of the epoch after the current one (skips the epoch's rest)."""
    from ndd_triton.readers._sharding import epoch_indices
    from ndd_triton.readers._state import ReaderState

    state = reader.get_state()
    cfg = reader._stream_config(state.dataset_size)
    _, next_start = epoch_indices(cfg, state.epoch, state.start, state.batch_size)
    return str(ReaderState(state.reader_type, state.dataset_size, state.epoch + 1, next_start, 0,
                           state.batch_size, state.seed, state.shuffle_seed))  # fmt: skip
