"""ndd.checkpoint and reader/RNG state (core.md §15, agent skill "Checkpointing")."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

import ndd_triton as ndd


@pytest.fixture
def dataset(tmp_path):
    """10 files in two classes; each file's bytes name it, so batches are comparable."""
    for i in range(10):
        folder = tmp_path / f"class{i % 2}"
        folder.mkdir(exist_ok=True)
        (folder / f"img{i}.jpg").write_bytes(f"sample {i}".encode() * (1 + i % 3))
    return str(tmp_path)


def as_lists(batches):
    return [([bytes(np.asarray(t)) for t in data], labels.torch().flatten().tolist())
            for data, labels in batches]  # fmt: skip


def make_reader(root, **kwargs):
    return ndd.readers.File(file_root=root, random_shuffle=True, enable_checkpointing=True,
                            name="rdr", **kwargs)  # fmt: skip


# ---- the key property: a resumed run reads what the uninterrupted run would have --------------
@pytest.mark.parametrize("kwargs", [{"seed": 123}, {},
                                    {"shard_id": 1, "num_shards": 2, "initial_fill": 3},
                                    {"pad_last_batch": True, "stick_to_shard": True,
                                     "shard_id": 0, "num_shards": 3}])  # fmt: skip
def test_restored_run_continues_exactly(dataset, tmp_path, kwargs):
    reader = make_reader(dataset, **kwargs)
    rng = ndd.random.RNG(seed=5)
    ckpt = ndd.checkpoint.Checkpoint()
    ckpt.register(reader, "rdr")
    ckpt.register(rng, "rng")
    list(reader.next_epoch(batch_size=2))  # one full epoch first
    iterator = reader.next_epoch(batch_size=2)
    next(iterator)
    rng()
    ckpt.collect()
    path = ckpt.save(str(tmp_path / "ckpt_{seq:04d}.json"))
    expected_rest = as_lists(iterator)
    expected_next = as_lists(reader.next_epoch(batch_size=2))
    expected_draw = rng()

    fresh = make_reader(dataset, **{k: v for k, v in kwargs.items() if k != "seed"})
    fresh_rng = ndd.random.RNG()
    restored = ndd.checkpoint.Checkpoint()
    assert restored.load(str(tmp_path / "ckpt_{seq:04d}.json")) == path
    restored.register(fresh, "rdr")
    restored.register(fresh_rng, "rng")
    assert as_lists(fresh.next_epoch(batch_size=2)) == expected_rest
    assert as_lists(fresh.next_epoch(batch_size=2)) == expected_next
    assert fresh_rng() == expected_draw
    assert expected_rest
    assert expected_next


def test_state_at_an_epoch_boundary_and_in_sample_mode(dataset):
    reader = make_reader(dataset, seed=9)
    list(reader.next_epoch())
    state = str(reader.get_state())
    expected = [bytes(np.asarray(d)) for d, _ in reader.next_epoch()]
    fresh = make_reader(dataset, seed=1)
    fresh.set_state(state)
    assert [bytes(np.asarray(d)) for d, _ in fresh.next_epoch()] == expected


def test_reader_state_text_round_trip(dataset):
    reader = make_reader(dataset)
    list(reader.next_epoch(batch_size=4))
    state = reader.get_state()
    text = str(state)
    assert len(text) < 80
    assert text.isascii()
    assert " " not in text
    assert ndd.readers.ReaderState.parse(text) == state
    with pytest.raises(ValueError, match="Invalid reader state string"):
        ndd.readers.ReaderState.parse("not a state")
    with pytest.raises(TypeError, match="Reader state must be a ReaderState or its string"):
        ndd.readers.ReaderState.parse(3)


# ---- reader state rules ----------------------------------------------------------------------
def test_reader_state_rules(dataset):
    plain = ndd.readers.File(file_root=dataset)
    list(plain.next_epoch(batch_size=5))
    with pytest.raises(RuntimeError, match="initialized with checkpointing disabled"):
        plain.get_state()
    reader = make_reader(dataset)
    with pytest.raises(RuntimeError, match="before its first iteration"):
        reader.get_state()
    state = None
    list(reader.next_epoch(batch_size=5))
    state = reader.get_state()
    with pytest.raises(RuntimeError, match="after iteration has begun"):
        reader.set_state(state)


def test_restore_checks(dataset, tmp_path):
    reader = make_reader(dataset)
    list(reader.next_epoch(batch_size=5))
    state = reader.get_state()
    other_dataset = tmp_path / "small"
    (other_dataset / "c").mkdir(parents=True)
    (other_dataset / "c" / "a.jpg").write_bytes(b"x")
    small = make_reader(str(other_dataset))
    small.set_state(state)
    with pytest.raises(ValueError, match="saved for a dataset of 10 samples; this reader has 1"):
        small.next_epoch(batch_size=1)
    mid = make_reader(dataset)
    iterator = mid.next_epoch(batch_size=4)
    next(iterator)
    odd = make_reader(dataset)
    odd.set_state(mid.get_state())
    with pytest.raises(ValueError, match="4 samples into an epoch read with batch_size 4; it "
                                         "cannot continue with batch_size 3"):
        odd.next_epoch(batch_size=3)
    numpy_state = ndd.readers.ReaderState("Numpy", 10, 0, 0, 0, 1, 0, 0)
    with pytest.raises(ValueError, match="belongs to a Numpy reader, not a File reader"):
        make_reader(dataset).set_state(numpy_state)


