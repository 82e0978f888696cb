from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from papergym.core.tasks import TaskGenerator, parse_task_id, stable_seed, task_options


def _gen() -> TaskGenerator:
    return TaskGenerator(
        "dice", lambda rng, d: (d, rng.random()), levels=3, split_sizes={"train": 100, "test": 10}
    )


def test_tasks_are_random_access_and_reproducible() -> None:
    gen = _gen()
    later = gen.task("train", 42, 2)
    for i in range(10):
        gen.task("train", i, 1)
    assert gen.task("train", 42, 2) == later
    assert gen.task("train", 42, 2) != gen.task("train", 43, 2)


def test_train_and_test_streams_differ() -> None:
    gen = _gen()
    train = {gen.task("train", i, 1).payload for i in range(10)}
    test = {gen.task("test", i, 1).payload for i in range(10)}
    assert not train & test


def test_task_is_identical_in_another_process() -> None:
    code = (
        "from papergym.core.tasks import TaskGenerator;"
        "g=TaskGenerator('dice', lambda rng, d: rng.random(), levels=3);"
        "print(repr(g.task('test', 5, 3).payload))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    gen = TaskGenerator("dice", lambda rng, d: rng.random(), levels=3)
    assert out == repr(gen.task("test", 5, 3).payload)
    assert stable_seed("a", 1) == stable_seed("a", 1) != stable_seed("a", 2)


def test_task_id_round_trip_and_errors() -> None:
    gen = _gen()
    task = gen.task("test", 7, 3)
    assert parse_task_id(task.task_id) == ("dice", "test", 3, 7)
    assert gen.from_id(task.task_id) == task
    for bad in ("dice/test/3/7", "dice/test/L3", 7, "dice/valid/L1/0"):
        with pytest.raises(ValueError):
            gen.from_id(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="belongs to"):
        gen.from_id("other/test/L1/0")
    with pytest.raises(ValueError, match=r"0\.\.9"):
        gen.task("test", 10, 1)
    with pytest.raises(ValueError, match="difficulty"):
        gen.task("test", 0, 4)


def test_sample_uses_the_given_generator_only() -> None:
    gen = _gen()
    a = [gen.sample(np.random.default_rng(5), "train").task_id for _ in range(3)]
    b = [gen.sample(np.random.default_rng(5), "train").task_id for _ in range(3)]
    assert a == b
    ids = {gen.sample(np.random.default_rng(s), "train").task_id for s in range(40)}
    assert len(ids) > 20


def test_task_options_rejects_unknown_keys() -> None:
    assert task_options({"split": "test"}, allowed=frozenset({"split"})) == {"split": "test"}
    assert task_options(None, allowed=frozenset()) == {}
    with pytest.raises(ValueError, match="spilt"):
        task_options({"spilt": "test"}, allowed=frozenset({"split"}))
