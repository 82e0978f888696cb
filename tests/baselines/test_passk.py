from __future__ import annotations

import json
from math import comb
from pathlib import Path

import gymnasium as gym
import pytest

import papergym  # noqa: F401
from papergym.baselines.passk import evaluate_pass_at_k, pass_at_k
from papergym.cli import main
from papergym.core.errors import BackendError
from papergym.core.trajectory import OraclePolicy, RandomPolicy


@pytest.mark.parametrize(
    ("n", "c", "k"), [(5, 2, 1), (5, 2, 2), (10, 3, 4), (20, 1, 5), (8, 0, 3), (8, 6, 3)]
)
def test_product_form_matches_the_binomial_definition(n: int, c: int, k: int) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(1 - comb(n - c, k) / comb(n, k))


def test_large_n_stays_finite_and_bounded() -> None:
    value = pass_at_k(2000, 3, 1000)
    assert 0.0 < value <= 1.0 and value == pytest.approx(1 - comb(1997, 1000) / comb(2000, 1000))


@pytest.mark.parametrize(("n", "c", "k"), [(4, 5, 1), (4, -1, 1), (4, 2, 0), (4, 2, 5)])
def test_bad_counts_raise(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)


def _make() -> gym.Env:
    return gym.make("papergym/Reasoning-v0", domain="instruction", difficulty=1)


def test_oracle_has_pass_at_k_one_and_random_grows_with_k() -> None:
    oracle = evaluate_pass_at_k(_make, OraclePolicy(), tasks=5, n=4, ks=[1, 4])
    assert oracle.scores == {1: 1.0, 4: 1.0}
    random = evaluate_pass_at_k(_make, RandomPolicy(), tasks=40, n=6, ks=[1, 3, 6])
    assert random.scores[1] <= random.scores[3] <= random.scores[6] <= 1.0
    assert random.scores[1] == pytest.approx(sum(t["correct"] for t in random.tasks) / (40 * 6))
    with pytest.raises(ValueError):
        evaluate_pass_at_k(_make, OraclePolicy(), tasks=1, n=2, ks=[3])


def test_cli_passk(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "passk.jsonl"
    args = [
        "passk",
        "papergym/Reasoning-v0",
        "--policy",
        "oracle",
        "--tasks",
        "3",
        "--n",
        "2",
        "--k",
        "1",
        "2",
    ]
    assert main([*args, "--out", str(out)]) == 0
    assert "pass@1 1.000  pass@2 1.000 (3 tasks, n=2)" in capsys.readouterr().out
    assert [json.loads(line)["correct"] for line in out.read_text().splitlines()] == [2, 2, 2]


def test_a_backend_fault_leaves_its_task_out() -> None:
    class Flaky(OraclePolicy):
        calls = 0

        def __call__(self, observation: object, info: object) -> str:
            Flaky.calls += 1
            if Flaky.calls == 3:  # the second task's first member
                raise BackendError("down", retryable=True)
            return super().__call__(observation, info)  # type: ignore[arg-type]

    result = evaluate_pass_at_k(_make, Flaky(), tasks=3, n=2, ks=[1])
    assert [("error" in t) for t in result.tasks] == [False, True, False]
    assert result.scores == {1: 1.0}
