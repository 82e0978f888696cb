"""``papergym reproduce awm``: arms differing only in the reward wrapper, the measures, smoke, --model."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("tyro")

from papergym.baselines import grpo
from papergym.cli import main as cli
from papergym.core import info_keys as K
from papergym.core.trajectory import Step, Trajectory
from papergym.reproduce import awm, driver, report
from papergym.wrappers import FourCellReward
from tests.reproduce.model_dir import run_on_a_model_dir


def _args(tmp_path: Path, **overrides) -> awm.Args:
    args = driver.resolve_args(awm, awm.Args(smoke=True, out=str(tmp_path)), "awm")
    return dataclasses.replace(args, **overrides)


def test_arms_differ_only_in_the_reward_wrapper(tmp_path: Path) -> None:
    configs = awm.arm_configs(_args(tmp_path, steps=5), "BASE", seed=2)
    driver.check_arms(configs, awm.REFERENCE, awm.MECHANISM)
    assert configs["answer_only"].env_wrapper is None and configs["four_cell"].env_wrapper == "four_cell"
    assert {c.model for c in configs.values()} == {"BASE"} and {c.seed for c in configs.values()} == {2}
    assert {c.steps for c in configs.values()} == {5}
    assert all(c.env_kw == configs["answer_only"].env_kw for c in configs.values())


@pytest.mark.parametrize("change", [{"lr": 3e-4}, {"group_size": 3}, {"env_wrapper": None}])
def test_check_arms_catches_a_change_beyond_the_wrapper(tmp_path: Path, change) -> None:
    configs = awm.arm_configs(_args(tmp_path), "BASE", seed=0)
    configs["four_cell"] = dataclasses.replace(configs["four_cell"], **change)
    with pytest.raises(AssertionError, match="differs from"):
        driver.check_arms(configs, awm.REFERENCE, awm.MECHANISM)


def _lucky_guess(env) -> tuple[float, dict]:
    """Read every page keeping an empty memory, then give the gold answer: right, but unsupported."""
    env.reset(seed=5, options={"split": "train"})
    inner = env.unwrapped
    for _ in inner.chunks:
        env.step("<memory></memory>")
    _, reward, terminated, _, info = env.step(f"<answer>{inner.question.answer}</answer>")
    assert terminated
    return float(reward), info


def test_the_arms_training_envs_score_one_episode_differently(tmp_path: Path) -> None:
    configs = awm.arm_configs(_args(tmp_path), "BASE", seed=0)
    plain = grpo.training_envs(configs["answer_only"], 1)[0]
    wrapped = grpo.training_envs(configs["four_cell"], 1)[0]
    assert isinstance(wrapped, FourCellReward) and not isinstance(plain, FourCellReward)
    (r_plain, info_plain), (r_wrapped, info_wrapped) = _lucky_guess(plain), _lucky_guess(wrapped)
    assert info_plain[K.CHECKS] == info_wrapped[K.CHECKS] == {"correct": True, "memory_answerable": False}
    assert r_plain == 1.0 and r_wrapped == 0.5 and info_wrapped[K.CELL] == "correct_unanswerable"
    assert awm.episode_checks(_trajectory(info_plain)) == (True, False)


def _trajectory(final_info: dict) -> Trajectory:
    return Trajectory("t", 0, [Step("obs", "act", 0.0, final_info)], success=False)


def test_episode_cut_before_its_answer_is_neither_correct_nor_answerable() -> None:
    assert awm.episode_checks(_trajectory({})) == (False, False)
    info = {K.CHECKS: {"correct": False, "memory_answerable": True}}
    assert awm.episode_checks(_trajectory(info)) == (False, True)


def test_unsupported_share_is_a_ratio_of_sums_with_an_interval() -> None:
    unsupported = np.array([[1, 0, 0], [0, 0, 2]])  # correct & not answerable, per (seed, task)
    correct = np.array([[2, 1, 0], [1, 0, 4]])
    share = report.stratified_ratio(unsupported, correct)
    assert share is not None and share.mean == pytest.approx(3 / 8)
    assert 0.0 <= share.low <= share.mean <= share.high <= 1.0
    assert report.stratified_ratio(np.zeros((2, 2)), np.zeros((2, 2))) is None
    with pytest.raises(ValueError, match="shapes differ"):
        report.stratified_ratio(unsupported, correct[:, :2])


def _scores(accuracy: float, answerable: float) -> dict:
    per = {"accuracy": [accuracy] * 4, "answerable": [answerable] * 4}
    return {r: {**per, "unsupported": [1.0] * 4, "correct": [2.0] * 4} for r in awm.READINGS}


def test_summary_reads_the_paired_differences() -> None:
    scores = {
        "base": [_scores(0.2, 0.1)] * 3,
        "answer_only": [_scores(0.3, 0.1)] * 3,
        "four_cell": [_scores(0.5, 0.6)] * 3,
    }
    summary = awm.summarise(scores)
    for reading in awm.READINGS:
        for measure, value in (("accuracy", 0.2), ("answerable", 0.5)):
            cell = summary["differences"][reading][measure]
            assert cell["direction"] == "matches" and cell["difference"].mean == pytest.approx(value)
    assert summary["measures"]["base"]["gold"]["unsupported_share"].mean == pytest.approx(0.5)
    text = awm.section(summary)
    assert "**matches**" in text and "42.5%" in text and "| four_cell | gold pages only |" in text
    assert "nothing to act on" not in text and "scored identically" not in text
    assert "neither supports nor refutes" not in text


def test_reading_says_when_no_memory_was_ever_answerable() -> None:
    rows = [{"step": 0.0, "reward": 0.1, "accuracy": 0.25, "answerable": 0.0}] * 3
    curves = {arm: {0: rows, 1: rows} for arm in awm.TRAINED_ARMS}
    training = awm.training_means(curves)
    assert training["four_cell"]["accuracy"].mean == pytest.approx(0.25)
    scores = {arm: [_scores(0.2, 0.0)] * 2 for arm in awm.ARMS}
    summary = {**awm.summarise(scores), "training": training}
    assert "nothing to act on" in awm.reading(summary)
    assert "scored identically" in awm.reading(summary)  # every arm got the same per-task scores
    assert "neither supports nor refutes" in awm.reading(summary)  # no held-out memory was answerable
    curves["four_cell"][1] = [{**rows[0], "answerable": 0.5}]
    assert "nothing to act on" not in awm.reading({**summary, "training": awm.training_means(curves)})


def test_smoke_run_writes_results_png_and_readme_section(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# benchmarks\n\nkept as is\n")
    out = tmp_path / "run"
    assert cli(["reproduce", "awm", "--smoke", "--out", str(out), "--write", str(readme)]) == 0
    record = json.loads((out / "results.json").read_text())
    assert record["provenance"]["args"]["smoke"] is True and record["provenance"]["packages"]["torch"]
    assert set(record["curves"]) == set(awm.TRAINED_ARMS)
    assert set(record["curves"]["four_cell"]) == {"0", "1"}  # per-seed raw curves
    for rows in record["curves"]["four_cell"].values():
        assert [r["step"] for r in rows] == [0.0]
        assert all(0.0 <= r[m] <= 1.0 for r in rows for m in ("accuracy", "answerable"))
    summary = record["summary"]
    for arm in awm.ARMS:
        for reading in awm.READINGS:
            for measure in awm.MEASURES:
                interval = report.Interval(**summary["measures"][arm][reading][measure])
                assert 0.0 <= interval.low <= interval.mean <= interval.high <= 1.0
        assert len(summary["per_task"][arm]) == 2  # seeds
        assert len(summary["per_task"][arm][0]["gold"]["accuracy"]) == 2  # tasks
    for config in awm.arm_configs(
        driver.resolve_args(awm, awm.Args(smoke=True, out=str(out)), "awm"), "", 0
    ).values():
        assert (Path(config.out) / "final" / "config.json").exists()
    assert list(tmp_path.glob("sft-*/final/config.json"))  # the warm start, cached beside the run
    assert (out / "curves.png").stat().st_size > 0 and (tmp_path / "awm_curves.png").stat().st_size > 0
    text = readme.read_text()
    assert text.startswith("# benchmarks\n\nkept as is\n")
    assert "<!-- reproduce:awm:begin -->" in text and "| arm | reading | accuracy |" in text
    assert "![AWM learning curves](awm_curves.png)" in text


@pytest.mark.slow  # the same warm_base -> GRPO path as ttpo's --model test, which runs in `make test`
def test_model_dir_is_used_as_the_base_without_sft(tmp_path: Path, monkeypatch) -> None:
    out, record, _ = run_on_a_model_dir("awm", tmp_path, monkeypatch)
    assert (
        json.loads((out / "seed0" / "four_cell" / "metrics.jsonl").read_text().splitlines()[0])["step"] == 0
    )
    assert set(record["summary"]["measures"]) == set(awm.ARMS)


def test_skimmer_arms_differ_only_in_the_reward_wrapper(tmp_path: Path) -> None:
    from papergym.reproduce import awm_skimmer

    configs = awm_skimmer.arm_configs(_args(tmp_path, policy="skimmer", skimmer_steps=7), seed=3)
    driver.check_arms(configs, awm.REFERENCE, awm.MECHANISM)
    assert configs["answer_only"].env_wrapper is None and configs["four_cell"].env_wrapper == "four_cell"
    assert {(c.seed, c.steps) for c in configs.values()} == {(3, 7)}
    configs["four_cell"] = dataclasses.replace(configs["four_cell"], lr=0.5)
    with pytest.raises(AssertionError, match="differs from"):
        driver.check_arms(configs, awm.REFERENCE, awm.MECHANISM)


def test_skimmer_smoke_run_writes_its_own_readme_section(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# benchmarks\n\n<!-- reproduce:awm:begin -->\nLM run\n<!-- reproduce:awm:end -->\n")
    out = tmp_path / "run"
    argv = ["reproduce", "awm", "--smoke", "--policy", "skimmer", "--out", str(out), "--write", str(readme)]
    assert cli(argv) == 0
    record = json.loads((out / "results.json").read_text())
    assert record["summary"]["setting"]["policy"] == "skimmer"
    assert not list(tmp_path.glob("sft-*"))  # no warm start
    rows = record["curves"]["four_cell"]["1"]
    assert [r["step"] for r in rows] == [0.0, 1.0] and {"keep_relevant", "keep_unrelated"} <= set(rows[0])
    assert len(record["summary"]["per_task"]["base"][0]["whole"]["accuracy"]) == 2  # tasks
    text = readme.read_text()
    assert "<!-- reproduce:awm:begin -->\nLM run\n<!-- reproduce:awm:end -->" in text  # the LM section kept
    assert "<!-- reproduce:awm-skimmer:begin -->" in text and "learned skimmer" in text
    assert (tmp_path / "awm_skimmer_curves.png").stat().st_size > 0


@pytest.mark.parametrize(("overrides", "message"), [
    ({"policy": "skimmer", "model": "some/dir"}, "takes no --model"),
    ({"policy": "lstm"}, "must be 'lm' or 'skimmer'"),
])  # fmt: skip
def test_bad_policy_arguments_are_refused(tmp_path: Path, overrides, message) -> None:
    with pytest.raises(ValueError, match=message):
        awm.run(_args(tmp_path, **overrides))


def test_training_difference_pairs_each_seeds_mean_over_its_steps() -> None:
    def rows(*accuracy: float) -> list[dict[str, float]]:
        return [{"step": float(i), "accuracy": a, "answerable": a / 2} for i, a in enumerate(accuracy)]

    curves = {
        "answer_only": {0: rows(0.0, 0.5), 1: rows(0.0, 1.0)},
        "four_cell": {0: rows(0.5, 0.5), 1: rows(1.0, 1.0)},
    }
    gap = awm.training_difference(curves)
    assert gap["accuracy"].mean == pytest.approx(0.375) and gap["answerable"].mean == pytest.approx(0.1875)
    assert gap["accuracy"].low == pytest.approx(0.25) and gap["accuracy"].high == pytest.approx(0.5)
    assert awm.training_difference({**curves, "four_cell": {0: rows(1.0)}}) == {}  # seeds differ
