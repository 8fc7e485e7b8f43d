"""readers.COCO: annotations written by the test (core.md §14.4)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _check import raises_at_call

import ndd_triton as ndd


@pytest.fixture
def coco(tmp_path):
    """Three images (ids 30, 10, 20), categories 5 and 9, a crowd box and a tiny box."""
    images = [{"id": 30, "file_name": "c.jpg", "width": 10, "height": 4},
              {"id": 10, "file_name": "a.jpg", "width": 8, "height": 6},
              {"id": 20, "file_name": "b.jpg", "width": 4, "height": 4}]
    annotations = [
        {"id": 1, "image_id": 10, "category_id": 9, "bbox": [1, 2, 3, 2], "iscrowd": 0,
         "segmentation": [[1, 2, 4, 2, 4, 4]]},
        {"id": 2, "image_id": 10, "category_id": 5, "bbox": [0, 0, 2, 2], "iscrowd": 1,
         "segmentation": {"counts": [0, 2, 4, 2, 40], "size": [6, 8]}},
        {"id": 3, "image_id": 30, "category_id": 5, "bbox": [2, 1, 4, 2], "iscrowd": 0,
         "segmentation": [[2, 1, 6, 1, 6, 3, 2, 3], [0, 0, 1, 0, 1, 1]]},
        {"id": 4, "image_id": 30, "category_id": 9, "bbox": [5, 1, 0.05, 2], "iscrowd": 0,
         "segmentation": [[5, 1, 5, 3, 6, 3]]},
    ]  # fmt: skip
    for im in images:
        (tmp_path / im["file_name"]).write_bytes(f"bytes of {im['file_name']}".encode())
    path = tmp_path / "ann.json"
    path.write_text(json.dumps({"images": images, "annotations": annotations,
                                "categories": [{"id": 9}, {"id": 5}]}))  # fmt: skip
    return {"file_root": str(tmp_path), "annotations_file": str(path)}


def read_epoch(reader):
    return [tuple(np.asarray(t) for t in sample) for sample in reader.next_epoch()]


def test_boxes_labels_and_order(coco):
    samples = read_epoch(ndd.readers.COCO(**coco, image_ids=True))
    assert [bytes(s[0]) for s in samples] == [b"bytes of a.jpg", b"bytes of b.jpg",
                                              b"bytes of c.jpg"]  # fmt: skip
    np.testing.assert_array_equal(samples[0][1], [[1, 2, 3, 2], [0, 0, 2, 2]])
    assert samples[0][1].dtype == np.float32
    assert samples[1][1].shape == (0, 4)
    assert samples[0][2].tolist() == [2, 1]
    assert samples[0][2].dtype == np.int32
    assert samples[2][2].tolist() == [1]  # the 0.05-wide box is under size_threshold
    assert [s[3].tolist() for s in samples] == [[10], [20], [30]]


def test_ltrb_ratio_and_filters(coco):
    reader = ndd.readers.COCO(**coco, ltrb=True, ratio=True, include_iscrowd=False,
                              skip_empty=True, avoid_class_remapping=True, size_threshold=0.01)
    samples = read_epoch(reader)
    assert len(samples) == 2  # b.jpg has no annotations
    np.testing.assert_allclose(samples[0][1], [[1 / 8, 2 / 6, 4 / 8, 4 / 6]])
    assert samples[0][2].tolist() == [9]
    assert samples[1][2].tolist() == [5, 9]


def test_images_argument_selects_and_orders(coco):
    reader = ndd.readers.COCO(**coco, images=["c.jpg", "a.jpg"])
    assert [bytes(s[0]) for s in read_epoch(reader)] == [b"bytes of c.jpg", b"bytes of a.jpg"]
    missing = ndd.readers.COCO(**coco, images=["zzz.jpg"])
    with pytest.raises(RuntimeError, match=r"'images' lists files absent from the annotations: "
                                           r"\['zzz.jpg'\]"):
        missing.next_epoch()


def test_polygon_masks(coco):
    samples = read_epoch(ndd.readers.COCO(**coco, polygon_masks=True, ratio=True))
    polygons, vertices = samples[2][3], samples[2][4]
    assert polygons.tolist() == [[0, 0, 4], [0, 4, 7]]
    np.testing.assert_allclose(vertices[:4], [[0.2, 0.25], [0.6, 0.25], [0.6, 0.75],
                                              [0.2, 0.75]])  # fmt: skip
    assert samples[0][3].tolist() == [[0, 0, 3]]  # the RLE mask of box 1 has no polygon


def test_pixelwise_masks(coco):
    samples = read_epoch(ndd.readers.COCO(**coco, pixelwise_masks=True))
    mask = samples[0][3]
    assert mask.shape == (6, 8, 1)
    assert mask.dtype == np.int32
    expected_rle = np.zeros((6, 8), bool)
    expected_rle[0:2, 0] = True  # counts [0, 2, ...]: 2 pixels down column 0
    expected_rle[0:2, 1] = True  # then 4 off (rest of column 0), then 2 on in column 1
    assert (mask[..., 0][expected_rle] == 1).all()
    assert mask[3, 3, 0] == 2  # inside the triangle (1,2)-(4,2)-(4,4), label of category 9
    assert mask[5, 7, 0] == 0


def test_errors(coco, tmp_path):
    with pytest.raises(TypeError, match="missing required argument 'file_root'"):
        ndd.readers.COCO(annotations_file="a.json")
    with pytest.raises(ValueError, match="'annotations_file' must name the COCO json file"):
        ndd.readers.COCO(file_root=".")
    with pytest.raises(ValueError, match="'polygon_masks' and 'pixelwise_masks' cannot both"):
        ndd.readers.COCO(**coco, polygon_masks=True, pixelwise_masks=True)
    with pytest.raises(NotImplementedError, match="preprocessed annotation files"):
        ndd.readers.COCO(**coco, preprocessed_annotations="dir")
    with pytest.raises(TypeError, match="'size_threshold' expects a number; got str"):
        ndd.readers.COCO(**coco, size_threshold="big")
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(RuntimeError, match="cannot read annotations_file"):
        ndd.readers.COCO(file_root=str(tmp_path), annotations_file=str(broken)).next_epoch()


def test_decoder_errors_name_the_file(coco, tmp_path):
    """The fixture's files are not images: the decoder error names each file."""
    reader = ndd.readers.COCO(**coco)
    (images, *_), = reader.next_epoch(batch_size=3)
    with raises_at_call(RuntimeError, match=r"decoders.image: sample 0 from 'a\.jpg': "
                                           r"unrecognised or corrupt image data"):
        ndd.decoders.image(images)
