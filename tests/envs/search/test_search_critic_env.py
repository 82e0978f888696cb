"""`papergym/SearchCritic-v0`: oracle coverage, feedback recovery, critic hints, budgets, formats."""

from __future__ import annotations

import json
import pickle
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("bm25s")
pytest.importorskip("Stemmer")

from papergym.backends.usage import Usage
from papergym.core import info_keys as K
from papergym.core.errors import BackendError
from papergym.core.trajectory import OraclePolicy, rollout
from papergym.envs.search.critic import cafe_critic
from papergym.envs.search.knowledge_base import read_attribute
from papergym.envs.search.questions import QUESTION_TYPES, normalize_answer
from papergym.envs.search.search_critic_env import SEARCH_R1_INVALID, SearchCriticEnv

N = 2000


def _search(*queries: str) -> str:
    return f"<tool_call>{json.dumps({'name': 'search', 'arguments': {'query': list(queries)}})}</tool_call>"


def _play_oracle(env: SearchCriticEnv, options: dict[str, Any]) -> tuple[bool, str]:
    env.reset(seed=0, options=options)
    for _ in range(40):
        _, _, terminated, truncated, info = env.step(env.oracle_action())
        if terminated or truncated:
            return bool(info[K.SUCCESS]), info[K.REWARD_COMPONENTS]
    return False, {}


@pytest.mark.parametrize("fmt", ["cafe", "search_r1"])
def test_oracle_answers_every_test_question_and_train_questions_of_every_type(fmt: str) -> None:
    env = SearchCriticEnv(fmt, n_passages=N)
    seen: Counter[tuple[str, str]] = Counter()
    for split, count in (("test", 1000), ("train", 300)):
        for index in range(count):
            task_id = f"search-s0-n{N}/{split}/L1/{index}"
            ok, components = _play_oracle(env, {"task_id": task_id})
            assert ok and components == {"outcome": 1.0}, f"oracle failed on {task_id}: {env.item}"
            seen[(split, env.item.qtype)] += 1
    for split in ("train", "test"):
        for qtype in QUESTION_TYPES:
            assert seen[(split, qtype)] >= 20, (split, qtype, seen)


def test_oracle_on_the_default_corpus_size() -> None:
    env = SearchCriticEnv()
    for seed in range(40):
        traj = rollout(env, OraclePolicy(), seed=seed, options={"split": "test"}, max_steps=40)
        assert traj.success


def test_oracle_reads_only_retrieved_text() -> None:
    env = SearchCriticEnv(n_passages=N, question_types=("compositional",))
    env.reset(seed=1)
    action = env.oracle_action()
    assert "<tool_call>" in action and "<answer>" not in action  # nothing retrieved yet: it must search


def _namesake_task(env: SearchCriticEnv) -> tuple[str, int, int]:
    """A birthplace question whose creator has a namesake born elsewhere: (task id, creator, namesake)."""
    kb = env._kb
    for index in range(1000):
        task_id = f"search-s0-n{N}/test/L1/{index}"
        env.reset(options={"task_id": task_id})
        item = env.item
        if item.hops[-1].read != "birthplace":
            continue
        creator = env.corpus.position[item.evidence[1]]
        others = [p for p in kb.namesakes[kb.entities[creator].name] if p != creator]
        if others and kb.entities[others[0]].attrs["birthplace"] != kb.entities[creator].attrs["birthplace"]:
            return task_id, creator, others[0]
    raise AssertionError("no namesake question found")


def _docs(observation: str) -> list[tuple[str, str]]:
    return re.findall(r"Doc \d+\(Title: (.*?)\) (.*)", observation)


