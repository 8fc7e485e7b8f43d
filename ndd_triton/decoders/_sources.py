"""Where each encoded sample came from, for error messages ("sample 3 from 'cats/1.jpg'").

Decoder inputs reach inference as NumPy views of the batch; a reader's sample is found by the
memory it occupies (`core.source_tags.source_of_memory`), so data straight from
`readers.File`, `COCO`, `Webdataset` or `TFRecord` is named by its source, anything else by
its index only.
"""

from __future__ import annotations

import numpy as np

from ndd_triton.core.source_tags import source_of_memory


def sample_sources(samples: list[np.ndarray]) -> list[str | None]:
    """The reader source of every sample, or None where it is unknown."""
    return [source_of_memory(s) for s in samples]


def describe(index: int, source: str | None) -> str:
    """`sample 3` or `sample 3 from 'cats/1.jpg'`."""
    return f"sample {index}" if not source else f"sample {index} from {source!r}"
