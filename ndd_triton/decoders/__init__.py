"""Decoders (`ndd.decoders.image`, ...): operator functions are installed here from schemas.

The modules of this package are the image codec helpers the decoder ops and kernels share
(JPEG header walk, libjpeg/Pillow decoding, sample sources); they may import only `core`.
"""