def _wrong_entity_episode(request: bool) -> tuple[bool, str]:
    """Search the work, then the creator's namesake (the drift), then optionally ask for feedback."""
    env = SearchCriticEnv(n_passages=N, question_types=("compositional",))
    task_id, _, namesake = _namesake_task(env)
    wrong_occupation = env._kb.entities[namesake].attrs["occupation"]
    obs, _ = env.reset(options={"task_id": task_id})
    work = re.search(r"of the (?:film|novel) (.+) born\?", obs)[1]
    obs = env.step(f"<plan>Find the work, then its creator.</plan>{_search(work)}")[0]
    name = next(read_attribute(text, "creator")[0] for title, text in _docs(obs) if title == work)
    drift = _search(f"{name} {wrong_occupation}")
    obs = env.step(f"<think>The creator is {name}, the {wrong_occupation}.</think>{drift}")[0]
    relied = next((title, text) for title, text in _docs(obs) if title.startswith(name))
    feedback = ""
    if request:
        feedback = env.step(
            "<think>Not sure this is the right person.</think><request_feedback></request_feedback>"
        )[0]
        query = re.search(r'search for "([^"]+)"', feedback)[1]
        obs = env.step(_search(query))[0]
        relied = next((title, text) for title, text in _docs(obs) if title.startswith(name))
    place = read_attribute(relied[1], "birthplace")[0]
    info = env.step(f"<answer>{place}</answer>")[4]
    return bool(info[K.SUCCESS]), feedback


def test_wrong_entity_policy_recovers_only_with_feedback() -> None:
    assert _wrong_entity_episode(request=False)[0] is False
    ok, feedback = _wrong_entity_episode(request=True)
    assert ok
    assert feedback.startswith("<feedback>Wrong entity")


def _feedback_after(env: SearchCriticEnv, task_id: str, k: int, plan: str = "") -> str:
    env.reset(options={"task_id": task_id})
    for _ in range(k):
        env.step(env.oracle_action())
    return env.step(f"<plan>{plan}</plan><request_feedback></request_feedback>")[0]


def test_critic_hints_never_contain_the_gold_answer() -> None:
    env = SearchCriticEnv(n_passages=N)
    kinds: Counter[str] = Counter()
    for index in range(150):
        task_id = f"search-s0-n{N}/test/L1/{index}"
        env.reset(options={"task_id": task_id})
        for k in range(len(env.item.hops) + 1):
            for plan in ("", "So the answer is clear."):
                feedback = _feedback_after(env, task_id, k, plan)
                text = f" {normalize_answer(feedback)} "
                assert all(f" {normalize_answer(a)} " not in text for a in env.item.answers), feedback
                kinds[feedback.split(":")[0].removeprefix("<feedback>")[:20]] += 1
    assert len(kinds) >= 4, kinds  # several diagnoses occur (missing hop, premature, complete, ...)


def test_critic_diagnoses_a_bad_query_and_a_premature_plan() -> None:
    env = SearchCriticEnv(n_passages=N, question_types=("inference",))
    env.reset(seed=0)
    env.step(_search("zebra orchestra"))
    feedback = env.step("<request_feedback></request_feedback>")[0]
    assert "Bad query" in feedback or "Missing hop" in feedback
    env.reset(seed=0)
    env.step(env.oracle_action())
    feedback = env.step("<plan>Therefore the answer is someone.</plan><request_feedback></request_feedback>")[
        0
    ]
    assert "Premature conclusion" in feedback


def test_feedback_budget_and_segments() -> None:
    env = SearchCriticEnv(n_passages=N)
    env.reset(seed=2)
    info = env.step(env.oracle_action())[4]
    assert info[K.SEGMENTS] == {"segment": "pre", "request_step": -1, "n_requests": 0}
    obs, _, _, _, info = env.step("<request_feedback></request_feedback>")
    assert obs.startswith("<feedback>") and info[K.SEGMENTS]["segment"] == "request"
    assert info[K.SEGMENTS]["request_step"] == 1 and info[K.COST]["critic_calls"] == 1
    obs, _, _, _, info = env.step("<request_feedback></request_feedback>")
    assert obs.startswith("No feedback left") and not info[K.INVALID_ACTION]
    assert info[K.SEGMENTS]["n_requests"] == 2 and info[K.COST]["critic_calls"] == 1
    while True:
        _, _, terminated, _, info = env.step(env.oracle_action())
        if terminated:
            break
    seg = info[K.SEGMENTS]
    assert seg["segment"] == "post" and seg["prefix"] == env._s.actions[0] and seg["feedback"]
    assert info[K.SUCCESS]


