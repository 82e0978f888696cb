"""``papergym reproduce prefix``: the smoke run end to end, and arms that differ only in the prefix model."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("tyro")

from papergym.cli import main as cli
from papergym.reproduce import driver, prefix


def test_arms_differ_only_in_the_prefix_model(tmp_path: Path) -> None:
    args = driver.resolve_args(prefix, prefix.Args(smoke=True, out=str(tmp_path)), "prefix")
    models = {"same": "SAME", "foreign": "FOREIGN"}
    configs = prefix.arm_configs(args, "BASE", 0, models)
    driver.check_arms(configs, prefix.REFERENCE, prefix.MECHANISM)
    assert configs["grpo"].prefix_model is None
    assert (configs["grpo_foreign"].prefix_model, configs["grpo_same"].prefix_model) == ("FOREIGN", "SAME")
    configs["grpo_same"] = dataclasses.replace(configs["grpo_same"], prefix_prob=0.3)
    with pytest.raises(AssertionError, match="prefix_prob"):
        driver.check_arms(configs, prefix.REFERENCE, prefix.MECHANISM)


def test_smoke_run_trains_with_both_prefix_models(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert cli(["reproduce", "prefix", "--smoke", "--out", str(out)]) == 0
    record = json.loads((out / "results.json").read_text())
    summary = record["summary"]
    assert set(summary["pass_at_k"]) == set(prefix.ARMS)
    assert set(summary["similarity"]) == {"same", "foreign"}
    assert all(0.0 < v <= 1.0 for v in summary["similarity"].values())
    shares = {arm: [row["prefix_share"] for row in rows["0"]] for arm, rows in record["curves"].items()}
    assert shares["grpo"] == [0.0] and max(shares["grpo_foreign"]) > 0 and max(shares["grpo_same"]) > 0
    foreign = json.loads((Path(summary["prefix_models"]["foreign"]) / "config.json").read_text())
    same = json.loads((Path(summary["prefix_models"]["same"]) / "config.json").read_text())
    assert foreign["vocab_size"] != same["vocab_size"] and foreign["hidden_size"] != same["hidden_size"]
    assert "<!-- reproduce" not in (out / "table.md").read_text()
    assert (out / "pass_at_k.png").stat().st_size > 0
