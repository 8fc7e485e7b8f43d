"""Detection training data path on the CPU, images/s: ndd_triton vs DALI 2.4 dynamic mode vs
torchvision v2, same files, same run.

Run: `python perf/bench_detection.py [--copies 8] [--batch 32] [--epochs 5]
[--dali-python /work/dali_venv/bin/python] [--tv-python /work/tv_venv/bin/python]
[--baseline-src /work/main] [--compile] [--image-slice]` (`--baseline-src`: another
ndd_triton checkout in the same rounds, for before/after numbers of a change, in compile mode
with `--compile`; `--compile`: a row of the same recipe in compile mode,
`detection_batches(compile=True)`; `--image-slice`: both ndd_triton and DALI decode each
window with `decoders.image_slice`, as DALI's SSD examples do, instead of decode + slice).

Data: the bundled photos with their hand-drawn boxes (`ndd_triton/data/images/
detection_coco.json`), each annotated image listed `--copies` times (8 images x 8 = 64 per
epoch, 97x65 to 1024x1024 pixels). Each library runs the SSD recipe of examples/detection.py:
COCO boxes (ltrb, relative) -> decode -> random IoU crop -> crop the image -> resize 300x300 ->
random horizontal flip of image and boxes -> normalise to float CHW -> SSD target encoding over
1488 anchors. DALI and ndd_triton write it op by op in dynamic mode (DALI's rows end with
`.evaluate()`: its venv has no torch); torchvision uses `tv_tensors.BoundingBoxes` through
`v2.RandomIoUCrop`, `v2.Resize`, `v2.RandomHorizontalFlip`, `v2.ToDtype`/`v2.Normalize`, decoding
with `torchvision.io.decode_jpeg` and encoding with `torchvision.ops.box_iou` + torch (the
same matching rules, vectorised), on a thread pool of `--threads`. DALI and torchvision run in
their own interpreters (subprocesses that serve one epoch per request), interleaved with
ndd_triton epoch by epoch: after one warm-up epoch each, every round runs one epoch of each
library, `--epochs` rounds. On a machine shared with other work, the load drifts between runs;
interleaving exposes every library to the same drift, and each round's ndd_triton / other
ratio is printed as a range next to the median images/s. The process CPU time per image (all
threads of that library's process) is printed too: it depends much less on the load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(ROOT, "ndd_triton", "data", "images")

# Each subprocess serves epochs on request (one line on stdin -> one JSON line: images, wall
# seconds, process CPU seconds), so the parent can interleave the libraries epoch by epoch.
SERVE = r'''
epoch()
print(json.dumps({"ready": True, "version": VERSION}), flush=True)
for line in sys.stdin:
    w, c = time.perf_counter(), time.process_time()
    n = epoch()
    print(json.dumps({"n": n, "wall": time.perf_counter() - w, "cpu": time.process_time() - c}),
          flush=True)
'''

# DALI dynamic mode: the recipe of examples/detection.py, op for op (no torch in DALI's venv)
DALI_CODE = r'''
VERSION = 'DALI'
import json, sys, time, statistics
import numpy as np
import nvidia.dali.experimental.dynamic as ndd
cfg = json.loads(sys.argv[1])
ndd.set_num_threads(cfg["threads"]) if hasattr(ndd, "set_num_threads") else None
anchors = np.load(cfg["anchors"]).reshape(-1).tolist()
MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]; STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]
reader = ndd.readers.COCO(file_root=cfg["root"], annotations_file=cfg["ann"], ltrb=True, ratio=True,
                          skip_empty=True, random_shuffle=True, seed=0)
rng = ndd.random.RNG(seed=0)
def epoch():
    n = 0
    for jpegs, boxes, labels in reader.next_epoch(batch_size=cfg["batch"]):
        if not cfg["image_slice"]:
            images = ndd.decoders.image(jpegs)
        anchor, shape, boxes, labels = ndd.random_bbox_crop(boxes, labels, thresholds=[0.1, 0.3, 0.5, 0.7, 0.9],
            scaling=[0.3, 1.0], aspect_ratio=[0.5, 2.0], bbox_layout="xyXY", num_attempts=1,
            total_num_attempts=50, quiet=True, rng=rng)
        if cfg["image_slice"]:
            images = ndd.decoders.image_slice(jpegs, anchor, shape)
        else:
            images = ndd.slice(images, anchor, shape)
        images = ndd.resize(images, size=[300, 300])
        coin = ndd.random.coin_flip(probability=0.5, batch_size=jpegs.batch_size, rng=rng)
        images = ndd.flip(images, horizontal=coin)
        boxes = ndd.bb_flip(boxes, ltrb=True, horizontal=coin)
        images = ndd.crop_mirror_normalize(images, mean=MEAN, std=STD, dtype=ndd.float32, output_layout="CHW")
        targets, classes = ndd.box_encoder(boxes, labels, anchors=anchors, criteria=0.5, offset=True,
                                           scale=300.0, stds=[0.1, 0.1, 0.2, 0.2])
        images.evaluate(); targets.evaluate(); classes.evaluate()
        n += jpegs.batch_size
    return n
''' + SERVE

# torchvision v2 with tv_tensors.BoundingBoxes, on a thread pool
TV_CODE = r'''
VERSION = None
import json, sys, time, statistics
from concurrent.futures import ThreadPoolExecutor
import numpy as np, torch, torchvision
from torchvision import tv_tensors
from torchvision.transforms import v2
from torchvision.ops import box_iou
cfg = json.loads(sys.argv[1])
torch.set_num_threads(1)
anchors = torch.from_numpy(np.load(cfg["anchors"]))
with open(cfg["ann"]) as f:
    data = json.load(f)
cats = sorted(c["id"] for c in data["categories"])
remap = {c: i + 1 for i, c in enumerate(cats)}
items = []
for im in data["images"]:
    anns = [a for a in data["annotations"] if a["image_id"] == im["id"]]
    if not anns:
        continue
    boxes = torch.tensor([[a["bbox"][0], a["bbox"][1], a["bbox"][0] + a["bbox"][2], a["bbox"][1] + a["bbox"][3]] for a in anns], dtype=torch.float32)
    labels = torch.tensor([remap[a["category_id"]] for a in anns], dtype=torch.int64)
    items.append((cfg["root"] + "/" + im["file_name"], boxes, labels))
transform = v2.Compose([v2.RandomIoUCrop(min_scale=0.3, max_scale=1.0, min_aspect_ratio=0.5, max_aspect_ratio=2.0,
                                         sampler_options=[0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0], trials=50),
                        v2.SanitizeBoundingBoxes(),
                        v2.Resize((300, 300), antialias=True), v2.RandomHorizontalFlip(0.5),
                        v2.ToDtype(torch.float32, scale=False),
                        v2.Normalize(mean=[0.485 * 255, 0.456 * 255, 0.406 * 255], std=[0.229 * 255, 0.224 * 255, 0.225 * 255])])
def encode(boxes, labels):
    rel = boxes / 300.0
    iou = box_iou(rel, anchors) if len(rel) else torch.zeros((0, len(anchors)))
    m = len(anchors)
    match = torch.full((m,), -1, dtype=torch.int64)
    if len(rel):
        best_iou, best_box = iou.max(0)
        match = torch.where(best_iou > 0.5, best_box, match)
        match[iou.argmax(1)] = torch.arange(len(rel))
    hit = match >= 0
    src = torch.where(hit[:, None], rel[match.clamp(min=0)] if len(rel) else anchors, anchors)
    cxcy = (src[:, :2] + src[:, 2:]) / 2; wh = src[:, 2:] - src[:, :2]
    acxcy = (anchors[:, :2] + anchors[:, 2:]) / 2; awh = anchors[:, 2:] - anchors[:, :2]
    t = torch.cat([(cxcy - acxcy) / awh / 0.1, torch.log(wh / awh) / 0.2], 1)
    cls = torch.where(hit, labels[match.clamp(min=0)] if len(rel) else torch.zeros(m, dtype=torch.int64), 0)
    return torch.where(hit[:, None], t, 0.0), cls
def one(item):
    path, boxes, labels = item
    img = torchvision.io.decode_jpeg(torchvision.io.read_file(path), mode=torchvision.io.ImageReadMode.RGB)
    bb = tv_tensors.BoundingBoxes(boxes, format="XYXY", canvas_size=img.shape[-2:])
    img, target = transform(img, {"boxes": bb, "labels": labels})
    t, c = encode(target["boxes"], target["labels"])
    return img, t, c
VERSION = torchvision.__version__
pool = ThreadPoolExecutor(cfg["threads"])
g = torch.Generator().manual_seed(0)
def epoch():
    order = torch.randperm(len(items), generator=g).tolist()
    n = 0
    for s in range(0, len(order), cfg["batch"]):
        chunk = [items[i] for i in order[s:s + cfg["batch"]]]
        out = list(pool.map(one, chunk))
        torch.stack([o[0] for o in out]); torch.stack([o[1] for o in out]); torch.stack([o[2] for o in out])
        n += len(chunk)
    return n
''' + SERVE


# Another ndd_triton checkout (`--baseline-src`, e.g. the main branch) in its own interpreter:
# before/after numbers of a change in the same interleaved rounds as DALI and this checkout.
NDD_CODE = r'''
VERSION = 'ndd_triton'
import json, os, sys, time
cfg = json.loads(sys.argv[1])
sys.path[:0] = [cfg["src"], os.path.join(cfg["src"], "examples")]
import numpy as np
import ndd_triton as ndd
from detection import coco_reader, detection_batches
ndd.set_num_threads(cfg["threads"])
anchors = np.load(cfg["anchors"])
reader = coco_reader(cfg["root"], cfg["ann"], seed=0)
seed = [0]
def epoch():
    n = 0
    for images, _, _ in detection_batches(cfg["batch"], 300, "cpu", seed=seed[0], anchors=anchors,
                                          reader=reader, compile=cfg["compile"],
                                          **({"image_slice": True} if cfg["image_slice"] else {})):
        n += images.shape[0]
    seed[0] += 1
    return n
''' + SERVE


def annotations(copies: int, path: str) -> int:
    """The bundled annotations with every annotated image listed `copies` times."""
    with open(os.path.join(DATA, "detection_coco.json")) as f:
        data = json.load(f)
    annotated = {a["image_id"] for a in data["annotations"]}
    images, anns = [], []
    for c in range(copies):
        for im in data["images"]:
            if im["id"] not in annotated:
                continue
            new_id = len(images) + 1
            images.append({**im, "id": new_id})
            anns += [{**a, "id": len(anns) + 1, "image_id": new_id}
                     for a in data["annotations"] if a["image_id"] == im["id"]]
    with open(path, "w") as f:
        json.dump({**data, "images": images, "annotations": anns}, f)
    return len(images)


class Ndd:
    """examples/detection.py in this process, one epoch per `epoch()` (a new seed each)."""

    def __init__(self, cfg: dict, compile_: bool = False) -> None:
        sys.path[:0] = [ROOT, os.path.join(ROOT, "examples")]
        import numpy as np

        import ndd_triton as ndd

        from detection import coco_reader

        ndd.set_num_threads(cfg["threads"])
        self.cfg, self.anchors, self.seed = cfg, np.load(cfg["anchors"]), 0
        self.compile = compile_
        # one reader for all epochs, as DALI's code below keeps its reader
        self.reader = coco_reader(cfg["root"], cfg["ann"], seed=0)
        self.epoch()

    def epoch(self) -> dict:
        from detection import detection_batches

        cfg, n = self.cfg, 0
        wall, cpu = time.perf_counter(), time.process_time()
        for images, _, _ in detection_batches(cfg["batch"], 300, "cpu", seed=self.seed,
                                              anchors=self.anchors, reader=self.reader,
                                              compile=self.compile,
                                              image_slice=cfg["image_slice"]):  # fmt: skip
            n += images.shape[0]
        self.seed += 1
        return {"n": n, "wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}


class Sub:
    """A library in its own interpreter, serving one epoch per request (`SERVE`)."""

    def __init__(self, python: str, code: str, cfg: dict) -> None:
        self.proc = subprocess.Popen([python, "-c", code, json.dumps(cfg)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)  # fmt: skip
        self.version = self._read()["version"]

    def _read(self) -> dict:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("{"):
                return json.loads(line)
        raise RuntimeError(f"subprocess ended (status {self.proc.wait()})")

    def epoch(self) -> dict:
        assert self.proc.stdin is not None
        self.proc.stdin.write("epoch\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=8)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--dali-python", default="/work/dali_venv/bin/python")
    parser.add_argument("--tv-python", default="/work/tv_venv/bin/python")
    parser.add_argument("--only", default="ndd,dali,tv")
    parser.add_argument("--compile", action="store_true",
                        help="also run the recipe in compile mode (its own reader), same rounds")
    parser.add_argument("--baseline-src", default=None, metavar="DIR",
                        help="also run the ndd_triton checkout in DIR (e.g. the main branch), in "
                             "a subprocess of this interpreter, in the same rounds")  # fmt: skip
    parser.add_argument("--image-slice", action="store_true",
                        help="ndd_triton and DALI decode each window with decoders.image_slice "
                             "(DALI's SSD examples) instead of decoders.image + slice")  # fmt: skip
    args = parser.parse_args()
    sys.path[:0] = [ROOT, os.path.join(ROOT, "examples")]
    import numpy as np
    from detection import ssd_anchors

    with tempfile.TemporaryDirectory() as tmp:
        ann = os.path.join(tmp, "coco.json")
        count = annotations(args.copies, ann)
        anchors = os.path.join(tmp, "anchors.npy")
        np.save(anchors, ssd_anchors())
        cfg = {"root": DATA, "ann": ann, "anchors": anchors, "batch": args.batch,
               "threads": args.threads, "image_slice": args.image_slice}
        libs: dict[str, Any] = {}
        if "ndd" in args.only:
            libs["ndd_triton (dynamic mode, CPU)"] = Ndd(cfg)
        if args.compile:
            libs["ndd_triton compile=True (CPU)"] = Ndd(cfg, compile_=True)
        if args.baseline_src:  # in compile mode with --compile
            mode = " compile=True" if args.compile else ""
            libs[f"ndd_triton{mode} at {args.baseline_src}"] = Sub(
                sys.executable, NDD_CODE, {**cfg, "src": os.path.abspath(args.baseline_src),
                                           "compile": args.compile})  # fmt: skip
        for key, python, code in (("dali", args.dali_python, DALI_CODE),
                                  ("tv", args.tv_python, TV_CODE)):  # fmt: skip
            if key in args.only and python and os.path.exists(python):
                sub = Sub(python, code, cfg)
                name = "DALI 2.4 dynamic mode (CPU)" if key == "dali" else \
                    f"torchvision v2 ({sub.version}, {args.threads} threads)"  # fmt: skip
                libs[name] = sub
        runs: dict[str, list[dict]] = {name: [] for name in libs}
        load = os.getloadavg()[0]
        for _ in range(args.epochs):  # interleaved: each round runs every library once
            for name, lib in libs.items():
                runs[name].append(lib.epoch())
        for lib in libs.values():
            if isinstance(lib, Sub):
                lib.close()
    print(f"detection recipe, {count} images/epoch, batch {args.batch}, {args.threads} threads, "
          f"{os.cpu_count()} CPUs, {args.epochs} interleaved rounds, load {load:.1f} -> "
          f"{os.getloadavg()[0]:.1f}")
    print("| pipeline | images/s (median) | CPU ms/image (median) | ndd_triton / this, "
          "per round (min-max) |\n|---|---|---|---|")
    base = runs.get("ndd_triton (dynamic mode, CPU)")
    for name, rounds in runs.items():
        rate = statistics.median(r["n"] / r["wall"] for r in rounds)
        cpu = statistics.median(r["cpu"] * 1e3 / r["n"] for r in rounds)
        ratio = "-"
        if base is not None:
            per = [b["n"] / b["wall"] / (r["n"] / r["wall"])
                   for b, r in zip(base, rounds, strict=True)]  # fmt: skip
            ratio = f"{statistics.median(per):.2f}x ({min(per):.2f}-{max(per):.2f})"
        print(f"| {name} | {rate:.1f} | {cpu:.2f} | {ratio} |")


if __name__ == "__main__":
    main()
