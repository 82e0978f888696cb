"""``papergym reproduce m2rl``: arms that differ only in their mechanism, and the smoke run end to end."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("tyro")

from papergym.baselines import grpo, merge, mopd
from papergym.cli import main as cli
from papergym.reproduce import driver, es_vs_grpo, m2rl
from tests.reproduce.model_dir import run_on_a_model_dir


def _configs(tmp_path: Path, seed: int = 0) -> tuple[m2rl.Args, dict]:
    args = driver.resolve_args(m2rl, m2rl.Args(smoke=True, out=str(tmp_path)), "m2rl")
    return args, m2rl.arm_configs(args, "BASE", seed)


def test_arms_differ_only_in_the_mechanism_and_spend_one_budget(tmp_path: Path) -> None:
    args, configs = _configs(tmp_path, seed=2)
    m2rl.check(configs, args.domains)
    experts = [configs[f"expert_{d}"] for d in args.domains]
    assert all(isinstance(c, grpo.Args) and c.env == "papergym/Reasoning-v0" for c in experts)
    assert [c.env_kw for c in experts] == [
        ["domain=countdown", "difficulty=1"],
        ["domain=arith", "difficulty=1"],
    ]
    assert configs["mix_rl"].env == configs["mopd"].env == "papergym/MultiDomain-v0"
    # level 1, es-vs-grpo's mixture in its order: the SFT warm start (keyed on env and kwargs) is shared
    assert configs["mix_rl"].env_kw == configs["mopd"].env_kw == es_vs_grpo.Args().env_kw
    assert m2rl.budget(configs["mix_rl"]) == m2rl.budget(configs["mopd"]) == sum(map(m2rl.budget, experts))
    assert {c.model for c in (*experts, configs["mix_rl"], configs["mopd"])} == {"BASE"}
    finals = [str(Path(c.out) / "final") for c in experts]
    assert mopd.parse_teachers(configs["mopd"].teachers) == dict(zip(args.domains, finals, strict=True))
    assert [configs[arm].method for arm in m2rl.MERGES] == ["task_arithmetic", "ties", "dare_task_arithmetic"]
    assert all(configs[arm].experts == finals and configs[arm].seed == 2 for arm in m2rl.MERGES)


@pytest.mark.parametrize(
    "arm, change, named",
    [
        ("expert_arith", {"lr": 3e-4}, "lr"),
        ("expert_countdown", {"group_size": 4}, "group_size"),
        ("mix_rl", {"temperature": 0.7}, "temperature"),  # the reference: shows on the experts and MOPD
        ("mopd", {"steps": 5}, "steps"),
        ("mopd", {"model": "OTHER"}, "model"),
        ("ties", {"keep": 0.5}, "keep"),
        ("dare", {"lam": 0.5}, "lam"),
    ],
)
def test_check_catches_a_change_beyond_the_mechanism(tmp_path: Path, arm, change, named) -> None:
    args, configs = _configs(tmp_path)
    configs[arm] = dataclasses.replace(configs[arm], **change)
    with pytest.raises(AssertionError, match=named):
        m2rl.check(configs, args.domains)


@pytest.mark.parametrize("arm", ["mopd", "task_arithmetic"])
def test_check_catches_fusing_another_seeds_experts(tmp_path: Path, arm) -> None:
    args, configs = _configs(tmp_path, seed=0)
    other = m2rl.arm_configs(args, "BASE", 1)[arm]
    configs[arm] = dataclasses.replace(other, out=configs[arm].out, seed=0)
    with pytest.raises(AssertionError, match="experts"):
        m2rl.check(configs, args.domains)


def test_smoke_run_trains_every_arm_and_writes_the_report(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# benchmarks\n")
    out = tmp_path / "run"
    assert cli(["reproduce", "m2rl", "--smoke", "--out", str(out), "--write", str(readme)]) == 0
    record = json.loads((out / "results.json").read_text())
    summary = record["summary"]
    assert set(summary["accuracy"]) == {"base", "expert_arith", "expert_countdown", *m2rl.FUSED}
    assert set(summary["accuracy"]["mopd"]) == {"arith", "countdown", "all"}
    assert set(record["curves"]) == {"expert_arith", "expert_countdown", "mix_rl", "mopd"}
    assert all(len(record["curves"][arm]) == 2 for arm in record["curves"])  # two smoke seeds
    matrix = summary["cosines"]["mean_matrix"]
    norms = summary["cosines"]["norms"]
    assert (
        list(norms) == summary["cosines"]["names"] == ["expert_countdown", "expert_arith", "mix_rl", "mopd"]
    )
    # MOPD routes to its own seed's experts: at step 0 (student = base) its reverse KL is nonzero exactly
    # when one of them left the base (an expert whose smoke GRPO saw no reward variance is the base itself;
    # which do differs with torch's thread count), and its weights move exactly then: with one episode per
    # pass (micro_batch 1) an unmoved teacher scores the same unpadded rows as the student, so the
    # advantages are exactly 0 (one padded pass left float noise, which Adam amplified into real steps).
    any_moved = False
    for seed in (0, 1):
        moved = any(summary["measured"][f"expert_{d}"][seed]["drift_l2"] > 0 for d in ("arith", "countdown"))
        first = json.loads((out / f"seed{seed}" / "mopd" / "metrics.jsonl").read_text().splitlines()[0])
        assert (abs(first["reverse_kl"]) > 1e-6) == moved, (first["reverse_kl"], moved)
        any_moved = any_moved or moved
    assert (norms["mopd"]["mean"] > 0) == any_moved
    for i, row in enumerate(matrix):  # a task vector that stayed zero (no reward variance) has cosine 0
        assert row[i] == pytest.approx(1.0 if norms[summary["cosines"]["names"][i]]["low"] > 0 else row[i])
        assert all(-1.0 <= v <= 1.0 + 1e-6 and v == pytest.approx(matrix[j][i]) for j, v in enumerate(row))
    assert len(summary["cosines"]["same_domain_across_seeds"]) == 2
    merged = merge.read_state(Path(summary["measured"]["ties"][0]["checkpoint"]))
    assert merged
    assert (
        summary["budgets"]["mix_rl"] == summary["budgets"]["mopd"] == 2 * summary["budgets"]["expert_arith"]
    )
    assert "reproduce:m2rl:begin" in readme.read_text() and (out / "pass_at_k.png").stat().st_size > 0


def test_verdicts_are_inconclusive_unless_an_expert_beats_the_base() -> None:
    from papergym.reproduce.report import Interval

    low, high = Interval(0.10, 0.08, 0.12), Interval(0.30, 0.25, 0.35)
    accuracy = {
        "base": {"arith": low, "countdown": low, "all": low},
        "expert_arith": {"arith": high, "countdown": low, "all": low},
        "expert_countdown": {"arith": low, "countdown": low, "all": low},
    }
    tie = Interval(0.0, -0.01, 0.01)
    summary = {
        "accuracy": accuracy,
        "pass_at_k": {"base": {1: low, 32: low}},
        "pass32_minus_base": {"mix_rl": {"all": tie}},
        "paradigm_gaps": {"mix_rl - mopd": {"arith": tie, "countdown": tie}},
        "mean_abs_gap_points": 0.0,
        "max_abs_gap_points": 0.0,
        "cosines": {
            "names": ["expert_arith", "expert_countdown"],
            "pairs": {"expert_arith · expert_countdown": Interval(0.2, 0.1, 0.3)},
            "same_domain_across_seeds": {},
        },
    }
    assert m2rl.improved_experts(summary) == ["expert_arith"]
    assert "inconclusive" not in m2rl.reading(summary) and m2rl.reading(summary).count("**matches**") == 3
    accuracy["expert_arith"]["arith"] = Interval(0.13, 0.11, 0.15)  # overlaps the base: not an improvement
    assert m2rl.improved_experts(summary) == [] and m2rl.reading(summary).count("**inconclusive**") == 3


def test_model_dir_is_the_base_without_sft(tmp_path: Path, monkeypatch) -> None:
    # what is checked is where the run starts and what the merges build, not how well the model answers:
    # a few fine-tuning steps on MultiDomain-v0's long prompts (40 took ~5 minutes of a loaded CPU)
    out, record, model = run_on_a_model_dir(
        "m2rl", tmp_path, monkeypatch, env_id="papergym/MultiDomain-v0", answer_steps=4
    )
    for arm in ("expert_countdown", "expert_arith", "mix_rl", "mopd"):
        assert json.loads((out / "seed0" / arm / "metrics.jsonl").read_text().splitlines()[0])["step"] == 0
    # the merges add the experts' task vectors to the given checkpoint: same tensors, same shapes
    base, merged = (
        merge.read_state(model),
        merge.read_state(Path(record["summary"]["measured"]["ties"][0]["checkpoint"])),
    )
    assert {k: tuple(v.shape) for k, v in merged.items()} == {k: tuple(v.shape) for k, v in base.items()}
