"""Fork safety (runtime/fork.py): a forked child computes with fresh executor threads and pools.

Before the fix, a PyTorch DataLoader with worker processes (fork) hung forever once the parent
had run an op: the child inherited the executor's queue, the pool and the prefetch threads,
without the threads.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import time

import numpy as np
import pytest
import torch
from _gated_op import GATE, gated
from torch.utils.data import DataLoader, Dataset

import ndd_triton as ndd
from ndd_triton.core import device as ndd_device
from ndd_triton.runtime import fork

# Python >= 3.12 warns about forking a multi-threaded process: that it works is tested here.
pytestmark = pytest.mark.filterwarnings("ignore:.*multi-threaded.*fork:DeprecationWarning")


def _work(value: int, device: str) -> int:
    """A batch big enough for the pool and the executor (>= 64 KiB), through two ops."""
    batch = ndd.as_batch([np.full((120, 100, 3), value, np.uint8)] * 3, layout="HWC")
    if device == "gpu":
        batch = batch.gpu()
    out = ndd.flip(ndd.flip(batch, horizontal=1), vertical=1)
    return int(np.asarray(out.cpu().select(2))[7, 9, 1])


class _Samples(Dataset):
    def __init__(self, device: str) -> None:
        self.device = device

    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int) -> int:
        return _work(i, self.device)


def in_child(fn, timeout: float = 60.0):
    """fn() run in a forked child; its result (or exception) comes back through a pipe."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        try:
            try:
                payload = pickle.dumps(("ok", fn()))
            except BaseException as e:
                payload = pickle.dumps(("error", f"{type(e).__name__}: {e}"))
            os.write(write_end, payload)
        finally:
            os._exit(0)
    os.close(write_end)
    chunks = []
    deadline = time.monotonic() + timeout
    try:
        while True:
            ready, _, _ = select.select([read_end], [], [], max(deadline - time.monotonic(), 0))
            if not ready:
                os.kill(pid, signal.SIGKILL)
                pytest.fail(f"the forked child did not finish in {timeout} s (hung)")
            chunk = os.read(read_end, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_end)
        os.waitpid(pid, 0)
    return pickle.loads(b"".join(chunks))


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_dataloader_workers_fork_after_the_parent_ran_ops(device):
    assert _work(5, device) == 5  # the parent's executor, pool (and prefetch) threads exist now
    loader = DataLoader(_Samples(device), batch_size=2, num_workers=2,
                        multiprocessing_context="fork", timeout=120)  # fmt: skip
    start = time.monotonic()
    if device == "gpu" and ndd_device.gpu_backend() == "cuda":
        # real CUDA cannot be used in a forked child: torch's clear error, not a hang
        with pytest.raises(RuntimeError, match="forked subprocess"):
            list(loader)
    else:
        assert [b.tolist() for b in loader] == [[0, 1], [2, 3]]
    assert time.monotonic() - start < 120
    assert _work(6, device) == 6  # and the parent goes on


def test_child_gets_new_threads_and_locks_and_the_parent_is_unchanged():
    before = fork.generation()
    assert in_child(lambda: (fork.generation(), _work(3, "cpu"), _work(4, "cpu"))) == \
        ("ok", (before + 1, 3, 4))  # fmt: skip
    assert fork.generation() == before
    assert _work(7, "cpu") == 7


def test_results_queued_before_the_fork_are_complete_in_the_child():
    source = ndd.as_batch([np.full((200, 200, 3), 9, np.uint8)] * 2, layout="HWC")
    pending = [ndd.flip(source, horizontal=1) for _ in range(4)]  # eager: queued, not read
    assert in_child(lambda: [int(np.asarray(p.select(1))[0, 0, 0]) for p in pending]) == \
        ("ok", [9] * 4)  # fmt: skip


def test_a_result_still_running_at_the_fork_fails_in_the_child(monkeypatch):
    monkeypatch.setattr(fork, "DRAIN_TIMEOUT_S", 0.05)
    GATE.clear()
    try:
        stuck = gated(ndd.batch([np.arange(6, dtype=np.int32)]))  # blocks on the executor
        status, message = in_child(lambda: np.asarray(stuck.select(0)).tolist())
    finally:
        GATE.set()
    assert status == "error"
    assert "RuntimeError" in message
    assert "still being computed when the process forked" in message
    assert np.asarray(stuck.select(0)).tolist() == list(range(6))  # the parent's run completes


def test_reader_continues_in_the_child_where_the_parent_was(tmp_path):
    paths = []
    for i in range(6):
        paths.append(str(tmp_path / f"f{i}.bin"))
        (tmp_path / f"f{i}.bin").write_bytes(bytes([i]) * (i + 1))
    reader = ndd.readers.File(files=paths)

    def labels(batch):
        return [int(np.asarray(t)[0]) for t in batch]

    epoch = reader.next_epoch(batch_size=2)
    assert labels(next(epoch)[1]) == [0, 1]  # the prefetch thread has read ahead by now

    def child():
        rest = [labels(lbl) for _, lbl in epoch]
        return rest, [labels(lbl) for _, lbl in reader.next_epoch(batch_size=2)]

    assert in_child(child) == ("ok", ([[2, 3], [4, 5]], [[0, 1], [2, 3], [4, 5]]))
    assert [labels(lbl) for _, lbl in epoch] == [[2, 3], [4, 5]]  # the parent's stream


def test_every_module_level_lock_is_made_new_in_a_child():
    """`fork.MODULE_LOCKS` lists each `NAME = threading.Lock()/RLock()` of the package."""
    import ast

    root = os.path.dirname(ndd.__file__)
    found = set()
    for folder, _, files in os.walk(root):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            module = os.path.relpath(path, os.path.dirname(root))[:-3].replace(os.sep, ".")
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read())
            for node in tree.body:
                call = node.value if isinstance(node, ast.Assign) else None
                locks = ("threading.Lock", "threading.RLock")
                if isinstance(call, ast.Call) and ast.unparse(call.func) in locks:
                    found.update((module, t.id) for t in node.targets if isinstance(t, ast.Name))
    assert found == set(fork.MODULE_LOCKS)


def test_parallel_torch_ops_work_in_the_child():
    # GNU OpenMP hangs in a child whose parent ran a parallel region; the child runs torch with
    # one thread (as DataLoader workers do)
    big = torch.ones(1 << 22)
    assert int(torch.cat([big, big]).sum()) == 1 << 23
    assert in_child(lambda: (int(torch.cat([big, big]).sum()), torch.get_num_threads())) == \
        ("ok", (1 << 23, 1))  # fmt: skip


def test_a_context_active_in_another_thread_is_free_in_the_child():
    import threading

    ctx = ndd.EvalContext(num_threads=2)
    entered, release = threading.Event(), threading.Event()

    def hold():
        with ctx:
            entered.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert entered.wait(30)

        def child():
            with ctx:
                return _work(8, "cpu")

        assert in_child(child) == ("ok", 8)
    finally:
        release.set()
        holder.join()


def test_readers_make_no_code_streams_in_a_child(monkeypatch):
    """The codec whose code streams a parent's readers make (after its GPU decoder used
    nvImageCodec) is the parent's, on CUDA: a forked child's readers make none."""
    from ndd_triton.decoders import _header_hints

    monkeypatch.setattr(_header_hints, "_stream_maker", None)
    _header_hints.want_code_streams(bytes)
    assert in_child(_header_hints.stream_maker) == ("ok", None)
    assert _header_hints.stream_maker() is bytes
