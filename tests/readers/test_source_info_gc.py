"""Source tags are dropped by finalizers, which the garbage collector may run anywhere,
including inside the module's own locked sections (a deadlock before, seen once in CI)."""

import threading

import torch

from ndd_triton.core import source_tags as si


def test_a_finalizer_inside_a_locked_section_does_not_deadlock():
    done = threading.Event()

    def finalize_while_locked() -> None:
        with si._lock:  # as if GC ran a finalizer while source_of_memory held the lock
            si._forget(12345, (1, 2))
        done.set()

    worker = threading.Thread(target=finalize_while_locked, daemon=True)
    worker.start()
    worker.join(timeout=10)
    assert done.is_set(), "_forget blocked on the lock its caller holds"


def test_dead_samples_are_forgotten_on_next_use():
    sample = torch.arange(16, dtype=torch.uint8)
    si.tag([sample], ["a/b.jpg"])
    assert si.source_info(sample) == "a/b.jpg"
    assert si.source_of_memory(sample.numpy()) == "a/b.jpg"
    memory = (sample.data_ptr(), 16)
    del sample
    si.source_info(torch.zeros(1))  # any use drains the queue of dead samples
    assert memory not in si._by_memory


def test_tag_storage_records_each_samples_memory_like_tag():
    from ndd_triton.core.device import Device
    from ndd_triton.core.storage import BatchStorage

    storage = BatchStorage.allocate([(5,), (0,), (7,), (3,)], torch.uint8, Device.CPU)
    si.tag_storage(storage, ["a.jpg", "b.jpg", "c.jpg", "d.jpg"])
    for sample, name in zip(storage.samples, ["a.jpg", "b.jpg", "c.jpg", "d.jpg"], strict=True):
        assert si.source_info(sample) == name
        expected = None if sample.numel() == 0 else name  # empty samples have no memory
        assert si.source_of_memory(sample.numpy()) == expected


def test_a_batch_tag_ends_with_its_buffer_and_never_names_reused_memory():
    """Tagged by memory once per batch, for as long as the batch's buffer lives: a later
    batch in the same (recycled) memory is not named after the files of the first."""
    import gc

    from ndd_triton.core import storage as _storage
    from ndd_triton.core.device import Device
    from ndd_triton.core.storage import BatchStorage

    shapes = [(300_000 + 1000 * i,) for i in range(4)]  # >= 1 MB: a pooled buffer
    first = BatchStorage.allocate(shapes, torch.uint8, Device.CPU)
    si.tag_storage(first, ["a.jpg", "b.jpg", "c.jpg", "d.jpg"])
    views = first.host_views()
    assert [si.source_of_memory(v) for v in views] == ["a.jpg", "b.jpg", "c.jpg", "d.jpg"]
    sample = first.samples[2]  # a torch view keeps the buffer (and the tag) alive
    address = views[0].__array_interface__["data"][0]
    del first, views
    gc.collect()
    assert si.source_info(sample) == "c.jpg"
    del sample
    gc.collect()
    second = BatchStorage.allocate(shapes, torch.uint8, Device.CPU)
    again = second.host_views()
    if _storage._CAN_POOL:
        assert again[0].__array_interface__["data"][0] == address  # the same memory, recycled
    assert [si.source_of_memory(v) for v in again] == [None] * 4
    assert si.source_info(second.samples[1]) is None


def test_selections_and_torch_views_of_reader_samples_keep_their_source(tmp_path):
    import numpy as np

    import ndd_triton as ndd

    (tmp_path / "c").mkdir()
    for i, size in enumerate([7, 0, 5, 9]):
        (tmp_path / "c" / f"{i}.jpg").write_bytes(bytes([i]) * size)
    reader = ndd.readers.File(file_root=str(tmp_path))
    (batch, _), = list(reader.next_epoch(batch_size=4))
    names = [f"c/{i}.jpg" for i in range(4)]
    assert [ndd.readers.source_info(s) for s in batch] == names
    picked = batch.select([3, 1, 0])
    assert [ndd.readers.source_info(s) for s in picked] == [names[3], names[1], names[0]]
    assert ndd.readers.source_info(batch.select(2).torch()) == names[2]
    assert si.source_of_memory(np.asarray(batch.select(3))) == names[3]
    samples = list(ndd.readers.File(file_root=str(tmp_path)).next_epoch())
    assert [ndd.readers.source_info(data) for data, _ in samples] == names
