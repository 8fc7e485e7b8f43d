"""gaussian_blur on the CPU: separable torch passes in float32, H and W fused in row bands.

The H and W passes run band by band (about 512 KiB of float32 rows per band), so a band's
vertical result is still in cache when the horizontal pass and the rounding read it; that
cut the CPU time by about a third against whole-image passes on 480x640x3 uint8 (measured
on a loaded 2-core machine, perf/bench_color.py). A D axis (volumes) is filtered first with a
whole-sample pass.
"""

from __future__ import annotations

import numpy as np
import torch

from ndd_triton.kernels import register
from ndd_triton.kernels._conv_tables import border_index, gaussian_taps, spatial_span, view_5d
from ndd_triton.kernels.cpu._conv import accumulate, correlate_axis
from ndd_triton.kernels.cpu.color import store_rounded
from ndd_triton.ops import gaussian_blur
from ndd_triton.schema import SampleArgs

BAND_ELEMENTS = 131072  # float32 elements per band (512 KiB, well inside a 2 MiB L2)


def blur_rows_banded(src: torch.Tensor, out: np.ndarray, taps_h: np.ndarray,
                     taps_w: np.ndarray, inner: int, finite: bool) -> None:  # fmt: skip
    """Blur `[P, H, W·inner]` planes along H then W, one band of output rows at a time."""
    planes, h, row = src.shape
    rh, rw = len(taps_h) // 2, len(taps_w) // 2
    band = int(np.clip(BAND_ELEMENTS // max(row, 1), 8, max(h, 8)))
    index = torch.from_numpy(border_index(h, rh, rh, "reflect_101"))
    vertical = torch.empty((1, band, row), dtype=torch.float32)
    for p in range(planes):
        for y0 in range(0, h, band):
            rows = min(band, h - y0)
            if y0 >= rh and y0 + rows + rh <= h:
                window = src[p, y0 - rh:y0 + rows + rh]
            else:
                window = src[p].index_select(0, index[y0:y0 + rows + 2 * rh])
            window = window.to(torch.float32).reshape(1, rows + 2 * rh, row)
            part = vertical[:, :rows]
            accumulate(window, taps_h, rows, part)
            blurred = correlate_axis(part.reshape(1, rows, row // inner, inner), 2, taps_w, rw)
            store_rounded(out[p, y0:y0 + rows], blurred, finite=finite)


@register(gaussian_blur.schema, "cpu")
def gaussian_blur_cpu(out: np.ndarray, inp: np.ndarray, arg: SampleArgs) -> None:
    """Blur one sample: axes D, H, W of its `[outer, D, H, W, inner]` view."""
    first, count = spatial_span(arg.layout, inp.ndim)
    outer, d, h, w, inner = view_5d(inp.shape, first, count)
    taps = [gaussian_taps(float(arg.sigmas[k]), int(arg.windows[k])) for k in range(count)]
    finite = inp.dtype.kind in "iu"
    x = torch.from_numpy(inp).reshape(outer, d, h, w, inner)
    if count == 1:
        store_rounded(out, correlate_axis(x.to(torch.float32), 3, taps[0], len(taps[0]) // 2),
                      finite=finite)  # fmt: skip
        return
    if count == 3:
        x = correlate_axis(x.to(torch.float32), 1, taps[0], len(taps[0]) // 2)
    blur_rows_banded(x.reshape(outer * d, h, w * inner), out.reshape(outer * d, h, w * inner),
                     taps[-2], taps[-1], inner, finite)  # fmt: skip
