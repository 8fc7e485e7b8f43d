"""`readers.COCO`: images with their COCO boxes, labels, ids and masks (DALI `readers.COCO`).

Outputs, in order: `images` (u8 file bytes), `bboxes` (f32 `(K, 4)`, `[x, y, w, h]` pixels;
`[l, t, r, b]` with `ltrb`; divided by the image size with `ratio`), `labels` (i32 `(K,)`,
category ids remapped to `1..C` in id order unless `avoid_class_remapping`), then
`polygons` (i32 `(P, 3)`: box index, first vertex, end vertex) and `vertices` (f32 `(V, 2)`)
with `polygon_masks`, or `masks` (i32 `(H, W, 1)`, each pixel the label of the last object
covering it) with `pixelwise_masks`, and finally `image_ids` (i32 `(1,)`) with `image_ids`.
Images are read in image-id order (or in the order of `images`). Annotations whose box is
smaller than `size_threshold` pixels in width or height are dropped; `include_iscrowd=False`
drops crowd annotations; `skip_empty` drops images left without annotations.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from ndd_triton.core import source_tags
from ndd_triton.core.storage import BatchStorage
from ndd_triton.readers import _args
from ndd_triton.readers._base import Reader, pack_arrays
from ndd_triton.readers._file import read_bytes_batch, scalar_batch


@dataclass(slots=True)
class ImageEntry:
    """One image and its kept annotations."""

    path: str
    file_name: str
    image_id: int
    width: int
    height: int
    boxes: list[list[float]] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    segmentations: list[Any] = field(default_factory=list)


class CocoSource:
    """Parses the annotation file once, then loads images and per-image arrays."""

    def __init__(self, args: dict[str, Any]) -> None:
        self._args = args
        self._entries: list[ImageEntry] = []
        extra = 2 if args["polygon_masks"] else (1 if args["pixelwise_masks"] else 0)
        self.layouts: tuple[str | None, ...] = (None,) * (3 + extra + int(args["image_ids"]))
        if args["pixelwise_masks"]:
            self.layouts = (*self.layouts[:3], "HWC", *self.layouts[4:])

    def index(self) -> int:
        """Parse the annotations; RuntimeError when the file is missing or malformed."""
        a = self._args
        try:
            with open(a["annotations_file"], encoding="utf-8") as f:
                data = json.load(f)
            categories = sorted(int(c["id"]) for c in data.get("categories", []))
            images = {int(im["id"]): im for im in data["images"]}
            annotations = data.get("annotations", [])
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise RuntimeError(f"COCO: cannot read annotations_file {a['annotations_file']!r}: "
                               f"{e}") from e
        remap = {cid: i + 1 for i, cid in enumerate(categories)}
        entries = {image_id: ImageEntry(os.path.join(a["file_root"], im["file_name"]),
                                        im["file_name"], image_id, int(im["width"]),
                                        int(im["height"]))
                   for image_id, im in images.items()}  # fmt: skip
        for ann in annotations:
            self._add_annotation(entries, remap, ann)
        order = sorted(entries)
        if a["images"] is not None:
            by_name = {e.file_name: image_id for image_id, e in entries.items()}
            missing = [n for n in a["images"] if n not in by_name]
            if missing:
                raise RuntimeError(f"COCO: 'images' lists files absent from the annotations: "
                                   f"{missing[:5]}")
            order = [by_name[n] for n in a["images"]]
        chosen = [entries[i] for i in order]
        if a["skip_empty"]:
            chosen = [e for e in chosen if e.boxes]
        self._entries = chosen
        return len(chosen)

    def _add_annotation(self, entries: dict[int, ImageEntry], remap: dict[int, int],
                        ann: dict[str, Any]) -> None:  # fmt: skip
        a = self._args
        entry = entries.get(int(ann["image_id"]))
        if entry is None or (ann.get("iscrowd", 0) and not a["include_iscrowd"]):
            return
        x, y, w, h = (float(v) for v in ann["bbox"])
        if w < a["size_threshold"] or h < a["size_threshold"]:
            return
        category = int(ann["category_id"])
        if not a["avoid_class_remapping"] and category not in remap:
            raise RuntimeError(f"COCO: annotation {ann.get('id')} uses category {category}, "
                               "which is not listed in 'categories'")
        entry.boxes.append([x, y, w, h])
        entry.labels.append(category if a["avoid_class_remapping"] else remap[category])
        entry.segmentations.append(ann.get("segmentation"))

    def load(self, indices: np.ndarray) -> tuple[list[BatchStorage], list[str]]:
        """Image bytes and annotation arrays of the samples `indices`."""
        a = self._args
        chosen = [self._entries[i] for i in indices.tolist()]
        images = read_bytes_batch([e.path for e in chosen])
        sources = [e.file_name for e in chosen]
        source_tags.tag_storage(images, sources)
        outputs = [images, pack_arrays([self._boxes(e) for e in chosen], "COCO"),
                   pack_arrays([np.asarray(e.labels, np.int32) for e in chosen], "COCO")]
        if a["polygon_masks"]:
            pairs = [_polygons(e, a["ratio"]) for e in chosen]
            outputs += [pack_arrays([p for p, _ in pairs], "COCO"),
                        pack_arrays([v for _, v in pairs], "COCO")]
        elif a["pixelwise_masks"]:
            outputs.append(pack_arrays([_pixel_mask(e) for e in chosen], "COCO"))
        if a["image_ids"]:
            outputs.append(scalar_batch(np.array([e.image_id for e in chosen]), torch.int32))
        return outputs, sources

    def _boxes(self, entry: ImageEntry) -> np.ndarray:
        boxes = np.asarray(entry.boxes, np.float32).reshape(-1, 4)
        if self._args["ltrb"]:
            boxes[:, 2:] += boxes[:, :2]
        if self._args["ratio"]:
            boxes /= np.array([entry.width, entry.height] * 2, np.float32)
        return boxes


def _polygons(entry: ImageEntry, ratio: bool) -> tuple[np.ndarray, np.ndarray]:
    """(polygons (P, 3): box index, first vertex, end vertex; vertices (V, 2))."""
    rows: list[list[int]] = []
    points: list[np.ndarray] = []
    count = 0
    for box_index, segmentation in enumerate(entry.segmentations):
        if not isinstance(segmentation, list):
            continue  # RLE masks have no polygons
        for polygon in segmentation:
            xy = np.asarray(polygon, np.float32).reshape(-1, 2)
            rows.append([box_index, count, count + len(xy)])
            points.append(xy)
            count += len(xy)
    vertices = np.concatenate(points) if points else np.zeros((0, 2), np.float32)
    if ratio:
        vertices = vertices / np.array([entry.width, entry.height], np.float32)
    return np.asarray(rows, np.int32).reshape(-1, 3), vertices.astype(np.float32)


def _pixel_mask(entry: ImageEntry) -> np.ndarray:
    """(H, W, 1) i32: each pixel holds the label of the last object drawn over it."""
    from PIL import Image, ImageDraw

    mask = np.zeros((entry.height, entry.width), np.int32)
    for label, segmentation in zip(entry.labels, entry.segmentations, strict=True):
        if isinstance(segmentation, list):
            canvas = Image.new("L", (entry.width, entry.height), 0)
            draw = ImageDraw.Draw(canvas)
            for polygon in segmentation:
                draw.polygon([float(v) for v in polygon], fill=1, outline=1)
            covered = np.asarray(canvas, dtype=bool)
        elif isinstance(segmentation, dict) and isinstance(segmentation.get("counts"), list):
            runs = np.repeat(np.arange(len(segmentation["counts"])) % 2,
                             segmentation["counts"]).astype(bool)  # fmt: skip
            h, w = segmentation["size"]
            covered = np.zeros(h * w, bool)
            covered[: len(runs)] = runs[: h * w]
            covered = covered.reshape(w, h).T  # COCO RLE runs go down the columns
        else:
            raise RuntimeError(f"COCO: image {entry.file_name!r}: compressed RLE masks are not "
                               "supported by pixelwise_masks; use polygon or list-count masks")
        mask[covered] = label
    return mask[..., None]


class COCO(Reader):
    """Reads COCO-format datasets; see the module docstring for outputs and filters."""

    _SPECIFIC = {"file_root": None, "annotations_file": "", "ltrb": False, "ratio": False,
                 "skip_empty": False, "size_threshold": 0.1, "include_iscrowd": True,
                 "avoid_class_remapping": False, "image_ids": False, "images": None,
                 "polygon_masks": False, "pixelwise_masks": False,
                 "preprocessed_annotations": "", "save_preprocessed_annotations": False,
                 "save_preprocessed_annotations_dir": ""}  # fmt: skip

    def _make_source(self, args: dict[str, Any]) -> CocoSource:
        for key in ("ltrb", "ratio", "skip_empty", "include_iscrowd", "avoid_class_remapping",
                    "image_ids", "polygon_masks", "pixelwise_masks",
                    "save_preprocessed_annotations"):
            args[key] = _args.check_bool("COCO", key, args[key])
        if args["file_root"] is None:
            raise TypeError("COCO: missing required argument 'file_root'")
        args["file_root"] = _args.string_list("COCO", "file_root", args["file_root"])[0]
        args["annotations_file"] = _args.string_list("COCO", "annotations_file",
                                                     args["annotations_file"])[0]  # fmt: skip
        if not args["annotations_file"]:
            raise ValueError("COCO: argument 'annotations_file' must name the COCO json file")
        if args["images"] is not None:
            args["images"] = _args.string_list("COCO", "images", args["images"])
        if args["polygon_masks"] and args["pixelwise_masks"]:
            raise ValueError("COCO: 'polygon_masks' and 'pixelwise_masks' cannot both be True")
        threshold = args["size_threshold"]
        if isinstance(threshold, bool) or not isinstance(threshold, int | float):
            raise TypeError(f"COCO: argument 'size_threshold' expects a number; got "
                            f"{type(threshold).__name__}")
        if args["preprocessed_annotations"] or args["save_preprocessed_annotations"]:
            raise NotImplementedError("COCO: preprocessed annotation files are not supported; "
                                      "pass annotations_file")
        return CocoSource(args)
