"""The trainers' and the reproductions' evaluations record their episodes step by step for `papergym view`."""

from __future__ import annotations

from pathlib import Path

import pytest

from papergym.baselines.run import PolicyRunArgs, evaluate_args, evaluate_policy
from papergym.viewer import load_run

ENV = "papergym/Reasoning-v0"
KWARGS = {"domain": "math"}


def _check_run(path: Path, seeds: list[int]) -> None:
    records = load_run(path)
    assert [r["seed"] for r in records] == seeds
    for r in records:
        assert r["env"] == ENV and r["task_id"] and len(r["trace"]) == r["steps"] >= 1
        step = r["trace"][0]
        assert isinstance(step["action"], str) and step["text"] and "reward_components" in step


def test_evaluate_policy_writes_a_viewable_trace(tiny_policy, tmp_path: Path) -> None:
    trace = tmp_path / "eval.jsonl"
    result = evaluate_policy(
        tiny_policy, ENV, KWARGS, tasks=3, batch=2, max_new_tokens=6, seed=100, trace=trace
    )
    assert result["n"] == 3
    _check_run(trace, [100, 101, 102])
    pytest.importorskip("jinja2")
    from papergym.viewer import render_report

    assert "Reasoning-v0" in render_report(trace)


def test_evaluate_args_names_the_trace_by_when(tiny_policy, tmp_path: Path) -> None:
    args = PolicyRunArgs(env=ENV, env_kw=["domain=math"], out=str(tmp_path / "run"), eval_tasks=2)
    evaluate_args(tiny_policy, args, max_new_tokens=6, when="before")
    assert (tmp_path / "run" / "eval_before.jsonl").exists()
    quiet = PolicyRunArgs(env=ENV, env_kw=["domain=math"], out=str(tmp_path / "quiet"), eval_tasks=2)
    quiet.eval_trace = False
    evaluate_args(tiny_policy, quiet, max_new_tokens=6)
    assert not (tmp_path / "quiet").exists()


def test_sample_tasks_records_each_tasks_first_attempt(tiny_policy, tmp_path: Path) -> None:
    from papergym.reproduce.evaluation import sample_tasks

    trace = tmp_path / "traces" / "model_s7.jsonl"
    samples = sample_tasks(tiny_policy, ENV, KWARGS, tasks=2, n=3, seed=7, max_new_tokens=6, trace=trace)
    assert [t.n for t in samples] == [3, 3]
    _check_run(trace, [7, 8])


def test_trace_path_names_the_model_relative_to_the_run(tmp_path: Path) -> None:
    from papergym.reproduce.driver import ReproArgs, trace_path

    args = ReproArgs(out=str(tmp_path / "run"))
    arm = trace_path(args, str(tmp_path / "run" / "seed0" / "grpo" / "final"), 5)
    assert arm == tmp_path / "run" / "traces" / "seed0_grpo_final_s5.jsonl"
    warm = trace_path(args, str(tmp_path / "sft-0a1b" / "final"), 5)  # the warm start beside the run
    assert warm.name == "sft-0a1b_final_s5.jsonl"
