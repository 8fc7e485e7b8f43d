"""`ndd_triton.pytorch.ops`: ndd operators as torch custom ops inside torch.compile(fullgraph).

Each op is compiled with `fullgraph=True` (a graph break would raise) and compared with the same
operator called through the ordinary ndd API; `torch.library.opcheck` checks the fake (meta)
implementations against the real ones (shapes, dtypes, strides, schema).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch._dynamo

import ndd_triton as ndd
from ndd_triton.pytorch import ops

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()  # each test compiles its own graphs (no recompile limit across tests)
    return


def _images(device, shape=(3, 9, 11, 3)):
    gen = torch.Generator().manual_seed(7)
    return torch.randint(0, 256, shape, dtype=torch.uint8, generator=gen).to(device)


def _eager(name, x, **args):
    batch = ndd.as_batch(x, layout="HWC")
    return getattr(ndd, name)(batch, **args).torch()


CASES = [
    ("flip", {"horizontal": True, "vertical": True}, {"horizontal": 1, "vertical": 1}),
    ("resize", {"height": 5, "width": 7}, {"size": (5, 7)}),
    ("resize", {"height": 13, "width": 4, "interp_type": "cubic", "antialias": False},
     {"size": (13, 4), "interp_type": ndd.types.INTERP_CUBIC, "antialias": False}),
    ("crop", {"height": 4, "width": 6, "crop_pos_x": 0.2, "crop_pos_y": 0.9},
     {"crop": (4, 6), "crop_pos_x": 0.2, "crop_pos_y": 0.9}),
    ("crop_mirror_normalize",
     {"height": 6, "width": 5, "mean": [10.0, 20.0, 30.0], "std": [2.0, 3.0, 4.0],
      "mirror": True},
     {"crop": (6, 5), "mean": [10.0, 20.0, 30.0], "std": [2.0, 3.0, 4.0], "mirror": 1,
      "output_layout": "CHW", "dtype": ndd.float32}),
    ("crop_mirror_normalize", {"dtype": torch.float16, "output_layout": "HWC"},
     {"dtype": ndd.float16, "output_layout": "HWC"}),
    ("brightness_contrast", {"brightness": 1.3, "contrast": 0.7, "brightness_shift": 0.1},
     {"brightness": 1.3, "contrast": 0.7, "brightness_shift": 0.1}),
    ("color_twist", {"brightness": 0.9, "saturation": 1.4, "hue": 25.0},
     {"brightness": 0.9, "saturation": 1.4, "hue": 25.0}),
    ("normalize", {}, {}),
    ("normalize", {"mean": 100.0, "stddev": 20.0, "scale": 2.0}, {"mean": 100.0,
                                                                  "stddev": 20.0, "scale": 2.0}),
    ("cast", {"dtype": torch.int16}, {"dtype": ndd.int16}),
    ("gaussian_blur", {"sigma": 1.5}, {"sigma": 1.5}),
    ("gaussian_blur", {"window_size": 5}, {"window_size": 5}),
]  # fmt: skip


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("name", "args", "ndd_args"), CASES)
def test_compiled_fullgraph_matches_the_eager_ndd_op(device, name, args, ndd_args):
    x = _images(device)
    op = getattr(ops, name)
    compiled = torch.compile(lambda t: op(t, **args), fullgraph=True, backend="aot_eager")
    got = compiled(x)
    expected = _eager(name, x, **ndd_args)
    assert got.dtype == expected.dtype
    assert got.shape == expected.shape
    assert torch.equal(got.cpu(), expected.cpu())
    single = op(x[1], **args)  # one (H, W, C) image
    assert torch.equal(single.cpu(), expected[1].cpu())


@pytest.mark.parametrize(("name", "args", "ndd_args"), CASES)
def test_fake_implementations_agree_with_the_real_ones(name, args, ndd_args):
    torch.library.opcheck(getattr(ops, name), (_images("cpu"),), args,
                          test_utils=("test_schema", "test_faketensor"))  # fmt: skip


def test_independent_references():
    x = _images("cpu")
    assert torch.equal(ops.flip(x), torch.flip(x, dims=[2]))
    assert torch.equal(ops.flip(x, horizontal=False, vertical=True), torch.flip(x, dims=[1]))
    # crop of 4x6 at (0.2, 0.9): origin round(0.2 * (11 - 6)) = 1, round(0.9 * (9 - 4)) = 4
    assert torch.equal(ops.crop(x, 4, 6, crop_pos_x=0.2, crop_pos_y=0.9), x[:, 4:8, 1:7])
    mean, std = np.array([10.0, 20.0, 30.0]), np.array([2.0, 3.0, 4.0])
    cmn = ops.crop_mirror_normalize(x, mean=mean.tolist(), std=std.tolist(), mirror=True)
    ref = ((np.flip(x.numpy(), 2) - mean) / std).transpose(0, 3, 1, 2).astype(np.float32)
    np.testing.assert_allclose(cmn.numpy(), ref, rtol=1e-5, atol=1e-5)
    assert torch.equal(ops.cast(x, torch.int16), x.to(torch.int16))
    big = torch.tensor([[[[300.7, -5.0, 127.5]]]])
    assert ops.cast(big, torch.uint8).flatten().tolist() == [255, 0, 128]  # rounds, saturates


# inductor's CPU path imports torch.utils.mkldnn, which warns about its own torch.jit use
@pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")
def test_a_preprocessing_chain_inside_a_compiled_model_with_inductor():
    conv = torch.nn.Conv2d(3, 4, 3)

    def model(images):
        x = ops.flip(images)
        x = ops.resize(x, 8, 8)
        x = ops.brightness_contrast(x, brightness=1.1)
        x = ops.crop_mirror_normalize(x, 6, 6, mean=[128.0] * 3, std=[64.0] * 3)
        return conv(x).relu().mean()

    x = _images("cpu")
    with torch.no_grad():
        compiled = torch.compile(model, fullgraph=True)
        assert torch.allclose(compiled(x), model(x), rtol=1e-5, atol=1e-6)
        # the ops are single nodes of the graph
        graph = torch._dynamo.explain(model)(x)
        assert graph.graph_break_count == 0


def test_coexists_with_the_graph_break_of_the_ordinary_api():
    def mixed(t):
        y = ops.flip(t)
        return ndd.flip(ndd.as_batch(y, layout="HWC")).torch()  # ordinary API: a graph break

    x = _images("cpu")
    with pytest.raises(torch._dynamo.exc.Unsupported):
        torch.compile(mixed, fullgraph=True, backend="eager")(x)
    assert torch.equal(torch.compile(mixed, backend="eager")(x), x)  # flip twice
    assert torch.ops.ndd.flip.default is not None  # registered in the ndd namespace


def test_errors_name_the_op_and_argument():
    with pytest.raises(ValueError, match=r"ndd.flip: expected \(N, H, W, C\)"):
        ops.flip(torch.zeros(4, dtype=torch.uint8))
    with pytest.raises(ValueError, match="argument 'interp_type'"):
        ops.resize(_images("cpu"), 4, 4, interp_type="bilinear")
    with pytest.raises(ValueError, match="give 'sigma' or 'window_size'"):
        ops.gaussian_blur(_images("cpu"))