def test_register_enables_checkpointing_retroactively(dataset):
    reader = ndd.readers.File(file_root=dataset)
    ckpt = ndd.checkpoint.Checkpoint()
    ckpt.register(reader, "rdr")
    list(reader.next_epoch(batch_size=5))
    ckpt.collect()
    assert ckpt.get_state("rdr") == reader.get_state()
    iterated = ndd.readers.File(file_root=dataset)
    list(iterated.next_epoch(batch_size=5))
    with pytest.raises(RuntimeError, match="already iterated with checkpointing disabled"):
        ckpt.register(iterated, "late")
    captured = ndd.readers.File(file_root=dataset)
    with pytest.warns(UserWarning, match="no operators were called"):  # as DALI 2.4 warns
        list(captured.next_epoch(batch_size=5, capture=True))
    with pytest.raises(RuntimeError, match="already iterated"):
        ckpt.register(captured, "cap")


# ---- Checkpoint API --------------------------------------------------------------------------
def test_serialize_format_and_flags():
    ckpt = ndd.checkpoint.Checkpoint()
    rng = ndd.random.RNG(seed=3)
    assert ckpt.register(rng) == "__op_0"
    assert ckpt.register(rng) == "__op_0"  # already registered: same key
    assert ckpt.register(ndd.random.RNG(seed=4)) == "__op_1"
    assert ckpt.names == ("__op_0", "__op_1")
    assert not ckpt.is_complete
    assert not ckpt.is_loaded
    with pytest.raises(RuntimeError, match="Cannot serialize an empty checkpoint"):
        ckpt.serialize()
    ckpt.collect()
    assert ckpt.is_complete
    payload = json.loads(ckpt.serialize())
    assert payload == {"version": 2, "states": {
        "__op_0": {"state": str(rng.get_state()), "type": "RNG"},
        "__op_1": {"state": str(ndd.random.RNG(seed=4).get_state()), "type": "RNG"}}}
    other = ndd.checkpoint.Checkpoint()
    other.deserialize(ckpt.serialize())
    assert other.is_loaded
    assert not other.is_complete
    ckpt.clear()
    assert ckpt.names == ()
    assert not ckpt.is_complete
    assert ckpt.register(rng) == "__op_0"  # the counter restarts


@pytest.mark.parametrize(("text", "error", "message"), [
    ('{"version": 99, "states": {}}', ValueError,
     r"Unsupported checkpoint format version 99; expected 2\."),
    ('{"states": {}}', ValueError, "Unsupported checkpoint format version None; expected 2"),
    ("{not json", json.JSONDecodeError, "Expecting property name"),
    ('{"version": 2, "states": {"a": 3}}', ValueError, "Malformed checkpoint"),
])  # fmt: skip
def test_deserialize_errors(text, error, message):
    with pytest.raises(error, match=message):
        ndd.checkpoint.Checkpoint().deserialize(text)


def test_register_errors_and_type_tags():
    ckpt = ndd.checkpoint.Checkpoint()
    with pytest.raises(ValueError, match=r"Manually assigned names must not start with '__op_'\."):
        ckpt.register(ndd.random.RNG(), "__op_7")
    with pytest.raises(TypeError, match="name must be a str or None; got int"):
        ckpt.register(ndd.random.RNG(), 3)
    ckpt.deserialize('{"version": 2, "states": {"rdr": {"state": "x", "type": "File"}}}')
    with pytest.raises(TypeError, match=r"Type mismatch for operator 'rdr': checkpoint stores "
                                        r"state for type 'File', but the registered operator is "
                                        r"of type 'RNG'\."):
        ckpt.register(ndd.random.RNG(), "rdr")
    with pytest.raises(KeyError, match=r"No op registered under 'nope'\."):
        ckpt.get_state("nope")
    with pytest.raises(KeyError, match=r"No op registered under 'rdr'\."):
        ckpt.get_state("rdr")  # loaded but not registered


def test_collect_needs_get_state():
    ckpt = ndd.checkpoint.Checkpoint()
    ckpt.register(object(), "thing")  # not validated at registration
    with pytest.raises(AttributeError, match="get_state"):
        ckpt.collect()


