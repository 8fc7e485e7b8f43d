"""The README demo: the seeds' image-classification pipeline on the bundled sample photos.

File reader -> decoders.image -> resize(224x224) -> crop_mirror_normalize -> torch, exactly as a
DALI dynamic-mode user writes it, with a progress bar, images/s, a contact sheet of the
augmented samples (mirror drawn per sample from an RNG) and a labelled grid of a few photos next
to their random_resized_crop / flip / color_twist / rotate results (what the augmentations do).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

import ndd_triton as ndd

IMAGES = Path(__file__).parent / "data" / "images"
MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]
# Colour photos for the augmentation grid (grey textures would hide the colour op).
AUGMENT_PHOTOS = ("astronaut_512x512.jpg", "chelsea_451x300.jpg", "coffee_600x400.jpg")
AUGMENT_COLUMNS = ("original", "random_resized_crop", "flip", "color_twist", "rotate")
LABEL_H = 14  # label strip under each tile (PIL's default bitmap font is ~11 px high)
GAP = 4


def make_dataset(root: Path) -> Path:
    """Lay the bundled JPEGs out as `root/<class>/<file>` (grey textures vs colour photos)."""
    for path in sorted(IMAGES.glob("*.jpg")):
        label = "textures" if "gray" in path.name else "photos"
        (root / label).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, root / label / path.name)
    return root


def _progress(done: int, total: int, start: float) -> None:
    width = 30
    filled = int(width * done / max(total, 1))
    rate = done / max(time.perf_counter() - start, 1e-9)
    sys.stdout.write(
        f"\r  [{'#' * filled}{'.' * (width - filled)}] {done}/{total} images {rate:7.1f} img/s"
    )
    sys.stdout.flush()


def pipeline(jpegs: ndd.Batch, device: str, size: int, rng: ndd.random.RNG) -> ndd.Batch:
    """The seeds' preprocessing: decode, resize, random mirror + normalise to float CHW."""
    images = ndd.decoders.image(jpegs, device=device)
    images = ndd.resize(images, size=[size, size])
    mirror = ndd.random.coin_flip(batch_size=jpegs.batch_size, rng=rng)
    return ndd.crop_mirror_normalize(images, mean=MEAN, std=STD, mirror=mirror)


