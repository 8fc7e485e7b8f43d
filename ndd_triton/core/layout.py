"""Layout strings: validation and the defaults ops assume for layout-less inputs."""

from __future__ import annotations

# Spatial layouts most image ops accept (DALI's order: sequences and 3-D first).
SPATIAL_LAYOUTS = ("FDHWC", "FHWC", "DHWC", "HWC", "FCDHW", "FCHW", "CDHW", "CHW", "HW", "DHW")
IMAGE_LAYOUTS = ("HWC", "CHW", "FHWC", "FCHW")


def check_layout(layout: str | None, ndim: int, what: str) -> str | None:
    """Validate a layout against a tensor's ndim; '' becomes None."""
    if layout is None or layout == "":
        return None
    if not isinstance(layout, str):
        raise TypeError(f"{what}: layout must be a str; got {type(layout).__name__}")
    if len(layout) != ndim:
        raise ValueError(f"{what}: A non-empty layout must have the same number of dimensions as "
                         f"the tensor; layout {layout!r} has {len(layout)}, data has {ndim}")
    return layout


def default_layout(ndim: int, choices: tuple[str, ...]) -> str | None:
    """The first layout in `choices` with this ndim (what DALI assumes for layout-less input)."""
    for choice in choices:
        if len(choice) == ndim:
            return choice
    return None
