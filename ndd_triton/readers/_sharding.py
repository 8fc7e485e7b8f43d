"""Which dataset indices an epoch reads: shards, padding, stream continuation and shuffling.

Everything here is a pure function of a `StreamConfig` and a stream position, so a reader's
whole position is `(epoch, start, offset)` plus its seeds, and a restored reader recomputes the
exact same sample order (core.md §14.3):

* shard `i` of `n` covers `[floor(i*N/n), floor((i+1)*N/n))`;
* without `pad_last_batch` an epoch reads `ceil(shard_size / batch_size) * batch_size` samples
  from a ring (the whole dataset, or only the shard with `stick_to_shard`) and the next epoch
  continues where the ring stopped;
* with `pad_last_batch` every epoch reads one whole shard (the next shard each epoch unless
  `stick_to_shard`), padded by repeating the last sample read (after shuffling, as DALI does:
  the padding ends the epoch, where a loader's PARTIAL policy trims it) up to the batches the
  *largest* shard needs: every shard yields the same number of batches (DALI 2.4: 14 files in
  5 shards at batch 2 give every shard 2 batches), so no rank of a distributed job waits in a
  collective for a batch its peer never gets;
* `shuffle_after_epoch` permutes the whole dataset differently each epoch (epoch 0 in order);
* `random_shuffle` passes the epoch's samples through a buffer of `initial_fill` samples and
  emits a randomly chosen buffered sample each step (DALI's shuffle-buffer model).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class StreamConfig:
    """Sharding and shuffling settings of one reader over a dataset of `dataset_size` samples."""

    dataset_size: int
    shard_id: int = 0
    num_shards: int = 1
    stick_to_shard: bool = False
    pad_last_batch: bool = False
    random_shuffle: bool = False
    initial_fill: int = 1024
    seed: int = 0
    shuffle_after_epoch: bool = False
    shuffle_after_epoch_seed: int = 0


def shard_bounds(shard_id: int, num_shards: int, dataset_size: int) -> tuple[int, int]:
    """`[begin, end)` of shard `shard_id` of `num_shards`."""
    return (shard_id * dataset_size // num_shards, (shard_id + 1) * dataset_size // num_shards)


def shard_size(cfg: StreamConfig) -> int:
    """Number of samples in the reader's own shard."""
    begin, end = shard_bounds(cfg.shard_id, cfg.num_shards, cfg.dataset_size)
    return end - begin


def padded_epoch_size(cfg: StreamConfig) -> int:
    """`epoch_size_padded` metadata: every shard padded to the largest one when padding."""
    if not cfg.pad_last_batch:
        return cfg.dataset_size
    largest = -(-cfg.dataset_size // cfg.num_shards)
    return largest * cfg.num_shards


def epoch_indices(cfg: StreamConfig, epoch: int, start: int,
                  batch_size: int) -> tuple[np.ndarray, int]:  # fmt: skip
    """Dataset indices epoch `epoch` reads (already shuffled) and the ring start of the next."""
    if cfg.pad_last_batch:
        shard = cfg.shard_id if cfg.stick_to_shard else (cfg.shard_id + epoch) % cfg.num_shards
        begin, end = shard_bounds(shard, cfg.num_shards, cfg.dataset_size)
        order = np.arange(begin, end, dtype=np.int64)
        largest = -(-cfg.dataset_size // cfg.num_shards)  # shard sizes differ by at most one
        pad_to = -(-largest // batch_size) * batch_size  # padded after shuffling (below)
        next_start = 0
    else:
        pad_to = 0
        begin, end = shard_bounds(cfg.shard_id, cfg.num_shards, cfg.dataset_size)
        size = end - begin
        length = -(-size // batch_size) * batch_size
        steps = start + np.arange(length, dtype=np.int64)
        if cfg.stick_to_shard:
            order = begin + steps % size
            next_start = (start + length) % size
        else:
            order = (begin + steps) % cfg.dataset_size
            next_start = (start + length) % cfg.dataset_size
    if cfg.shuffle_after_epoch and epoch > 0:
        rng = np.random.default_rng([cfg.shuffle_after_epoch_seed, epoch])
        order = rng.permutation(cfg.dataset_size)[order]
    if cfg.random_shuffle:
        order = buffer_shuffle(order, cfg.initial_fill, np.random.default_rng([cfg.seed, epoch]))
    if pad_to > len(order):  # the last sample read is repeated: the padding ends the epoch
        order = np.concatenate([order, np.full(pad_to - len(order), order[-1], np.int64)])
    return order, next_start


def buffer_shuffle(order: np.ndarray, buffer_size: int, rng: np.random.Generator) -> np.ndarray:
    """Shuffle through a buffer: fill it, then emit a random slot and refill it from the stream."""
    size = max(1, min(int(buffer_size), len(order)))
    buffer = order[:size].tolist()
    pending = order[size:].tolist()
    picks = rng.random(len(order))
    out: list[int] = []
    emit = out.append
    # while the stream lasts the buffer stays full, so the slots can be drawn vectorised
    for step, slot in enumerate((picks[:len(pending)] * size).astype(np.int64).tolist()):
        emit(buffer[slot])
        buffer[slot] = pending[step]
    for pick in picks[len(pending):].tolist():  # the stream is drained: shrink the buffer
        slot = int(pick * len(buffer))
        emit(buffer[slot])
        buffer[slot] = buffer[-1]
        buffer.pop()
    return np.asarray(out, dtype=np.int64)


def shard_from_torch_distributed() -> tuple[int, int]:
    """`(shard_id, num_shards)` for this process: torch.distributed's (rank, world_size).

    Use it as `File(..., shard_id=shard_id, num_shards=num_shards)` in a `torchrun` job so every
    rank reads its own part of the dataset. Returns `(0, 1)` when torch.distributed is not
    available or its default process group is not initialised (single-process runs).
    """
    import torch.distributed as dist

    if not dist.is_available() or not dist.is_initialized():
        return 0, 1
    return int(dist.get_rank()), int(dist.get_world_size())
