"""The data model: `Tensor`, `Batch`, their storage, construction, dtypes, layouts, devices.

May import: NumPy, torch and itself, nothing else of ndd_triton (checked by
tests/test_layering.py). What needs an upper layer (Tensor arithmetic calls operators) goes
through a registration the upper layer makes (`core.operators.connect`).
"""

from ndd_triton.core import construct as _construct  # fills core.builders

del _construct
