"""The tau2 folder loader: task sets, splits restricted to the chosen task file, empty splits."""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import papergym  # noqa: F401
from papergym.core import info_keys as K
from papergym.envs.service.tau2_data import load_tau2_folder

FIXTURE = Path(__file__).parent / "fixtures" / "tau2_telecom"
IDS = [t["id"] for t in json.loads((FIXTURE / "tasks.json").read_text(encoding="utf-8"))]


def _small_folder(tmp_path: Path) -> Path:
    """The fixture shipped as tau2 ships telecom: ``tasks_small.json`` only, splits naming absent ids."""
    folder = tmp_path / "telecom"
    shutil.copytree(FIXTURE, folder)
    records = json.loads((folder / "tasks.json").read_text(encoding="utf-8"))
    (folder / "tasks.json").unlink()
    (folder / "tasks_small.json").write_text(json.dumps(records[:3]), encoding="utf-8")
    splits = {"small": IDS[:3], "train": [*IDS[:3], "[absent]x"], "base": [*IDS[3:], "[absent]y"]}
    (folder / "split_tasks.json").write_text(json.dumps(splits), encoding="utf-8")
    return folder


def test_the_tau2_loader_is_imported_without_a_cycle() -> None:
    code = "import sys, papergym.envs.service.tasks; print('papergym.envs.service.domains' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_small_task_set_loads_and_splits_keep_only_its_ids(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = _small_folder(tmp_path)
    with caplog.at_level(logging.WARNING, logger="papergym.envs.service.tau2_data"):
        loaded = load_tau2_folder(folder, "telecom", "small")
    assert list(loaded.tasks) == IDS[:3]
    assert loaded.splits == {"small": IDS[:3], "train": IDS[:3], "base": []}
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 2 and "split 'train' names 1 ids absent from tasks_small.json" in warned[0]
    assert loaded.nonempty_splits() == ("train",)


def test_a_missing_task_file_names_the_task_sets_present(tmp_path: Path) -> None:
    folder = _small_folder(tmp_path)
    with pytest.raises(ValueError, match=r"no tasks.json .*task sets present: \['small'\]"):
        load_tau2_folder(folder, "telecom")
    with pytest.raises(ValueError, match="tau2_task_set='tiny'"):
        load_tau2_folder(folder, "telecom", "tiny")


def test_a_folder_without_a_split_file_has_one_base_split(tmp_path: Path) -> None:
    folder = tmp_path / "telecom"
    shutil.copytree(FIXTURE, folder)
    (folder / "split_tasks.json").unlink()
    assert load_tau2_folder(folder, "telecom").splits == {"base": IDS}


def test_every_split_with_tasks_is_drawn_from_and_an_empty_one_is_a_clear_error(tmp_path: Path) -> None:
    folder = _small_folder(tmp_path)
    env = gym.make("papergym/ServiceAgent-v0", domain="telecom", tau2_data=folder, tau2_task_set="small")
    assert env.unwrapped.splits == ("train",)
    _, info = env.reset(seed=0)
    assert info[K.TASK_ID] in IDS[:3]
    _, info = env.reset(seed=1, options={"split": "small"})
    assert info[K.TASK_ID] in IDS[:3]
    with pytest.raises(ValueError, match=r"split 'base' .* holds none of the small task set's tasks"):
        env.reset(seed=0, options={"split": "base"})


def test_only_empty_splits_fall_back_to_the_splits_that_exist(tmp_path: Path) -> None:
    folder = _small_folder(tmp_path)
    splits = {"small": IDS[:3], "base": ["[absent]y"]}
    (folder / "split_tasks.json").write_text(json.dumps(splits), encoding="utf-8")
    env = gym.make("papergym/ServiceAgent-v0", domain="telecom", tau2_data=folder, tau2_task_set="small")
    assert env.unwrapped.splits == ("small",)
    _, info = env.reset(seed=3)
    assert info[K.TASK_ID] in IDS[:3]


def test_the_expected_db_replays_the_users_gold_actions_too() -> None:
    from papergym.envs.service.db import ServiceDB
    from papergym.envs.service.evaluation import replay_gold
    from papergym.envs.service.telecom.tools import TelecomTools

    loaded = load_tau2_folder(FIXTURE, "telecom")
    task = loaded.tasks["[service]airplane_mode"]
    assert [(a.name, a.requestor) for a in task.criteria.actions] == [("toggle_airplane_mode", "user")]
    planted = ServiceDB(loaded.db)
    tools = TelecomTools(planted)
    for name, arguments in task.initialization_actions:
        tools.call(name, arguments, validate=False)
    assert planted.get("device", "phone")["airplane_mode"] is True
    expected = replay_gold(task, TelecomTools, loaded.db)
    assert expected.get("device", "phone")["airplane_mode"] is False
    assert not expected.same_state(planted)


TAU2_AIRLINE = Path(__file__).resolve().parents[4] / "shared" / "tau2" / "airline"


@pytest.mark.skipif(
    not (TAU2_AIRLINE / "tasks.json").is_file(),
    reason=f"tau2's airline data is not at {TAU2_AIRLINE} (copy tau2's data/tau2/domains/airline/ there)",
)
def test_the_gold_of_all_50_of_tau2s_airline_tasks_scores_one() -> None:
    from tests.envs.service.oracle_play import play_oracle

    env = gym.make("papergym/ServiceAgent-v0", domain="airline", tau2_data=TAU2_AIRLINE).unwrapped
    ids = list(load_tau2_folder(TAU2_AIRLINE, "airline").tasks)
    assert len(ids) == 50
    failed = [(t, info[K.CHECKS]) for t in ids for reward, info, _ in [play_oracle(env, t)] if reward != 1.0]
    assert not failed
