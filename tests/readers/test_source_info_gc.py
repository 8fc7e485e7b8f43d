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