def test_set_state_and_restore():
    ckpt = ndd.checkpoint.Checkpoint()
    rng = ndd.random.RNG(seed=1)
    source = ndd.random.RNG(seed=77)
    source()
    ckpt.register(rng, "rng")
    ckpt.set_state("rng", str(source.get_state()), op_type="RNG")
    ckpt.restore()
    assert rng() == source()
    ckpt.set_state("rng", source.get_state(), op_type=ndd.readers.File)
    with pytest.raises(TypeError, match="the state was set for type 'File', but the registered "
                                        "operator is of type 'RNG'"):
        ckpt.restore()
    with pytest.raises(TypeError, match="op_type must be a class or a qualified class name"):
        ckpt.set_state("rng", "x", op_type=3)
    ckpt.set_state("ghost", "x")
    with pytest.raises(RuntimeError, match=r"no corresponding registered ops: \['ghost'\]\."):
        ckpt.restore()
    empty = ndd.checkpoint.Checkpoint()
    empty.register(ndd.random.RNG(), "a")
    empty.restore()  # nothing held: nothing to do


def test_restore_requires_state_for_every_op():
    ckpt = ndd.checkpoint.Checkpoint()
    ckpt.register(ndd.random.RNG(), "a")
    ckpt.register(ndd.random.RNG(), "b")
    ckpt.set_state("a", str(ndd.random.RNG(seed=2).get_state()))
    with pytest.raises(RuntimeError, match=r"no entries for the registered ops: \['b'\]"):
        ckpt.restore()


def test_save_and_load_sequence(tmp_path):
    ckpt = ndd.checkpoint.Checkpoint()
    rng = ndd.random.RNG(seed=11)
    ckpt.register(rng, "rng")
    ckpt.collect()
    pattern = str(tmp_path / "ck_{seq:04d}.json")
    first = ckpt.save(pattern)
    rng()
    ckpt.collect()
    second = ckpt.save(pattern)
    assert [os.path.basename(first), os.path.basename(second)] == ["ck_0000.json",
                                                                   "ck_0001.json"]  # fmt: skip
    (tmp_path / "ck_abcd.json").write_text("unrelated")
    loaded = ndd.checkpoint.Checkpoint()
    assert loaded.load(pattern) == second
    fresh = ndd.random.RNG()
    loaded.register(fresh, "rng")
    assert fresh.get_state() == rng.get_state()


def test_save_without_seq_overwrites(tmp_path):
    ckpt = ndd.checkpoint.Checkpoint()
    rng = ndd.random.RNG(seed=1)
    ckpt.register(rng, "rng")
    target = str(tmp_path / "ck.json")
    ckpt.collect()
    assert ckpt.save(target) == target
    rng()
    ckpt.collect()
    assert ckpt.save(target) == target
    assert json.loads(Path(target).read_text())["states"]["rng"]["state"] == str(rng.get_state())
    with pytest.raises(FileNotFoundError, match="No checkpoint file matches filename"):
        ckpt.load(str(tmp_path / "none_{seq}.json"))
    with pytest.raises(FileNotFoundError, match="No checkpoint file matches filename"):
        ckpt.load(str(tmp_path / "none.json"))
    with pytest.raises(ValueError, match=r"the only allowed placeholder is \{seq\}"):
        ckpt.save(str(tmp_path / "{step}.json"))


def test_current_is_the_context_checkpoint():
    assert ndd.checkpoint.current() is ndd.EvalContext.current().checkpoint
    with ndd.EvalContext() as ctx:
        assert ndd.checkpoint.current() is ctx.checkpoint
    assert ndd.checkpoint.current() is not ctx.checkpoint


def test_direct_calls_resume(dataset):
    reader = make_reader(dataset, seed=4)
    for _ in range(3):
        reader(batch_size=2)
    state = reader.get_state()
    expected = [as_lists([reader(batch_size=2)]) for _ in range(4)]
    fresh = make_reader(dataset)
    fresh.set_state(str(state))
    assert [as_lists([fresh(batch_size=2)]) for _ in range(4)] == expected


def test_anonymous_registration_restores_in_order(dataset, tmp_path):
    readers = [make_reader(dataset, seed=s) for s in (1, 2)]
    ckpt = ndd.checkpoint.Checkpoint()
    assert [ckpt.register(r) for r in readers] == ["__op_0", "__op_1"]
    for r in readers:
        list(r.next_epoch(batch_size=3))
    ckpt.collect()
    text = ckpt.serialize()
    expected = [as_lists(r.next_epoch(batch_size=3)) for r in readers]
    fresh = [make_reader(dataset), make_reader(dataset)]
    restored = ndd.checkpoint.Checkpoint()
    restored.deserialize(text)
    for r in fresh:
        restored.register(r)
    assert [as_lists(r.next_epoch(batch_size=3)) for r in fresh] == expected


def test_loaded_state_cannot_be_applied_to_an_iterated_reader(dataset):
    reader = make_reader(dataset)
    list(reader.next_epoch(batch_size=5))
    ckpt = ndd.checkpoint.Checkpoint()
    ckpt.register(reader, "rdr")
    ckpt.collect()
    text = ckpt.serialize()
    started = make_reader(dataset)
    list(started.next_epoch(batch_size=5))
    late = ndd.checkpoint.Checkpoint()
    late.deserialize(text)
    with pytest.raises(RuntimeError, match="Cannot set the reader's state after iteration has "
                                           "begun"):
        late.register(started, "rdr")
