"""Test set-up: the emulated gpu and the Triton interpreter, enabled before anything imports triton."""

import os
import sys

os.environ["NDD_TRITON_EMULATE_GPU"] = "1"
os.environ["TRITON_INTERPRET"] = "1"
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "golden"))
sys.path.insert(0, HERE)
