"""``papergym reproduce jzero``: arms that differ only in the judge's labels or its training, a held-out
rubric that reads no constraint check, and the smoke run end to end."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("tyro")

from papergym.baselines import jzero as trainer
from papergym.cli import main as cli
from papergym.envs.selfplay.writing import TOPICS, Brief, Constraint
from papergym.reproduce import driver, jzero


def _args(tmp_path: Path) -> jzero.Args:
    return driver.resolve_args(jzero, jzero.Args(smoke=True, out=str(tmp_path)), "jzero")  # type: ignore[return-value]


def test_arms_differ_only_in_the_judge_labels_or_its_training(tmp_path: Path) -> None:
    configs = jzero.arm_configs(_args(tmp_path), seed=1)
    driver.check_arms(configs, jzero.REFERENCE, jzero.MECHANISM)
    assert {c.seed for c in configs.values()} == {1}
    assert configs["self_scored"].judge_labels == "self_scored"
    assert configs["role_only"].env_kw == ['pair_kinds=["role_asymmetry"]']
    assert configs["fixed_judge"].judge_labels == "structural" and configs["fixed_judge"].env_kw == [
        jzero.FIXED_JUDGE
    ]
    configs["fixed_judge"] = dataclasses.replace(configs["fixed_judge"], briefs=3)
    with pytest.raises(AssertionError, match="briefs"):
        driver.check_arms(configs, jzero.REFERENCE, jzero.MECHANISM)


def test_the_fixed_judge_is_never_updated_and_the_structural_one_is(tmp_path: Path) -> None:
    configs = jzero.arm_configs(_args(tmp_path), seed=0)
    fixed, structural = trainer.build_loop(configs["fixed_judge"]), trainer.build_loop(configs["structural"])
    before = fixed.judge.weights.copy()
    assert np.array_equal(before, structural.judge.weights)  # the same initial judge
    fixed.run(1)
    structural.run(1)
    assert np.array_equal(fixed.judge.weights, before) and fixed.history[0].judge_loss == 0.0
    assert not np.allclose(structural.judge.weights, before)


@pytest.mark.parametrize(
    ("arm", "kinds"),
    [
        ("structural", {"role_asymmetry", "subtask_amplification"}),
        ("role_only", {"role_asymmetry"}),
        ("subtask_only", {"subtask_amplification"}),
    ],
)
def test_each_pair_kind_ablation_trains_its_judge_on_that_kind_alone(
    tmp_path: Path, arm: str, kinds: set[str]
) -> None:
    config = dataclasses.replace(jzero.arm_configs(_args(tmp_path), seed=0)[arm], domains=("writing",))
    loop = trainer.build_loop(config)
    update, seen = loop.judge.update, []

    def recording_update(pairs: list) -> float:
        seen.extend(pairs)
        return update(pairs)

    loop.judge.update = recording_update  # type: ignore[method-assign]
    loop.run(2)
    assert {pair.kind for pair in seen} == kinds


def test_the_held_out_rubric_reads_no_constraint_check() -> None:
    rubric, brief = jzero.HeldOutRubric(), Brief("harbor", TOPICS["harbor"], "", ())
    text = "The boats near the tide, the gulls under every old roof."  # three topic words
    no_words = (Constraint("max_words", "5"), Constraint("end_with", "?"), Constraint("bullets", "3"))
    assert not any(c.check(text) for c in no_words)
    assert rubric(text, brief, no_words) == rubric(text, brief, ())  # unmet checks change nothing
    fixed = no_words[1].fixed(text)  # meeting end_with: "?" changes no word
    assert no_words[1].check(fixed) and rubric(fixed, brief, no_words) == rubric(text, brief, no_words)
    named = (Constraint("include", "gulls"),)
    assert rubric(text, brief, named) < rubric(text, brief, ())  # a word the task names is no coverage
    assert rubric("boats " * 20, brief, ()) < rubric(text, brief, ()) and rubric("", brief, ()) == 0.0


def test_smoke_run_writes_results_pngs_and_readme_section(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# benchmarks\n\nkept as is\n")
    out = tmp_path / "run"
    assert cli(["reproduce", "jzero", "--smoke", "--out", str(out), "--write", str(readme)]) == 0
    record = json.loads((out / "results.json").read_text())
    assert record["provenance"]["args"]["smoke"] is True
    curves = record["curves"]
    assert set(curves) == set(jzero.ARMS) and set(curves["structural"]) == {"0", "1"}
    steps = jzero.SMOKE["steps"]
    for arm in jzero.ARMS:
        rows = curves[arm]["0"]
        assert [r["iteration"] for r in rows] == list(range(steps + 1))
        assert all(len(r["open_ended_tasks"]) == jzero.SMOKE["heldout_writing"] for r in rows)
        assert all(0.0 <= r["open_ended"] <= 1.0 and 0.0 <= r["math"] <= 1.0 for r in rows)
    # the same initial solver is scored with the same random numbers in every arm
    assert len({json.dumps(curves[arm]["1"][0]["open_ended_tasks"]) for arm in jzero.ARMS}) == 1
    summary = record["summary"]
    assert set(summary["verdicts"].values()) <= {"matches", "does not match", "inconclusive"}
    assert len(summary["claims"]) == 6 and set(summary["open_ended"]) == set(jzero.ARMS)
    for png in ("jzero_open_ended.png", "jzero_verifiable.png"):
        assert (out / png).stat().st_size > 0 and (tmp_path / png).exists()
    text = readme.read_text()
    assert text.startswith("# benchmarks\n\nkept as is\n") and "<!-- reproduce:jzero:begin -->" in text
    assert "| claim | difference | ours | paper | direction |" in text
    assert [row["arm"] for row in summary["ablations"]] == ["structural", "role_only", "subtask_only"]
    assert '| role_only | `pair_kinds=["role_asymmetry"]` |' in text


def test_a_model_directory_is_refused_plainly(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="none can take an HF checkpoint"):
        cli(["reproduce", "jzero", "--smoke", "--model", str(tmp_path), "--out", str(tmp_path / "run")])
