"""Two processes under torchrun (gloo, CPU): default sharding over the process group, disjoint
shards covering the dataset, equal batch counts (DDP would hang otherwise), exact resumption of
every rank after a simulated kill at a random step."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import ndd_triton as ndd

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ddp_job  # noqa: E402
import loader_job  # noqa: E402


def _torchrun(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(ndd.__file__)),
           "OMP_NUM_THREADS": "1", "GLOO_SOCKET_IFNAME": "lo"}  # fmt: skip
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node",
           "2", os.path.join(HERE, "ddp_job.py"), *args]  # fmt: skip
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)


def test_two_ranks_shard_disjointly_and_resume_exactly(tmp_path):
    root = str(tmp_path / "photos")
    loader_job.make_dataset(root, count=7)
    out = str(tmp_path / "log")
    epochs = 2
    # the uninterrupted reference of every rank, without a process group (explicit shards)
    expected = []
    for rank in range(2):
        loader = ddp_job.build(root, shard=(rank, 2))
        expected.append([loader_job.record(e, b) for e in range(epochs) for b in loader])
    assert len(expected[0]) == len(expected[1]) == 4  # shards of 3 and 4 samples, batch 2
    for epoch in range(epochs):
        labels = [lab for rank in range(2) for r in expected[rank] if r["epoch"] == epoch
                  for lab in r["labels"]]  # fmt: skip
        assert sorted(labels) == list(range(7)), "shards must be disjoint and cover the dataset"

    kill_at = random.Random().randrange(0, 4)
    killed = _torchrun(root, out, str(epochs), str(kill_at))
    assert killed.returncode != 0, killed.stdout + killed.stderr
    resumed = _torchrun(root, out, str(epochs), "-1", "resume")
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    for rank in range(2):
        with open(f"{out}.{rank}") as f:
            got = [json.loads(line) for line in f]
        assert got == expected[rank], f"rank {rank}, killed after step {kill_at}"
