"""``papergym reproduce ttpo``: the smoke run end to end, arms that differ only in the objective, --model."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("tyro")

from papergym.cli import main as cli
from papergym.reproduce import driver, report
from papergym.reproduce import ttpo as repro
from tests.reproduce.model_dir import run_on_a_model_dir


def _args(tmp_path: Path, **overrides) -> repro.Args:
    args = driver.resolve_args(repro, repro.Args(smoke=True, out=str(tmp_path)), "ttpo")
    return dataclasses.replace(args, **overrides)


def test_arms_differ_only_in_the_objective(tmp_path: Path) -> None:
    configs = repro.arm_configs(_args(tmp_path, ttpo_kw=["confidence=0.8"]), "BASE", seed=1)
    driver.check_arms(configs, repro.REFERENCE, repro.MECHANISM)
    assert {c.objective for c in configs.values()} == {"ttrl", "ttpo", "opsd"}
    assert {c.model for c in configs.values()} == {"BASE"} and {c.seed for c in configs.values()} == {1}
    assert {c.confidence for c in configs.values()} == {0.8}  # ttpo_kw reaches every arm alike
    assert all("n_problems=4" in c.env_kw and "domain=arith" in c.env_kw for c in configs.values())


@pytest.mark.parametrize("arm, change", [("ttrl", {"lr": 3e-4}), ("opsd", {"teacher": "current"})])
def test_check_arms_catches_a_change_beyond_the_objective(tmp_path: Path, arm, change) -> None:
    configs = repro.arm_configs(_args(tmp_path), "BASE", seed=0)
    configs[arm] = dataclasses.replace(configs[arm], **change)
    with pytest.raises(AssertionError, match="differs from"):
        driver.check_arms(configs, repro.REFERENCE, repro.MECHANISM)


def test_sft_never_plays_a_test_task(tmp_path: Path) -> None:
    overlap = repro.sft_overlap(_args(tmp_path, sft_episodes=200, n_problems=16, difficulty=3))
    assert overlap["shared_task_ids"] == 0
    assert 0.0 <= overlap["test_expressions_seen_in_sft"] <= 1.0
    assert 1 < overlap["sft_distinct_expressions"] <= 200
    assert repro._expression("Compute 23 - 5.") == repro._expression("What is 23 - 5?") == "23 - 5"


def test_summary_reads_the_paired_differences() -> None:
    # ttpo right on every problem, the others on none: ttpo - x is +1 and "matches"
    def scores(value: float) -> dict:
        per = [value] * 5
        return {"accuracy": per, "majority": per, "greedy": per, "pseudo_label_error": 0.5,
                "disagree_error": 0.75}  # fmt: skip

    all_scores = {arm: [scores(1.0 if arm == "ttpo" else 0.0)] * 3 for arm in repro.ARMS}
    rows = [{"step": 0.0, "pseudo_label_error": 0.8, "disagree_error": 0.7}]
    curves = {arm: dict.fromkeys(range(3), rows) for arm in repro.TRAINED_ARMS}
    summary = repro.summarise(all_scores, curves)
    for pair in ("ttpo-base", "ttpo-opsd", "ttpo-ttrl"):
        assert summary["differences"][pair]["accuracy"]["direction"] == "matches"
        assert summary["differences"][pair]["accuracy"]["difference"].mean == 1.0
    assert summary["differences"]["ttrl-base"]["greedy"]["direction"] == "inconclusive"
    assert summary["labels"]["ttpo"]["pseudo_label_error"].mean == pytest.approx(0.8)
    assert "does not match" not in repro.reading(summary)


def test_smoke_run_writes_results_pngs_and_readme_section(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# benchmarks\n\nkept as is\n")
    out = tmp_path / "run"
    assert cli(["reproduce", "ttpo", "--smoke", "--out", str(out), "--write", str(readme)]) == 0
    record = json.loads((out / "results.json").read_text())
    assert record["provenance"]["args"]["smoke"] is True and record["provenance"]["packages"]["torch"]
    assert set(record["curves"]) == set(repro.TRAINED_ARMS)
    assert set(record["curves"]["ttpo"]) == {"0", "1"}  # per-seed raw curves
    assert [row["step"] for row in record["curves"]["opsd"]["1"]] == [0.0, 1.0]
    summary = record["summary"]
    assert set(summary["accuracy"]) == set(repro.ARMS)
    for arm in repro.ARMS:
        for metric in ("accuracy", "majority", "greedy"):
            interval = report.Interval(**summary["accuracy"][arm][metric])
            assert 0.0 <= interval.low <= interval.mean <= interval.high <= 1.0
        assert len(summary["per_problem"][arm]) == 2  # seeds
        assert all(len(summary["per_problem"][arm][0][m]) == 4 for m in ("accuracy", "majority", "greedy"))
    assert summary["sft_overlap"]["shared_task_ids"] == 0
    assert len(summary["hint_gain"]["per_problem"]) == 4 and 0 <= summary["hint_gain"]["share_positive"] <= 1
    assert list(tmp_path.glob("sft-*/final/config.json"))  # the warm start, cached beside the run
    assert (out / "curves.png").stat().st_size > 0 and (out / "labels.png").stat().st_size > 0
    assert (tmp_path / "ttpo_curves.png").stat().st_size > 0  # beside the README it links it from
    text = readme.read_text()
    assert text.startswith("# benchmarks\n\nkept as is\n")
    assert "<!-- reproduce:ttpo:begin -->" in text and "| arm | sampled pass@1 |" in text
    assert "![TTPO learning curves](ttpo_curves.png)" in text


def test_model_dir_is_used_as_the_base_without_sft(tmp_path: Path, monkeypatch) -> None:
    _, record, _ = run_on_a_model_dir("ttpo", tmp_path, monkeypatch)
    assert record["summary"]["sft_overlap"] is None
    # the answering model answers, so votes exist and every trained arm logged a label error
    for arm in repro.TRAINED_ARMS:
        errors = [r["pseudo_label_error"] for r in record["curves"][arm]["0"] if "pseudo_label_error" in r]
        assert errors and all(0.0 <= e <= 1.0 for e in errors), (arm, record["curves"][arm]["0"])
