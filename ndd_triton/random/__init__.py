"""Random number generation: `RNG`, the thread-local default RNG and the distributions.

The modules import nothing else of ndd_triton (ops and kernels draw through them).

`uniform`, `normal`, `coin_flip`, `choice` and `beta` are generated from the schemas in
`ndd_triton.ops.random_ops` and installed into this module when `ndd_triton` is imported.
"""

from ndd_triton.random._rng import RNG, RNGState, get_default_rng, set_seed

__all__ = ["RNG", "RNGState", "beta", "choice", "coin_flip", "get_default_rng", "normal",
           "set_seed", "uniform"]  # fmt: skip
