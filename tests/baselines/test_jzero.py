"""The J-Zero loop and its small trainable policies."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from papergym.baselines import jzero
from papergym.baselines.jzero import JZeroConfig, JZeroLoop
from papergym.baselines.jzero_policies import (
    ChallengerPolicy,
    Sample,
    SoftmaxHeads,
    SolverPolicy,
    realize_answer,
)
from papergym.core import info_keys as K
from papergym.envs.selfplay import raw_env
from papergym.envs.selfplay.writing import parse_constraints

SMALL = JZeroConfig(briefs=3, challenger_group=2, group_size=3, eval_tasks=3, probes=4)


def test_the_loop_runs_two_iterations_and_trains_every_role() -> None:
    loop = JZeroLoop(SMALL)
    judge_before = loop.judge.weights.copy()
    solver_before = {k: v.detach().clone() for k, v in loop.solver.heads.logits.items()}
    stats = loop.run(2)
    assert [s.iteration for s in stats] == [0, 1] and loop.history == stats
    for s in stats:
        assert 0.0 <= s.hidden_quality <= 1.0 and 0.0 <= s.judge_agreement <= 1.0
        assert -1.0 - 1.0 <= s.challenger_reward <= 1.0 and s.judge_pairs > 0
    assert not np.allclose(loop.judge.weights, judge_before)
    moved = [not bool((loop.solver.heads.logits[k] == v).all()) for k, v in solver_before.items()]
    assert any(moved) or sum(s.kept_tasks for s in stats) == 0


def test_frozen_roles_are_not_updated() -> None:
    loop = JZeroLoop(SMALL, env_kwargs={"trainable": {"judge": False, "challenger": False}})
    judge_before = loop.judge.weights.copy()
    challenger_before = {k: v.detach().clone() for k, v in loop.challenger.heads.logits.items()}
    loop.run(1)
    assert np.array_equal(loop.judge.weights, judge_before) and loop.history[0].judge_loss == 0.0
    assert all(bool((loop.challenger.heads.logits[k] == v).all()) for k, v in challenger_before.items())


def test_a_mixed_domain_loop_evaluates_its_writing_tasks_in_the_writing_domain() -> None:
    loop = JZeroLoop(JZeroConfig(**{**SMALL.__dict__, "domains": ("writing", "math"), "eval_tasks": 4}))
    quality, _ = loop.evaluate()  # before the fix, a held-out seed could draw a math round and raise
    assert 0.0 < quality <= 1.0
    seed, text, _ = loop._eval[0]
    assert loop.play(seed, challenger_text=text, domain="writing").infos["solver"][K.DOMAIN] == "writing"


def test_the_loop_is_deterministic_given_its_seed() -> None:
    def run(seed: int) -> list[tuple[float, float, float]]:
        loop = JZeroLoop(
            JZeroConfig(briefs=2, challenger_group=2, group_size=2, eval_tasks=2, probes=3, seed=seed)
        )
        return [(s.hidden_quality, s.judge_agreement, s.challenger_reward) for s in loop.run(1)]

    assert run(1) == run(1)
    with pytest.raises(ValueError, match="band"):
        JZeroLoop(JZeroConfig(band=(0.8, 0.2)))
    with pytest.raises(ValueError, match="judge_pool"):
        JZeroLoop(JZeroConfig(judge_pool="some"))


def test_grpo_update_raises_the_probability_of_the_advantaged_choice() -> None:
    heads = SoftmaxHeads({"h": (1, 3)}, lr=0.1, epochs=4)
    samples = [Sample("a", [("h", 0, 0)]), Sample("b", [("h", 0, 1)]), Sample("c", [("h", 0, 2)])]
    for _ in range(5):
        heads.update(samples, [1.0, -0.5, -0.5])
    probs = heads.probabilities("h")
    assert probs[0] > 0.6 and probs[1] < 0.25
    assert heads.update([Sample("x")], [1.0]) == 0.0
    with pytest.raises(ValueError):
        heads.update(samples, [1.0])


def test_draws_follow_the_logits_after_an_update() -> None:
    heads = SoftmaxHeads({"h": (2, 2)}, lr=0.5, epochs=4)
    rng = np.random.default_rng(0)
    before = [heads.draw("h", 0, rng, []) for _ in range(200)]
    samples = [Sample("a", [("h", 0, 0)]), Sample("b", [("h", 0, 1)])]
    heads.update(samples, [1.0, -1.0])  # choice 0 of row 0 advantaged
    after = [heads.draw("h", 0, rng, []) for _ in range(200)]
    assert heads.probabilities("h", 0)[0] > 0.9
    assert after.count(0) > 170 and 70 < before.count(0) < 130  # no stale cached probabilities


def test_log_probs_gather_each_decision_of_each_sample() -> None:
    import torch

    heads = SoftmaxHeads({"a": (2, 3), "b": (1, 2)})
    with torch.no_grad():
        heads.logits["a"].copy_(torch.tensor([[0.0, 1.0, 2.0], [3.0, 0.0, -1.0]]))
        heads.logits["b"].copy_(torch.tensor([[0.5, -0.5]]))
    samples = [Sample("x", [("a", 1, 0), ("b", 0, 1)]), Sample("y", [("a", 0, 2)])]
    logp, mask = heads._logp(samples)
    expected = [
        [torch.log_softmax(heads.logits["a"][1], 0)[0], torch.log_softmax(heads.logits["b"][0], 0)[1]],
        [torch.log_softmax(heads.logits["a"][0], 0)[2], torch.tensor(0.0)],
    ]
    assert torch.allclose(logp.detach(), torch.tensor([[float(v.detach()) for v in row] for row in expected]))
    assert mask.tolist() == [[1.0, 1.0], [1.0, 0.0]]
    logp.sum().backward()
    assert heads.logits["a"].grad is not None and heads.logits["b"].grad is not None


def test_policies_write_well_formed_actions_for_the_env() -> None:
    env = raw_env(domains=("writing", "math"), group_size=2)
    challenger, solver, rng = ChallengerPolicy(), SolverPolicy(), np.random.default_rng(0)
    for seed in range(8):
        env.reset(seed=seed)
        sample = challenger.act(env.observe("challenger"), rng)
        env.step(sample.text)
        assert env.game.active == "solver", sample.text  # always parseable
        if env.game.round.domain == "writing":
            assert sample.decisions and parse_constraints(env.game.round.task) is not None
        answers = [solver.act(env.observe("solver"), rng) for _ in range(2)]
        for a in answers:
            env.step(a.text)
        assert env.game.active == "judge"


def test_realize_answer_applies_each_treatment() -> None:
    task = "Write about the harbor boats.\ninclude: tide\nend_with: ?\nmin_words: 12\nbullets: 2"
    text = realize_answer(
        task,
        4,
        "task_words",
        [
            ("mention", "include", "tide"),
            ("end", "end_with", "?"),
            ("pad_to", "min_words", "12"),
            ("bullets", "bullets", "2"),
        ],
    )
    constraints = parse_constraints(task)
    assert constraints is not None and all(c.check(text) for c in constraints), text
    assert realize_answer(task, 4, "repeat", []) == "Harbor harbor harbor harbor."


def _tiny_args(out: Path, **kw: object) -> jzero.Args:
    settings: dict = dict(briefs=2, challenger_group=2, group_size=2, eval_tasks=2, probes=3, progress=False)
    return jzero.Args(out=str(out), **{**settings, **kw})


def test_train_jzero_from_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from papergym.baselines.run import read_metrics
    from papergym.cli import main

    out = tmp_path / "run"
    argv = ["train", "jzero", "--iterations", "2", "--briefs", "2", "--challenger-group", "2"]
    argv += ["--group-size", "2", "--eval-tasks", "2", "--probes", "3", "--no-progress", "--out", str(out)]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert printed["out"] == str(out) and printed["iteration"] == 1
    rows = read_metrics(out / "metrics.jsonl")
    assert [r["step"] for r in rows] == [0, 1] and all(0.0 <= r["hidden_quality"] <= 1.0 for r in rows)
    assert (out / "curves.png").exists() and len(
        json.loads((out / "summary.json").read_text())["history"]
    ) == 2
    _check_eval_trace(out / "eval_after.jsonl", rounds=2, answers=2)


def _check_eval_trace(path: Path, *, rounds: int, answers: int) -> None:
    """The held-out rounds as `papergym view` reads them: the challenger's step, then each answer."""
    from papergym.viewer import load_run

    records = load_run(path)
    assert len(records) == rounds and all(r["env"] == "papergym/SelfPlay-v0" for r in records)
    for r in records:
        assert r["steps"] == 1 + answers and "<task>" in r["trace"][0]["action"]
        assert "Role: challenger" in r["trace"][0]["text"] and r["trace"][1]["text"]
    pytest.importorskip("jinja2")
    from papergym.viewer import render_report

    assert "SelfPlay-v0" in render_report(path)


def test_jzero_resume_continues_a_stopped_run_exactly(tmp_path: Path) -> None:
    from papergym.baselines.run import read_metrics

    jzero.main(_tiny_args(tmp_path / "whole", iterations=3))
    jzero.main(_tiny_args(tmp_path / "cut", iterations=2, checkpoint_every=1))  # stopped after 2
    resumed = jzero.main(_tiny_args(tmp_path / "cut", iterations=3, checkpoint_every=1, resume=True))
    whole, cut = (
        read_metrics(tmp_path / "whole" / "metrics.jsonl"),
        read_metrics(tmp_path / "cut" / "metrics.jsonl"),
    )
    assert [r["step"] for r in cut] == [0, 1, 2] and cut == whole
    assert [h["iteration"] for h in resumed["history"]] == [0, 1, 2]


def test_jzero_rejects_another_env(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="SelfPlay-v0"):
        jzero.main(_tiny_args(tmp_path, env="papergym/Math-v0"))
