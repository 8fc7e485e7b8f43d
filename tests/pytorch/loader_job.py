"""A training-like job over tiny JPEGs for the loader tests (imported, or run as a script).

`python loader_job.py ROOT OUT DEVICE EPOCHS [KILL_AT [RESUME]]` iterates a `Loader` with random
reader shuffling and random augmentations, appends one JSON line per batch to OUT (epoch, file
names, labels, a digest of the augmented pixels) and saves `loader.state_dict()` after every
batch to OUT.state. With KILL_AT it dies (`os._exit`, no cleanup) right after saving the state
of batch KILL_AT; with RESUME it starts from OUT.state instead. Under torchrun each rank writes
OUT.<rank>.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys

import numpy as np


def make_dataset(root: str, count: int = 7) -> list[str]:
    """`count` JPEGs of 11x9..(11+count)x(9+count) pixels with distinct content; labels = index."""
    from PIL import Image

    os.makedirs(root, exist_ok=True)
    names = []
    rng = np.random.default_rng(1234)
    for i in range(count):
        pixels = rng.integers(0, 256, size=(9 + i, 11 + i, 3), dtype=np.uint8)
        name = f"img{i:02d}.jpg"
        Image.fromarray(pixels).save(os.path.join(root, name), quality=95)
        names.append(name)
    return names


def augment(device: str):
    """The per-batch function: decode, random crop, random flip, random brightness, names."""
    import ndd_triton as ndd

    def fn(jpegs, labels):
        n = jpegs.batch_size
        images = ndd.decoders.image(jpegs)
        if device == "gpu":
            images = images.gpu()
        images = ndd.random_resized_crop(images, size=(6, 5))
        images = ndd.flip(images, horizontal=ndd.random.coin_flip(batch_size=n))
        images = ndd.brightness_contrast(
            images, brightness=ndd.random.uniform(range=(0.5, 1.5), batch_size=n))
        names = ndd.get_property(jpegs, key="source_info")
        return {"image": images, "label": labels, "name": names}

    return fn


def build(root: str, pipeline: str, **loader_args):
    """Reader + Loader as the job builds them (`pipeline`: "cpu" or "gpu" ops)."""
    import ndd_triton as ndd
    from ndd_triton.pytorch import Loader

    files = sorted(f for f in os.listdir(root) if f.endswith(".jpg"))
    reader = ndd.readers.File(file_root=root, files=files, labels=list(range(len(files))),
                              random_shuffle=True, initial_fill=4, seed=77)
    args = {"batch_size": 3, "output_names": ("image", "label", "name"), "pad": True,
            "squeeze": ("label",), "seed": 2024, **loader_args}
    return Loader(reader, augment(pipeline), **args)


def build_nodes(root: str, device: str, prefetch: int = 2, seed: int = 2024):
    """The same job as torchdata nodes: Reader -> Map -> Prefetcher -> ToTorch -> Loader."""
    import torchdata.nodes as tn

    import ndd_triton as ndd
    from ndd_triton.pytorch import nodes

    files = sorted(f for f in os.listdir(root) if f.endswith(".jpg"))
    reader = nodes.Reader(ndd.readers.File, batch_size=3, output_names=("jpeg", "label"),
                          file_root=root, files=files, labels=list(range(len(files))),
                          random_shuffle=True, initial_fill=4, seed=77)  # fmt: skip
    fn = augment(device)
    node = nodes.Map(reader, lambda d: fn(d["jpeg"], d["label"]), seed=seed)
    if prefetch:
        node = tn.Prefetcher(node, prefetch_factor=prefetch)
    return tn.Loader(nodes.ToTorch(node, pad=True))


def as_dict(batch) -> dict:
    """A ToTorch tuple (image, label, name) as the loader's dict (labels squeezed)."""
    if isinstance(batch, dict):
        return batch
    image, label, name = batch
    return {"image": image, "label": label.squeeze(-1), "name": name}


def record(epoch: int, batch: dict) -> dict:
    """One batch as JSON: file names, labels and a digest of the pixels."""
    names = ["".join(map(chr, row[row > 0].tolist())).rsplit("/", 1)[-1]
             for row in batch["name"].cpu().numpy()]  # fmt: skip
    pixels = batch["image"].cpu().contiguous().numpy()
    return {"epoch": epoch, "names": names, "labels": batch["label"].cpu().tolist(),
            "pixels": hashlib.sha256(pixels.tobytes()).hexdigest()[:16],
            "shape": list(pixels.shape)}


def run(root: str, out: str, device: str, epochs: int, kill_at: int = -1,
        resume: bool = False) -> None:  # fmt: skip
    """The job; DEVICE "cpu:nodes"/"gpu:nodes" runs the torchdata-nodes version (3 batches
    per epoch)."""
    device, _, kind = device.partition(":")
    loader = build_nodes(root, device) if kind == "nodes" else build(root, device)
    step = 0
    if resume:
        with open(out + ".state") as f:
            saved = json.load(f)
        loader.load_state_dict(saved["loader"])
        step = saved["step"]
    with open(out, "a") as log:
        while step < 3 * epochs:
            for batch in loader:
                log.write(json.dumps(record(step // 3, as_dict(batch))) + "\n")
                log.flush()
                step += 1
                with open(out + ".state.tmp", "w") as f:
                    json.dump({"loader": loader.state_dict(), "step": step}, f)
                os.replace(out + ".state.tmp", out + ".state")
                if step - 1 == kill_at:
                    os._exit(3)


if __name__ == "__main__":
    root, out, device, epochs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    kill_at = int(sys.argv[5]) if len(sys.argv) > 5 else -1
    resume = len(sys.argv) > 6 and sys.argv[6] == "resume"
    run(root, out, device, epochs, kill_at, resume)
