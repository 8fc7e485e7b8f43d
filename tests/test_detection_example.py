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


@pytest.mark.parametrize("image_slice", [False, True], ids=["decode+slice", "image_slice"])
def test_detection_recipe_compiled_is_eager_over_epochs(image_slice):
    """`compile=True` over three epochs of one reader (each epoch makes its RNG anew, so each
    later epoch re-traces at random_bbox_crop): eager mode's tensors, no fallback warning; and
    `image_slice=True` (each window decoded by decoders.image_slice) gives the same tensors."""
    import warnings

    import ndd_triton as ndd
    from ndd_triton.runtime.compiled import CompileFallbackWarning

    example = _example()
    anchors = example.ssd_anchors(feature_sizes=(3, 1), scales=(0.3, 0.8), ratios=(1.0, 2.0))
    small = ["chelsea_small_97x65.jpg", "ihc_333x333.jpg", "chelsea_451x300.jpg"]

    def epochs(compile_, image_slice=False):
        ndd.random.set_seed(2)
        reader = example.coco_reader(images=small)
        return [[tuple(t.clone() for t in batch) for batch in example.detection_batches(
            batch_size=2, size=24, seed=epoch, anchors=anchors, reader=reader, compile=compile_,
            image_slice=image_slice)] for epoch in range(3)]  # fmt: skip

    eager = epochs(False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        others = [epochs(True, image_slice)] + ([epochs(False, True)] if image_slice else [])
    for other in others:
        assert len(eager) == len(other) == 3
        for e, c in zip(eager, other, strict=True):
            assert len(e) == len(c) == 2
            for be, bc in zip(e, c, strict=True):
                for te, tc in zip(be, bc, strict=True):
                    assert torch.equal(te, tc)


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