def test_tool_call_budget_and_bad_arguments() -> None:
    env = SearchCriticEnv(n_passages=N, max_tool_calls=2)
    env.reset(seed=0)
    for bad, message in (
        ('<tool_call>{"name": "search", "arguments": {"query": "Tek"}}</tool_call>', "array of non-empty"),
        ('<tool_call>{"name": "lookup", "arguments": {"query": ["Tek"]}}</tool_call>', "Unknown tool"),
        ('<tool_call>{"name": "search", "arguments": {"q": ["Tek"]}}</tool_call>', "exactly one argument"),
        ("<tool_call>{oops</tool_call>", "Invalid tool call"),
        ("<plan>Only a plan.</plan>", "no action"),
        (f"{_search('a')}<answer>x</answer>", "more than one action"),
    ):
        obs, reward, terminated, _, info = env.step(bad)
        assert info[K.INVALID_ACTION] and message in obs and reward == pytest.approx(-0.1) and not terminated
    for _ in range(2):
        assert not env.step(_search("city"))[4][K.INVALID_ACTION]
    obs, _, _, _, info = env.step(_search("city"))
    assert info[K.INVALID_ACTION] and "answer now" in obs


def test_search_r1_format() -> None:
    env = SearchCriticEnv("search_r1", n_passages=N)
    obs, _ = env.reset(seed=0)
    assert obs.startswith("Answer the given question.") and "Question:" in obs
    obs, _, _, _, info = env.step("<think>hm</think><search>film director</search>")
    assert obs.startswith("\n\n<information>Doc 1(Title: ") and not info[K.INVALID_ACTION]
    obs, _, _, _, info = env.step("<request_feedback></request_feedback>")
    assert info[K.INVALID_ACTION] and obs == SEARCH_R1_INVALID
    traj = rollout(env, OraclePolicy(), seed=4)
    assert traj.success and all("<search>" in s.action or "<answer>" in s.action for s in traj.steps)


def test_answer_checks_carry_f1_and_grounding() -> None:
    env = SearchCriticEnv(n_passages=N)
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step("<answer>Nowhere Special</answer>")
    assert terminated and reward == 0.0 and info[K.REWARD_COMPONENTS] == {"outcome": 0.0}
    assert info[K.CHECKS] == {"exact_match": False, "evidence_retrieved": False, "f1": 0.0, "grounded": False}
    assert not info[K.SUCCESS]


def test_gold_answer_without_retrieving_the_evidence_is_not_a_success() -> None:
    env = SearchCriticEnv(n_passages=N)
    env.reset(seed=0)
    gold = env.unwrapped.item.answers[0]
    _, reward, terminated, _, info = env.step(f"<answer>{gold}</answer>")
    assert terminated and reward == 0.0 and not info[K.SUCCESS]
    assert info[K.CHECKS]["exact_match"] and not info[K.CHECKS]["evidence_retrieved"]


def test_answer_containing_the_gold_answer_is_not_an_exact_match() -> None:
    """Mutation check: swapping exact match for substring match makes this fail."""
    traj = rollout(SearchCriticEnv(n_passages=N), OraclePolicy(), seed=0)
    assert traj.success
    env = SearchCriticEnv(n_passages=N)
    env.reset(seed=0)
    for step in traj.steps[:-1]:
        env.step(step.action)
    gold = env.unwrapped.item.answers[0]
    _, reward, _, _, info = env.step(f"<answer>not {gold} but someone else</answer>")
    assert reward == 0.0 and not info[K.SUCCESS] and not info[K.CHECKS]["exact_match"]
    assert info[K.CHECKS]["evidence_retrieved"]


class _Model:
    def __init__(self, reply: str | None) -> None:
        self.reply = reply
        self.seen: list[Sequence[dict]] = []

    def chat(self, messages: Sequence[dict], *, seed: int | None = None, max_tokens: int = 512,
             temperature: float = 0.0) -> str:  # fmt: skip
        self.seen.append(messages)
        if self.reply is None:
            raise BackendError("server down after retries", retryable=True)
        return self.reply


def test_model_critic_with_cafe_prompt() -> None:
    model = _Model("Thinking... <feedback>Search the director by name.</feedback>")
    env = SearchCriticEnv(n_passages=N, critic=cafe_critic(model))
    env.reset(seed=0)
    obs = env.step("<request_feedback></request_feedback>")[0]
    assert obs == "<feedback>Search the director by name.</feedback>"
    prompt = model.seen[0][-1]["content"]
    assert prompt.startswith("<query>") and env.item.question in prompt and "Do not solve the task" in prompt
    assert "trajectory critic for a Deep Research agent" in model.seen[0][0]["content"]


