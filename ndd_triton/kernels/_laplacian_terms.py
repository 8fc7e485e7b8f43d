"""Separable terms of the Laplacian: per spatial axis, one 1-D window per axis plus a scale."""

from __future__ import annotations

from typing import Any

import numpy as np

from ndd_triton.kernels._conv_tables import binomial, second_derivative


def laplacian_terms(arg: Any, count: int) -> list[tuple[float, list[np.ndarray]]]:
    """`[(scale, [window of spatial axis 0, 1, ...]), ...]`, one entry per derivative axis."""
    terms = []
    for a in range(count):
        windows = [second_derivative(int(arg.lap_windows[b])) if b == a
                   else binomial(int(arg.lap_smoothing[b])) for b in range(count)]  # fmt: skip
        terms.append((float(arg.lap_scales[a]), windows))
    return terms
