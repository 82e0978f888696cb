"""``papergym reproduce es-vs-grpo``: the smoke run end to end, and arms that differ only in the mechanism."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("tyro")

from papergym.baselines import es, grpo
from papergym.cli import main as cli
from papergym.reproduce import driver, es_vs_grpo
from tests.reproduce.model_dir import run_on_a_model_dir


def _args(tmp_path: Path, **overrides) -> es_vs_grpo.Args:
    args = driver.resolve_args(es_vs_grpo, es_vs_grpo.Args(smoke=True, out=str(tmp_path)), "es-vs-grpo")
    return dataclasses.replace(args, **overrides)


def test_arms_differ_only_in_the_mechanism_and_spend_one_budget(tmp_path: Path) -> None:
    args = _args(tmp_path, samples=768, prompts_per_step=4, group_size=8, population=8, es_tasks=8)
    configs = es_vs_grpo.arm_configs(args, "BASE", seed=1)
    driver.check_arms(configs, es_vs_grpo.REFERENCE, es_vs_grpo.MECHANISM)
    assert {es_vs_grpo.budget(stages) for stages in configs.values()} == {768}
    assert configs["grpo"][0].model == configs["es"][0].model == configs["es_grpo"][0].model == "BASE"
    assert configs["es_grpo"][1].model == str(Path(configs["es_grpo"][0].out) / "final")


@pytest.mark.parametrize(
    "arm, stage, change",
    [("es_grpo", 1, {"lr": 3e-4}), ("es_grpo", 1, {"beta": 0.0}), ("grpo", 0, {"temperature": 0.7})],
)
def test_check_arms_catches_a_change_beyond_the_mechanism(tmp_path: Path, arm, stage, change) -> None:
    configs = es_vs_grpo.arm_configs(_args(tmp_path), "BASE", seed=0)
    if arm == es_vs_grpo.REFERENCE:  # a change to the reference shows on every other arm
        configs["es"] = [grpo.Args(**{**dataclasses.asdict(configs["grpo"][0]), **change})]
    else:
        configs[arm][stage] = dataclasses.replace(configs[arm][stage], **change)
    with pytest.raises(AssertionError, match="differs from"):
        driver.check_arms(configs, es_vs_grpo.REFERENCE, es_vs_grpo.MECHANISM)


def test_budget_counts_both_trainers() -> None:
    assert es_vs_grpo.budget([grpo.Args(steps=3, prompts_per_step=2, group_size=4)]) == 24
    assert es_vs_grpo.budget([es.Args(iterations=2, population=3, train_tasks=5)]) == 30
    assert es_vs_grpo.ks_for(32) == [1, 2, 4, 8, 16, 32] and es_vs_grpo.ks_for(6) == [1, 2, 4, 6]


def test_smoke_run_writes_results_table_png_and_readme_section(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# benchmarks\n\nkept as is\n")
    out = tmp_path / "run"
    assert cli(["reproduce", "es-vs-grpo", "--smoke", "--out", str(out), "--write", str(readme)]) == 0
    record = json.loads((out / "results.json").read_text())
    assert record["provenance"]["args"]["smoke"] is True and record["provenance"]["packages"]["torch"]
    assert set(record["curves"]) == set(es_vs_grpo.TRAINED_ARMS)
    assert set(record["curves"]["grpo"]) == {"0", "1"}  # per-seed raw curves
    summary = record["summary"]
    assert set(summary["pass_at_k"]) == set(es_vs_grpo.ARMS)
    assert len(set(summary["budgets"].values())) == 1
    for arm_pass in summary["pass_at_k"].values():
        means = [arm_pass[k]["mean"] for k in sorted(arm_pass, key=int)]
        assert means == sorted(means)  # pass@k never falls with k
    assert (out / "pass_at_k.png").stat().st_size > 0
    text = readme.read_text()
    assert text.startswith("# benchmarks\n\nkept as is\n")
    assert "<!-- reproduce:es-vs-grpo:begin -->" in text and "| arm | pass@1 |" in text
    # --render rewrites the same table from results.json alone, training nothing
    table = (out / "table.md").read_text()
    (out / "table.md").unlink()
    assert cli(["reproduce", "es-vs-grpo", "--render", str(out / "results.json")]) == 0
    assert (out / "table.md").read_text() == table


def test_unknown_and_unwritten_reproductions_give_clear_errors(capsys) -> None:
    with pytest.raises(ValueError, match="unknown reproduction"):
        driver.module("nope")
    assert cli(["reproduce", "--list"]) == 0
    listed = capsys.readouterr().out
    assert "es-vs-grpo" in listed and "ready" in listed
    missing = [name for name, ready in driver.available().items() if not ready]
    if missing:
        with pytest.raises(SystemExit, match="no driver yet"):
            cli(["reproduce", missing[0]])


@pytest.mark.parametrize("name", ["es-vs-grpo", "prefix"])
def test_model_dir_is_the_base_without_sft(tmp_path: Path, monkeypatch, name: str) -> None:
    if name == "prefix":  # the two prefix models are small SFT-warmed LMs whatever the target: stub them
        from papergym.reproduce import prefix

        model = tmp_path / "model"  # where run_on_a_model_dir builds the checkpoint
        monkeypatch.setattr(prefix, "prefix_models", lambda args: {"same": str(model), "foreign": str(model)})
    out, _, _ = run_on_a_model_dir(name, tmp_path, monkeypatch)
    assert json.loads((out / "seed0" / "grpo" / "metrics.jsonl").read_text().splitlines()[0])["step"] == 0