def test_model_critic_tokens_reach_the_cost() -> None:
    model = _Model("<feedback>Check the entity.</feedback>")
    model.usage = Usage()  # type: ignore[attr-defined]
    real_chat = model.chat

    def chat(messages: Sequence[dict], **kwargs: object) -> str:
        model.usage.add(model_calls=1, prompt_tokens=120, completion_tokens=8)  # type: ignore[attr-defined]
        return real_chat(messages, **kwargs)  # type: ignore[arg-type]

    model.chat = chat  # type: ignore[method-assign]
    env = SearchCriticEnv(n_passages=N, critic=cafe_critic(model))
    env.reset(seed=0)
    info = env.step("<request_feedback></request_feedback>")[4]
    assert info[K.COST] == {"critic_calls": 1, "critic_tokens": 128, "tool_calls": 0}
    oracle_env = SearchCriticEnv(n_passages=N)
    oracle_env.reset(seed=0)
    assert oracle_env.step("<request_feedback></request_feedback>")[4][K.COST]["critic_tokens"] == 0


def test_critic_fault_truncates_with_an_error() -> None:
    env = SearchCriticEnv(n_passages=N, critic=cafe_critic(_Model(None)))
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step("<request_feedback></request_feedback>")
    assert truncated and not terminated and reward == 0.0
    assert info[K.ERROR]["type"] == "BackendError" and info[K.ERROR]["retryable"] and info[K.SUCCESS] is False


def test_bad_constructor_arguments_name_the_fix() -> None:
    for kwargs, match in (
        ({"format": "react"}, "format must be"),
        ({"retriever": "tfidf"}, "unknown retriever 'tfidf'; choose one of"),
        ({"feedback_budget": -1}, "feedback_budget"),
        ({"question_types": ("riddle",)}, "question_types"),
    ):
        with pytest.raises(ValueError, match=match):
            SearchCriticEnv(n_passages=N, **kwargs)


def test_a_custom_retriever_object() -> None:
    env = SearchCriticEnv(n_passages=N)

    class Titles:
        def search(self, query: str, *, k: int = 5, seed: int | None = None) -> list[tuple[str, str]]:
            hits = zip(env.corpus.ids, env.corpus.titles, strict=False)
            return [(pid, "") for pid, title in hits if title and query.startswith(title.split(" (")[0])][:k]

    custom = SearchCriticEnv(n_passages=N, retriever=Titles(), question_types=("comparison",))
    traj = rollout(custom, OraclePolicy(), seed=0, max_steps=40)
    assert traj.success


def test_env_on_loaded_fixture_files() -> None:
    fixtures = Path(__file__).parent / "fixtures"
    env = SearchCriticEnv(
        corpus_path=str(fixtures / "corpus.jsonl"), questions_path=str(fixtures / "questions.jsonl")
    )
    assert env.splits == ("test",)
    obs, info = env.reset(options={"task_id": "search-file/test/L1/0"})
    assert obs.endswith("Question: Where was Tekla Vorn born?") and info[K.QUESTION_TYPE] == "external"
    obs = env.step(_search("Tekla Vorn"))[0]
    assert obs.startswith("<information>Doc 1(Title: Tekla Vorn) Tekla Vorn (born 1901 in Brask)")
    assert env.step("<request_feedback></request_feedback>")[0].startswith("<feedback>Re-check")
    _, reward, terminated, _, info = env.step("<answer>The Brask.</answer>")
    assert terminated and reward == 1.0 and info[K.CHECKS]["grounded"]
    clone = pickle.loads(pickle.dumps(env))
    assert clone.corpus is env.corpus
    with pytest.raises(ValueError, match="both corpus_path"):
        SearchCriticEnv(corpus_path=str(fixtures / "corpus.jsonl"))


@pytest.mark.parametrize("fmt", ["cafe", "search_r1"])
def test_vector_env_stacks_infos_of_mixed_actions(fmt: str) -> None:
    import itertools

    import gymnasium as gym

    actions = [
        "<request_feedback></request_feedback>",
        "",
        "<answer>x</answer>",
        "<tool_call>{</tool_call>",
        _search("film"),
        "<search>a</search>",
    ]
    envs = gym.make_vec("papergym/SearchCritic-v0", num_envs=3, format=fmt, n_passages=N)
    try:
        envs.reset(seed=1)
        for combo in itertools.product(actions, repeat=3):
            rewards = envs.step(combo)[1]
            assert rewards.shape == (3,)
    finally:
        envs.close()
