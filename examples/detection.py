"""SSD-style detection training data: COCO reader -> decode -> random_bbox_crop -> slice ->
resize -> flip + bb_flip (one coin per sample) -> crop_mirror_normalize -> box_encoder -> torch.

Run: `python examples/detection.py [--device cpu|gpu] [--batch 4] [--size 300] [--epochs 1]`.
Reads the bundled photos with their hand-drawn boxes (`ndd_triton/data/images/
detection_coco.json`), so it runs offline; point `--root`/`--annotations` at a COCO dataset for
real training. See docs/detection.md.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Iterator

import numpy as np
import torch

import ndd_triton as ndd

DATA = os.path.join(os.path.dirname(ndd.__file__), "data", "images")
MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def ssd_anchors(feature_sizes=(19, 10, 5, 3, 1), scales=(0.2, 0.35, 0.5, 0.7, 0.9),
                ratios=(1.0, 2.0, 0.5)) -> np.ndarray:  # fmt: skip
    """Default boxes `[l, t, r, b]` (relative) on a few feature maps, SSD style."""
    out = []
    for size, scale in zip(feature_sizes, scales, strict=True):
        centres = (np.arange(size) + 0.5) / size
        cy, cx = np.meshgrid(centres, centres, indexing="ij")
        for ratio in ratios:
            w, h = scale * np.sqrt(ratio), scale / np.sqrt(ratio)
            out.append(np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], -1).reshape(-1, 4))
    return np.clip(np.concatenate(out), 0, 1).astype(np.float32)


def coco_reader(root: str = DATA, annotations: str | None = None, seed: int = 0,
                images: list[str] | None = None) -> ndd.readers.COCO:  # fmt: skip
    """The COCO reader of the recipe: boxes `ltrb`, relative, images without boxes skipped."""
    annotations = annotations or os.path.join(DATA, "detection_coco.json")
    return ndd.readers.COCO(file_root=root, annotations_file=annotations, ltrb=True, ratio=True,
                            skip_empty=True, random_shuffle=True, seed=seed,
                            images=images)  # fmt: skip


def detection_batches(batch_size: int = 4, size: int = 300, device: str = "cpu",
                      root: str = DATA, annotations: str | None = None, seed: int = 0,
                      anchors: np.ndarray | None = None, images: list[str] | None = None,
                      reader: ndd.readers.COCO | None = None, compile: bool = False,
                      image_slice: bool = False,
                      ) -> Iterator[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:  # fmt: skip
    """One epoch of `(images [N, 3, size, size] float, boxes [N, M, 4], labels [N, M])`.

    `reader`: a `coco_reader` kept across epochs (each call runs its next epoch; it reads the
    next epoch's files ahead, as a training loop would keep it); default: a new one per call
    (`root`, `annotations`, `seed` and `images` then configure it). `compile`: run the epoch
    in compile mode (docs/compile.md: the next batches are computed while the caller works on
    this one; the same tensors as eager mode). `image_slice`: decode only each window
    (`decoders.image_slice`, as DALI's SSD examples do) instead of decoding and slicing; the
    same tensors."""
    anchors = ssd_anchors() if anchors is None else anchors
    reader = coco_reader(root, annotations, seed, images) if reader is None else reader
    rng = ndd.random.RNG(seed=seed)
    for jpegs, boxes, labels in reader.next_epoch(batch_size=batch_size, compile=compile):
        if not image_slice:
            images = ndd.decoders.image(jpegs, device=device)
        # a window that keeps the objects (SSD's IoU thresholds), boxes re-expressed in it
        anchor, shape, boxes, labels = ndd.random_bbox_crop(
            boxes, labels, thresholds=[0.1, 0.3, 0.5, 0.7, 0.9], scaling=[0.3, 1.0],
            aspect_ratio=[0.5, 2.0], bbox_layout="xyXY", num_attempts=1,
            total_num_attempts=50, quiet=True, rng=rng)  # fmt: skip
        if image_slice:  # relative (x, y) window, as random_bbox_crop returns it
            images = ndd.decoders.image_slice(jpegs, anchor, shape, device=device)
        else:
            images = ndd.slice(images, anchor, shape)
        images = ndd.resize(images, size=[size, size])
        coin = ndd.random.coin_flip(probability=0.5, batch_size=jpegs.batch_size, rng=rng)
        images = ndd.flip(images, horizontal=coin)
        boxes = ndd.bb_flip(boxes, ltrb=True, horizontal=coin)  # the same coin per sample
        images = ndd.crop_mirror_normalize(images, mean=MEAN, std=STD, dtype=ndd.float32,
                                           output_layout="CHW")  # fmt: skip
        if device == "gpu":
            boxes, labels = boxes.gpu(), labels.gpu()
        targets, classes = ndd.box_encoder(boxes, labels, anchors=anchors.reshape(-1).tolist(),
                                           criteria=0.5, offset=True, scale=float(size),
                                           stds=[0.1, 0.1, 0.2, 0.2])  # fmt: skip
        yield images.torch(), targets.torch(), classes.torch()


def main() -> None:
    """Print shapes, matched anchors and images/s per epoch."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--size", type=int, default=300)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--root", default=DATA)
    parser.add_argument("--annotations", default=None)
    parser.add_argument("--compile", action="store_true", help="compile mode (docs/compile.md)")
    args = parser.parse_args()
    reader = coco_reader(args.root, args.annotations)
    for epoch in range(args.epochs):
        start, count = time.perf_counter(), 0
        for images, targets, classes in detection_batches(args.batch, args.size, args.device,
                                                          seed=epoch, reader=reader,
                                                          compile=args.compile):  # fmt: skip
            count += images.shape[0]
            matched = (classes > 0).sum(dim=1).tolist()
            print(f"images {tuple(images.shape)} {images.dtype}, targets {tuple(targets.shape)}, "
                  f"labels {tuple(classes.shape)}; matched anchors per image {matched}")
        rate = count / (time.perf_counter() - start)
        print(f"epoch {epoch}: {count} images, {rate:.1f} images/s")


if __name__ == "__main__":
    main()
