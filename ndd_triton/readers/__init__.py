"""Readers: stateful, PascalCase dataset readers (`ndd.readers.File`, ...), and the other ways
data enters a program: `ExternalSource`, `imread`, `get_property`. May import every package
but the root (the public face).

Create a reader once and call `next_epoch(batch_size=N)` every epoch; see `Reader`.
`shard_from_torch_distributed()` gives `(shard_id, num_shards)` for torch.distributed jobs.
"""

from ndd_triton.core.source_tags import source_info
from ndd_triton.readers import tfrecord
from ndd_triton.readers._base import Reader
from ndd_triton.readers._coco import COCO
from ndd_triton.readers._file import File
from ndd_triton.readers._nemo_asr import NemoAsr
from ndd_triton.readers._numpy import Numpy
from ndd_triton.readers._sharding import shard_from_torch_distributed
from ndd_triton.readers._state import ReaderState
from ndd_triton.readers._tfrecord import TFRecord
from ndd_triton.readers._webdataset import Webdataset

__all__ = ["COCO", "File", "NemoAsr", "Numpy", "Reader", "ReaderState", "TFRecord",
           "Webdataset", "shard_from_torch_distributed", "source_info", "tfrecord"]  # fmt: skip
