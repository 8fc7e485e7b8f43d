"""A 2-rank DDP job for tests/pytorch/test_pytorch_torchrun.py (run it with torchrun, gloo).

`torchrun --nproc-per-node 2 ddp_job.py ROOT OUT EPOCHS [KILL_AT|-1] [resume]`: every rank
builds the reader *without* sharding arguments (the Loader shards it over the process group,
with pad_last_batch), trains a tiny DDP model, and appends one JSON line per batch to
OUT.<rank> (the batch's labels and a digest of its augmented pixels). After every batch it saves
its loader state to OUT.<rank>.state; with KILL_AT every rank dies after batch KILL_AT.
"""

from __future__ import annotations

import json
import os
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loader_job


def build(root: str, shard: tuple[int, int] | None = None):
    """The rank's loader; `shard=(id, n)` builds the same one without a process group."""
    import ndd_triton as ndd
    from ndd_triton.pytorch import Loader

    files = sorted(f for f in os.listdir(root) if f.endswith(".jpg"))
    extra = {} if shard is None else {"shard_id": shard[0], "num_shards": shard[1],
                                      "pad_last_batch": True}  # fmt: skip
    reader = ndd.readers.File(file_root=root, files=files, labels=list(range(len(files))),
                              random_shuffle=True, initial_fill=3, seed=5, **extra)  # fmt: skip
    rank = shard[0] if shard is not None else dist.get_rank()
    return Loader(reader, loader_job.augment("cpu"), batch_size=2, last_batch_policy="partial",
                  output_names=("image", "label", "name"), pad=True, squeeze="label",
                  seed=100 + rank)  # fmt: skip


def main() -> None:
    root, out, epochs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    kill_at = int(sys.argv[4]) if len(sys.argv) > 4 else -1
    resume = len(sys.argv) > 5 and sys.argv[5] == "resume"
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    loader = build(root)
    meta = loader.reader.get_metadata()
    assert (meta["shard_id"], meta["number_of_shards"], meta["pad_last_batch"]) == (rank, world, 1)
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(6 * 5 * 3, 7))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    path = f"{out}.{rank}"
    step = 0
    if resume:
        with open(path + ".state") as f:
            saved = json.load(f)
        loader.load_state_dict(saved["loader"])
        step = saved["step"]
    counts = torch.tensor([len(loader)])
    dist.all_reduce(counts, op=dist.ReduceOp.MAX)
    assert counts.item() == len(loader), "ranks have different numbers of batches"
    with open(path, "a") as log:
        while step < epochs * len(loader):
            for batch in loader:
                images = batch["image"].flatten(1).float() / 255
                loss = torch.nn.functional.cross_entropy(model(images), batch["label"].long())
                optimizer.zero_grad()
                loss.backward()  # an all-reduce: every rank must reach it for every batch
                optimizer.step()
                log.write(json.dumps(loader_job.record(step // len(loader), batch)) + "\n")
                log.flush()
                step += 1
                with open(path + ".state.tmp", "w") as f:
                    json.dump({"loader": loader.state_dict(), "step": step}, f)
                os.replace(path + ".state.tmp", path + ".state")
                if step - 1 == kill_at:
                    os._exit(3)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
