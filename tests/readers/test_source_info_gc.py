"""Source tags are dropped by finalizers, which the garbage collector may run anywhere,
including inside the module's own locked sections (a deadlock before, seen once in CI)."""

import threading

import torch

from ndd_triton.readers import _source_info as si


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
    from ndd_triton._device import Device
    from ndd_triton._storage import BatchStorage

    storage = BatchStorage.allocate([(5,), (0,), (7,), (3,)], torch.uint8, Device.CPU)
    si.tag_storage(storage, ["a.jpg", "b.jpg", "c.jpg", "d.jpg"])
    for sample, name in zip(storage.samples, ["a.jpg", "b.jpg", "c.jpg", "d.jpg"], strict=True):
        assert si.source_info(sample) == name
        expected = None if sample.numel() == 0 else name  # empty samples have no memory
        assert si.source_of_memory(sample.numpy()) == expected
