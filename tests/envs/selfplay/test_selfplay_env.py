"""papergym/SelfPlay-v0: PettingZoo's API and seed tests, the round's rewards, determinism."""

from __future__ import annotations

import pickle
import subprocess
import sys
import warnings

import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test

import papergym
from papergym.core import info_keys as K
from papergym.envs.selfplay import BTJudge, parallel_env, raw_env
from papergym.envs.selfplay.writing import Constraint

ID = "papergym/SelfPlay-v0"
WRITING_TASK = (
    "<task>Write a short note about the river.\ninclude: ferry\nend_with: ?</task>\n"
    "<reference>The ferry crosses the river at dawn, past the reeds and the banks?</reference>"
)


@pytest.mark.parametrize("domains", [("writing", "math"), ("writing",), ("code", "science")])
def test_pettingzoo_api_test(domains: tuple[str, ...]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PettingZoo warns that text observations are not numpy arrays
        api_test(papergym.make_multiagent(ID, domains=domains), num_cycles=20)
        parallel_api_test(papergym.make_multiagent(ID, parallel=True, domains=domains), num_cycles=20)


def test_pettingzoo_seed_tests() -> None:
    seed_test(lambda: papergym.make_multiagent(ID), num_cycles=20)
    parallel_seed_test(lambda: papergym.make_multiagent(ID, parallel=True), num_cycles=20)


def test_make_multiagent_rejects_gymnasium_ids_and_cli_lists_it(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match=r"gymnasium\.make"):
        papergym.make_multiagent("papergym/Reasoning-v0")
    assert ID in papergym.MULTIAGENT_IDS and ID not in papergym.ENV_IDS
    from papergym.cli import main

    assert main(["list"]) == 0
    assert ID in capsys.readouterr().out
    import gymnasium as gym

    assert ID not in gym.registry


def _play(env: raw_env, challenger: str, answers: list[str], judge: str | None = None) -> None:
    env.step(challenger)
    for a in answers:
        env.step(a)
    env.step(env.judge_action() if judge is None else judge)


def test_verifiable_round_rewards_by_hand() -> None:
    env = raw_env(domains=("math",), group_size=4)
    env.reset(seed=3)
    _play(
        env, "<task>What is 6 * 7?</task><reference>42</reference>", ["\\boxed{42}", "42", "\\boxed{41}", ""]
    )
    # p̂ = 2/4 answers equal the reference -> 1 - 2|0.5 - 0.5| = 1.
    assert env.rewards["challenger"] == pytest.approx(1.0)
    assert env.infos["solver"][K.SOLVER_REWARDS] == [1.0, 1.0, 0.0, -0.1]
    assert env.rewards["solver"] == pytest.approx((1 + 1 + 0 - 0.1) / 4)
    assert env.infos["solver"][K.INVALID_ACTION] is True
    # role-asymmetry pairs: reference over each answer that does not match it (41 and "")
    pairs = env.infos["judge"][K.PAIRS]
    assert len(pairs) == 2 and all(p["kind"] == "role_asymmetry" for p in pairs)
    assert all(p["chosen"] == "\\boxed{42}" for p in pairs)


def test_unparseable_task_scores_minus_one_and_ends_the_round() -> None:
    env = raw_env(domains=("writing",))
    env.reset(seed=0)
    env.step("no tags at all")
    assert all(env.terminations.values())
    assert env.rewards == {"challenger": -1.0, "solver": 0.0, "judge": 0.0}
    assert env.infos["challenger"][K.INVALID_ACTION] and env.infos["challenger"][K.PARSED_ACTION] is None
    env.reset(seed=0)
    env.step("<task>x\nmin_words: 9999</task><reference>y</reference>")  # an unusable constraint argument
    assert env.rewards["challenger"] == -1.0


def test_open_ended_rewards_follow_the_judge_scores() -> None:
    env = raw_env(domains=("writing",), group_size=3)
    env.reset(seed=1)
    answers = ["The ferry is late?", "ferry", "Nothing here."]
    env.step(WRITING_TASK)
    for a in answers:
        env.step(a)
    candidates = env.infos["judge"].get(K.CANDIDATES) or env.unwrapped.game.round.candidates
    # score = number of words: a hand-checkable judge
    scores = [len(c.split()) for c in candidates]
    env.step("<scores>" + " ".join(map(str, scores)) + "</scores>")
    info = env.infos["judge"]
    assert info[K.JUDGE_SCORES] == scores
    by_text = dict(zip(candidates, scores, strict=True))
    s = [by_text[a] for a in answers]  # 4, 1, 2 words
    from papergym.envs.selfplay.pairs import bt_win_rates

    assert env.infos["solver"][K.SOLVER_REWARDS] == pytest.approx(bt_win_rates(s))
    # the reference (14 words) beats every answer: p̂ = 0 -> challenger reward 0
    assert env.infos["challenger"][K.SOLVER_AGREEMENT] == 0.0 and env.rewards["challenger"] == 0.0
    pairs = info[K.PAIRS]
    correct = sum(scores[p["chosen_index"]] > scores[p["rejected_index"]] for p in pairs)
    assert env.rewards["judge"] == pytest.approx(correct / len(pairs))
    assert {p["kind"] for p in pairs} == {"role_asymmetry", "subtask_amplification"}
    assert len(info[K.HIDDEN_QUALITY]) == len(candidates)


def test_self_scored_labels_follow_the_judge() -> None:
    env = raw_env(domains=("writing",), group_size=2, judge_labels="self_scored")
    env.reset(seed=1)
    _play(env, WRITING_TASK, ["The ferry is late?", "ferry"])
    info = env.infos["judge"]
    scores = info[K.JUDGE_SCORES]
    assert all(scores[p["chosen_index"]] >= scores[p["rejected_index"]] for p in info[K.PAIRS])


def test_garbage_judge_and_missing_parallel_action() -> None:
    env = raw_env(domains=("writing",), group_size=2)
    env.reset(seed=2)
    _play(env, WRITING_TASK, ["a", "b"], judge="<scores>1 nan</scores>")
    assert env.rewards["judge"] == -0.1 and env.infos["judge"][K.INVALID_ACTION]
    assert env.infos["solver"][K.SOLVER_REWARDS] == [0.5, 0.5]
    penv = parallel_env(group_size=2)
    penv.reset(seed=0)
    with pytest.raises(ValueError, match="challenger"):
        penv.step({"solver": "x"})
    with pytest.raises(ValueError, match="unknown argument"):
        parallel_env(group=3)


def test_trainable_flags_and_bad_arguments() -> None:
    env = raw_env(trainable={"judge": False})
    env.reset(seed=0)
    assert env.infos["judge"][K.TRAINABLE] is False and env.infos["solver"][K.TRAINABLE] is True
    for kwargs in ({"trainable": {"critic": True}}, {"domains": ("poetry",)}, {"group_size": 1}):
        with pytest.raises(ValueError):
            raw_env(**kwargs)
    with pytest.raises(ValueError, match="domain"):
        env.reset(options={"domain": "code"})


def test_the_round_is_deterministic_and_the_env_pickles() -> None:
    def run(seed: int) -> list:
        env = raw_env(domains=("writing", "math"), judge=BTJudge(seed=5))
        out = []
        for ep in range(3):
            env.reset(seed=seed + ep)
            out.append(env.observe("challenger"))
            _play(env, WRITING_TASK, ["The ferry?", "ferry ferry", "x", "The ferry crosses?"])
            out.append((dict(env.rewards), env.infos["judge"].get(K.CANDIDATES)))
        return out

    assert run(0) == run(0)
    assert run(0) != run(10)
    assert pickle.loads(pickle.dumps(raw_env())).possible_agents == ["challenger", "solver", "judge"]


def test_same_seed_same_round_across_processes() -> None:
    code = (
        "import papergym; e = papergym.make_multiagent('papergym/SelfPlay-v0'); e.reset(seed=7); "
        "print(repr(e.observe('challenger')))"
    )
    outs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        for _ in range(2)
    }
    env = papergym.make_multiagent(ID)
    env.reset(seed=7)
    assert outs == {repr(env.observe("challenger")) + "\n"}


def test_hidden_quality_is_not_read_by_any_reward() -> None:
    """The rewards are the same whatever the hidden rubric says."""
    from papergym.envs.selfplay.writing import QualityRubric

    results = []
    for rubric in (QualityRubric(), QualityRubric(w_constraints=0.0, w_style=1.0, ideal_words=3)):
        env = raw_env(domains=("writing",), group_size=3, rubric=rubric)
        env.reset(seed=4)
        _play(env, WRITING_TASK, ["The ferry?", "ferry", "Rivers."])
        results.append(
            (dict(env.rewards), env.infos["solver"][K.SOLVER_REWARDS], env.infos["solver"][K.HIDDEN_QUALITY])
        )
    assert results[0][:2] == results[1][:2] and results[0][2] != results[1][2]
    assert Constraint("include", "ferry").check("The ferry?")
