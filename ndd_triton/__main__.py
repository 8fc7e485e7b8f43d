"""Command line: `python -m ndd_triton demo [--device cpu|gpu] [--epochs N] [--batch-size N]
[--compile]`."""

from __future__ import annotations

import argparse
import os
import sys


def main(argv: list[str] | None = None) -> int:
    """Entry point of `python -m ndd_triton` and the `ndd-triton` console script."""
    parser = argparse.ArgumentParser(prog="ndd_triton")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the image-classification pipeline on sample photos")
    demo.add_argument("--device", choices=["cpu", "gpu"], default="cpu")
    demo.add_argument("--epochs", type=int, default=3)
    demo.add_argument("--batch-size", type=int, default=4)
    demo.add_argument("--out", default="demo_out")
    demo.add_argument(
        "--compile",
        action="store_true",
        help="compile mode: trace the loop body once, then run batches ahead",
    )
    args = parser.parse_args(argv)
    if args.device == "gpu":
        import torch

        if not torch.cuda.is_available() and os.environ.get("NDD_TRITON_EMULATE_GPU") != "1":
            print(
                "No CUDA device: running the gpu pipeline on the emulated gpu (Triton "
                "interpreter; slow, for checking only)."
            )
            os.environ["NDD_TRITON_EMULATE_GPU"] = "1"
            os.environ["TRITON_INTERPRET"] = "1"
    from ndd_triton import _demo

    print(
        f"ndd_triton demo: File reader -> decoders.image -> resize 224x224 -> "
        f"crop_mirror_normalize -> torch  (device={args.device}, batch={args.batch_size}"
        f"{', compile mode' if args.compile else ''})"
    )
    result = _demo.run(device=args.device, epochs=args.epochs, batch_size=args.batch_size,
                       out_dir=args.out, compile=args.compile)  # fmt: skip
    print(
        f"{result['images']} images in {result['seconds']:.2f} s = "
        f"{result['images_per_s']:.1f} images/s; last batch {result['shape']} {result['dtype']}"
    )
    print(f"contact sheet: {result['sheet']}")
    print(
        f"augmentations (original | random_resized_crop | flip | color_twist | rotate): "
        f"{result['augmentations']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
