"""Epoch, padding, sharding and shuffling semantics of readers (core.md §14.3).

Every test reads `files=` datasets whose label is the sample's index, so a batch's labels
are the dataset indices it holds.
"""

from __future__ import annotations

import functools
import operator

import numpy as np
import pytest
from reader_files import read_labels

import ndd_triton as ndd
from ndd_triton.readers._sharding import StreamConfig, buffer_shuffle, epoch_indices


def epochs(reader, count, batch_size):
    return [[read_labels(lbl) for _, lbl in reader.next_epoch(batch_size=batch_size)]
            for _ in range(count)]  # fmt: skip


def test_batches_continue_the_stream_without_padding(flat_files):
    reader = ndd.readers.File(**flat_files(6))
    assert epochs(reader, 3, 4) == [[[0, 1, 2, 3], [4, 5, 0, 1]], [[2, 3, 4, 5], [0, 1, 2, 3]],
                                    [[4, 5, 0, 1], [2, 3, 4, 5]]]  # fmt: skip


def test_pad_last_batch_repeats_the_last_sample(flat_files):
    reader = ndd.readers.File(**flat_files(6), pad_last_batch=True)
    assert epochs(reader, 2, 4) == [[[0, 1, 2, 3], [4, 5, 5, 5]]] * 2


def test_shards_move_on_each_epoch(flat_files):
    reader = ndd.readers.File(**flat_files(6), shard_id=0, num_shards=2)
    assert epochs(reader, 2, 2) == [[[0, 1], [2, 3]], [[4, 5], [0, 1]]]


def test_stick_to_shard_wraps_inside_the_shard(flat_files):
    reader = ndd.readers.File(**flat_files(6), shard_id=0, num_shards=2, stick_to_shard=True)
    assert epochs(reader, 2, 2) == [[[0, 1], [2, 0]], [[1, 2], [0, 1]]]


def test_padded_shards_rotate_unless_sticky(flat_files):
    files = flat_files(7)  # shard 0 = [0, 3), shard 1 = [3, 7)
    moving = ndd.readers.File(**files, shard_id=0, num_shards=2, pad_last_batch=True)
    assert epochs(moving, 2, 2) == [[[0, 1], [2, 2]], [[3, 4], [5, 6]]]
    sticky = ndd.readers.File(**files, shard_id=1, num_shards=2, pad_last_batch=True,
                              stick_to_shard=True)  # fmt: skip
    assert epochs(sticky, 2, 3) == [[[3, 4, 5], [6, 6, 6]]] * 2


def test_sample_mode_reads_exactly_the_shard(flat_files):
    reader = ndd.readers.File(**flat_files(6), shard_id=1, num_shards=2)
    first = [int(np.asarray(lbl)[0]) for _, lbl in reader.next_epoch()]
    second = [int(np.asarray(lbl)[0]) for _, lbl in reader.next_epoch()]
    assert first == [3, 4, 5]
    assert second == [0, 1, 2]  # then the next shard's data


def test_random_shuffle_is_seeded_and_covers_each_epoch(flat_files):
    files = flat_files(20)
    runs = [epochs(ndd.readers.File(**files, random_shuffle=True, seed=s), 2, 5) for s in (7, 7, 8)]
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]
    for epoch in runs[0]:
        flat = functools.reduce(operator.iadd, epoch, [])
        assert sorted(flat) == list(range(20))
        assert flat != list(range(20))
    assert runs[0][0] != runs[0][1]  # a new order every epoch


def test_initial_fill_one_keeps_the_order(flat_files):
    reader = ndd.readers.File(**flat_files(5), random_shuffle=True, initial_fill=1, seed=3)
    assert epochs(reader, 1, 5) == [[[0, 1, 2, 3, 4]]]


def test_buffer_shuffle_only_moves_samples_within_reach():
    rng = np.random.default_rng(0)
    order = np.arange(100)
    out = buffer_shuffle(order, 4, rng)
    assert sorted(out.tolist()) == list(range(100))
    # with a buffer of 4, sample k cannot be emitted before step k - 3
    assert all(position >= value - 3 for position, value in enumerate(out.tolist()))


def test_shuffle_after_epoch_is_a_global_permutation(flat_files):
    files = flat_files(6)
    shards = [ndd.readers.File(**files, shard_id=i, num_shards=2, shuffle_after_epoch=True)
              for i in range(2)]  # fmt: skip
    per_shard = [epochs(r, 3, 3) for r in shards]
    assert per_shard[0][0] == [[0, 1, 2]]  # the first epoch is in file order
    for epoch in (1, 2):
        together = per_shard[0][epoch][0] + per_shard[1][epoch][0]
        assert sorted(together) == list(range(6))  # shards still partition the dataset
    assert per_shard[0][1] != per_shard[0][2] or per_shard[1][1] != per_shard[1][2]


@pytest.mark.parametrize("pad", [False, True])
@pytest.mark.parametrize("stick", [False, True])
def test_epoch_length_is_shard_size_rounded_up(pad, stick):
    cfg = StreamConfig(dataset_size=11, shard_id=1, num_shards=3, stick_to_shard=stick,
                       pad_last_batch=pad)  # fmt: skip
    order, _ = epoch_indices(cfg, 0, 0, 2)
    assert len(order) == 4  # shard 1 = [3, 7): 4 samples
    assert order.tolist()[:4] == [3, 4, 5, 6]


def test_shard_from_torch_distributed_without_a_process_group():
    assert ndd.readers.shard_from_torch_distributed() == (0, 1)


def test_shard_from_torch_distributed_with_a_process_group(tmp_path):
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'rendezvous'}", rank=0,
                            world_size=1)  # fmt: skip
    try:
        assert ndd.readers.shard_from_torch_distributed() == (0, 1)
    finally:
        dist.destroy_process_group()