def run(
    device: str = "cpu",
    epochs: int = 3,
    batch_size: int = 4,
    out_dir: str = "demo_out",
    seed: int = 42,
    size: int = 224,
    data_root: str | None = None,
    show_progress: bool = True,
    compile: bool = False,
    tile: int = 128,
) -> dict[str, Any]:
    """Run the pipeline; returns throughput, the last batch and the two pictures' paths.

    `compile=True` runs each epoch in compile mode (docs/compile.md): the same images, labels
    and random mirrors, with later batches computed ahead of the loop body. `tile` is the side
    of the augmentation grid's tiles (drawn from the first 3 files of `data_root` when given)."""
    rng = ndd.random.RNG(seed=seed)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(data_root) if data_root else make_dataset(Path(tmp))
        reader = ndd.readers.File(file_root=str(root), random_shuffle=True, seed=seed)
        epoch_size = reader.get_metadata()["epoch_size"]
        total = -(-epoch_size // batch_size) * batch_size * epochs
        shown: list[np.ndarray] = []
        labels_seen: list[int] = []
        done = 0
        start = time.perf_counter()
        batch = None
        for _ in range(epochs):
            for jpegs, labels in reader.next_epoch(batch_size=batch_size, compile=compile):
                images = pipeline(jpegs, device, size, rng)
                batch = images.torch()  # (N, 3, size, size) float32, what train_step gets
                lab = labels.torch()
                done += batch.shape[0]
                if show_progress:
                    _progress(done, total, start)
                if len(shown) < 16:
                    shown.extend(batch.cpu().numpy()[: 16 - len(shown)])
                    labels_seen.extend(int(v) for v in lab.reshape(-1)[:16])
        elapsed = time.perf_counter() - start
        if show_progress:
            sys.stdout.write("\n")
        if data_root:
            photos = sorted(p for p in Path(data_root).rglob("*") if p.is_file())[:3]
        else:
            photos = [IMAGES / name for name in AUGMENT_PHOTOS]
        tiles = augmentation_tiles(photos, device, tile, seed)
    os.makedirs(out_dir, exist_ok=True)
    sheet = os.path.join(out_dir, "contact_sheet.png")
    save_contact_sheet(shown, sheet)
    augmentations = os.path.join(out_dir, "augmentations.png")
    save_augmentation_grid(tiles, augmentations)
    return {
        "images": done,
        "seconds": elapsed,
        "images_per_s": done / elapsed,
        "sheet": sheet,
        "augmentations": augmentations,
        "device": device,
        "shape": tuple(batch.shape),
        "dtype": str(batch.dtype),
        "last_batch": batch,
        "labels": labels_seen,
    }


def augmentation_tiles(
    photos: list[Path], device: str, tile: int, seed: int
) -> dict[str, np.ndarray]:
    """Each photo (centre square, resized to `tile`) and the augmentations applied to it.

    Every result is computed by ndd ops on `device`, with the random parameters drawn from an
    RNG of its own (the training pipeline's RNG stream is left alone). Returns one
    (photos, tile, tile, 3) uint8 array per column of `AUGMENT_COLUMNS`."""
    rng = ndd.random.RNG(seed=seed + 1)
    n = len(photos)
    jpegs = ndd.batch([np.fromfile(path, np.uint8) for path in photos])
    images = ndd.decoders.image(jpegs, device=device)
    original = ndd.crop(ndd.resize(images, resize_shorter=tile), crop=(tile, tile))

    def uniform(lo: float, hi: float) -> ndd.Batch:
        return ndd.random.uniform(batch_size=n, range=[lo, hi], rng=rng)

    angles = ndd.random.uniform(batch_size=n, values=[-35.0, -25.0, 25.0, 35.0], rng=rng)
    results = {
        "original": original,
        # from the full decoded photo, as in training: a random area/aspect window, resized
        "random_resized_crop": ndd.random_resized_crop(images, size=[tile, tile], rng=rng),
        "flip": ndd.flip(original, horizontal=1),
        "color_twist": ndd.color_twist(original, hue=uniform(-90, 90), saturation=uniform(0.3, 1.8),
                                       brightness=uniform(0.8, 1.3), contrast=uniform(0.7, 1.4)),
        # a visible angle, either way
        "rotate": ndd.rotate(original, angle=angles, keep_size=True),
    }  # fmt: skip
    return {name: results[name].torch().cpu().numpy() for name in AUGMENT_COLUMNS}


def augmentation_grid_size(rows: int, tile: int) -> tuple[int, int]:
    """(width, height) of the grid: one row per photo, one labelled column per op."""
    columns = len(AUGMENT_COLUMNS)
    return GAP + columns * (tile + GAP), GAP + rows * (tile + LABEL_H + GAP)


def tile_origin(row: int, column: int, tile: int) -> tuple[int, int]:
    """(x, y) of a tile's top-left pixel in the grid (its label sits right under it)."""
    return GAP + column * (tile + GAP), GAP + row * (tile + LABEL_H + GAP)


def save_augmentation_grid(tiles: dict[str, np.ndarray], path: str) -> None:
    """Write the photos x ops grid as a PNG, each tile labelled with its op's name."""
    from PIL import Image, ImageDraw

    rows, tile = tiles["original"].shape[:2]
    grid = Image.new("RGB", augmentation_grid_size(rows, tile), (255, 255, 255))
    draw = ImageDraw.Draw(grid)
    for column, name in enumerate(AUGMENT_COLUMNS):
        for row in range(rows):
            x, y = tile_origin(row, column, tile)
            grid.paste(Image.fromarray(np.ascontiguousarray(tiles[name][row])), (x, y))
            draw.text((x + 1, y + tile + 1), name, fill=(0, 0, 0))
    grid.save(path)


def save_contact_sheet(chw_images: list[np.ndarray], path: str, columns: int = 4) -> None:
    """Undo the normalisation and tile the images into one PNG."""
    from PIL import Image

    mean = np.array(MEAN, np.float32)[:, None, None]
    std = np.array(STD, np.float32)[:, None, None]
    tiles = [np.clip(im * std + mean, 0, 255).astype(np.uint8).transpose(1, 2, 0)
             for im in chw_images]  # fmt: skip
    rows = (len(tiles) + columns - 1) // columns
    h, w = tiles[0].shape[:2]
    sheet = np.full((rows * (h + 4), columns * (w + 4), 3), 255, np.uint8)
    for i, tile in enumerate(tiles):
        r, c = divmod(i, columns)
        sheet[r * (h + 4) : r * (h + 4) + h, c * (w + 4) : c * (w + 4) + w] = tile
    Image.fromarray(sheet).save(path)
