"""The detection example (examples/detection.py, docs/detection.md) runs end to end on the
cpu and on the emulated gpu, and its targets agree with the reference encoder."""

import importlib.util
import os

import numpy as np
import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _example():
    spec = importlib.util.spec_from_file_location("detection_example",
                                                  os.path.join(ROOT, "examples", "detection.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_detection_recipe_end_to_end(device):
    example = _example()
    anchors = example.ssd_anchors(feature_sizes=(3, 1), scales=(0.3, 0.8), ratios=(1.0, 2.0))
    small = ["chelsea_small_97x65.jpg", "ihc_333x333.jpg", "chelsea_451x300.jpg"]
    batches = list(example.detection_batches(batch_size=2, size=24, device=device,
                                             anchors=anchors, images=small))  # fmt: skip
    assert batches and all(b[0].shape[0] in (1, 2) for b in batches)
    for images, targets, classes in batches:
        assert images.shape[1:] == (3, 24, 24) and images.dtype == torch.float32
        assert targets.shape[1:] == (len(anchors), 4) and classes.shape[1:] == (len(anchors),)
        assert (classes > 0).any(dim=1).all()  # every image keeps a box, matched to an anchor
        assert images.device.type == ("cpu" if device == "cpu" else images.device.type)
        assert np.isfinite(targets.cpu().numpy()[classes.cpu().numpy() > 0]).all()


def test_bundled_annotations_are_valid_coco():
    import json

    with open(os.path.join(ROOT, "ndd_triton", "data", "images", "detection_coco.json")) as f:
        data = json.load(f)
    sizes = {im["id"]: (im["width"], im["height"]) for im in data["images"]}
    assert len(data["annotations"]) >= 25 and len(data["categories"]) >= 10
    for ann in data["annotations"]:
        x, y, w, h = ann["bbox"]
        width, height = sizes[ann["image_id"]]
        assert w > 0 and h > 0 and x >= 0 and y >= 0 and x + w <= width and y + h <= height
