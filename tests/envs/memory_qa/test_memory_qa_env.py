"""`papergym/MemoryQA-v0`: oracle cells, guessing, the memory cap, context resets, variants."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import papergym  # noqa: F401  (registers the ids)
from papergym.core import info_keys as K
from papergym.core.errors import BackendError
from papergym.core.trajectory import OraclePolicy, rollout
from papergym.envs.memory_qa.documents import KINDS, QUESTION_TYPES, normalize_answer, prior_guess
from papergym.wrappers import FourCellReward


def _play(env: gym.Env, policy: Any, seed: int, options: dict[str, Any] | None = None) -> dict[str, Any]:
    env.reset(seed=seed, options=options)
    while True:
        _, _, terminated, truncated, info = env.step(policy(env.unwrapped))
        if terminated or truncated:
            return info


def _guesser(env: Any) -> str:
    """Drops its memory and answers the prior guess."""
    r = env._reading()
    if r.pos < len(r.chunks):
        return "<memory></memory>"
    return f"<answer>{prior_guess(env.question)}</answer>"


@pytest.mark.parametrize("split", ["train", "test"])
def test_oracle_lands_in_correct_answerable(split: str) -> None:
    env = FourCellReward(gym.make("papergym/MemoryQA-v0"))
    seen = set()
    for seed in range(30):
        info = _play(env, lambda e: e.oracle_action(), seed, {"split": split})
        assert info[K.CELL] == "correct_answerable"
        assert info[K.SUCCESS] is True
        seen.add((env.unwrapped.document.kind, env.unwrapped.question.qtype))
    assert len(seen) >= 6


def test_oracle_answers_every_kind_and_question_type_on_both_splits() -> None:
    for kind in KINDS:
        env = gym.make("papergym/MemoryQA-v0", kind=kind, pages=(3, 6))
        for split in ("train", "test"):
            types = set()
            for seed in range(40):
                traj = rollout(env, OraclePolicy(), seed=seed, options={"split": split})
                assert traj.success
                assert traj.steps[-1].info[K.CHECKS] == {"correct": True, "memory_answerable": True}
                types.add(env.unwrapped.question.qtype)
            assert types == set(QUESTION_TYPES)


def test_oracle_keeps_exactly_the_evidence_read() -> None:
    env = gym.make("papergym/MemoryQA-v0", pages=(5, 8)).unwrapped
    env.reset(seed=3)
    read: set[int] = set()
    while env.chunks and env._reading().pos < len(env.chunks):
        read.add(env.chunks[env._reading().pos])
        env.step(env.oracle_action())
        expected = [f"{s} - {a}: {v}" for s, a, v, p in env.question.evidence if p in read]
        assert env.memory.splitlines() == expected


def test_dropping_memory_and_guessing_is_right_but_unsupported_on_guessable_tasks() -> None:
    env = FourCellReward(gym.make("papergym/MemoryQA-v0", pages=(3, 6)))
    guessable = other = other_correct = 0
    for seed in range(120):
        info = _play(env, _guesser, seed)
        if env.unwrapped.question.guessable:
            guessable += 1
            assert info[K.CELL] == "correct_unanswerable"
            assert info[K.REWARD_COMPONENTS]["outcome"] == 0.5
        else:
            other += 1
            other_correct += info[K.CHECKS]["correct"]
            assert info[K.CHECKS]["memory_answerable"] is False
    assert guessable >= 20 and other >= 40
    assert other_correct == 0  # the prior guess is wrong whenever the question is not guessable


def test_memory_cap_cuts_and_says_so() -> None:
    env = gym.make("papergym/MemoryQA-v0", pages=(3, 4), memory_limit=20)
    env.reset(seed=0)
    obs, reward, _, _, info = env.step("<memory>" + "x" * 50 + "</memory>")
    assert info[K.MEMORY] == "x" * 20 and info[K.MEMORY_CUT] is True
    assert "Memory cut: your memory was 50 characters long; the limit is 20 characters" in obs
    assert reward == 0.0 and info[K.INVALID_ACTION] is False
    _, _, _, _, info = env.step("<memory>short</memory>")
    assert info[K.MEMORY_CUT] is False


def test_memory_cap_in_tokens() -> None:
    env = gym.make("papergym/MemoryQA-v0", pages=(3, 4), memory_limit=3, memory_unit="tokens")
    env.reset(seed=0)
    obs, _, _, _, info = env.step("<memory>a bb  ccc dddd eeeee</memory>")
    assert info[K.MEMORY] == "a bb  ccc"
    assert "5 tokens long; the limit is 3 tokens" in obs


@pytest.mark.parametrize("obs_mode", ["text", "chat"])
def test_context_is_reset_every_step(obs_mode: str) -> None:
    env = gym.make("papergym/MemoryQA-v0", pages=(4, 4), obs_mode=obs_mode)
    obs, info = env.reset(seed=2)
    assert info[K.CONTEXT_RESET] is False
    question = env.unwrapped.question.text
    first_page = env.unwrapped.page_text(0)
    for step in range(5):
        action = f"<memory>note-{step}</memory>" if step < 4 else "<answer>x</answer>"
        obs, _, terminated, _, info = env.step(action)
        assert info[K.CONTEXT_RESET] is True
        text = obs if obs_mode == "text" else obs[0]["content"]
        if obs_mode == "chat":
            assert len(obs) == 1 and obs[0]["role"] == "user"
        assert first_page not in text and f"note-{step - 1}" not in text
        if step < 4:
            assert question in text and f"note-{step}" in text
        if step < 3:
            assert env.unwrapped.page_text(step + 1) in text
    assert terminated


def test_missing_tags_are_invalid_and_keep_the_memory() -> None:
    env = gym.make("papergym/MemoryQA-v0", pages=(3, 3))
    env.reset(seed=1)
    env.step("<memory>kept</memory>")
    obs, reward, terminated, _, info = env.step("I think the answer is 5")
    assert info[K.INVALID_ACTION] is True and reward == pytest.approx(-0.1) and not terminated
    assert "<memory>" in obs and "kept" in obs and env.unwrapped.memory == "kept"
    env.step("<memory>kept</memory>")
    env.step("<memory>kept</memory>")
    obs, _, terminated, _, info = env.step("<memory>not an answer</memory>")
    assert info[K.INVALID_ACTION] is True and not terminated and "<answer>" in obs


def test_evidence_only_reads_only_the_gold_pages() -> None:
    env = gym.make("papergym/MemoryQA-v0", evidence_only=True)
    for seed in range(10):
        _, info = env.reset(seed=seed)
        pages = env.unwrapped.question.evidence_pages
        assert env.unwrapped.chunks == pages
        shown = [info[K.PAGE]]
        while True:
            _, _, terminated, _, info = env.step(env.unwrapped.oracle_action())
            if terminated:
                break
            if K.PAGE in info:
                shown.append(info[K.PAGE])
        assert tuple(shown) == pages and info[K.SUCCESS]


class _FailingReader:
    def answer(self, question: str, context: str, *, seed: int | None = None) -> str:
        raise BackendError("reader down", retryable=True)


def test_reader_fault_truncates_with_an_error() -> None:
    env = gym.make("papergym/MemoryQA-v0", pages=(3, 3), reader=_FailingReader())
    env.reset(seed=0)
    while True:
        _, _, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
        if terminated or truncated:
            break
    assert truncated and info[K.ERROR]["message"] == "reader down"
    assert info[K.UNEVALUATED] == ["memory_answerable"] and info[K.SUCCESS] is True


def test_model_reader_is_accepted() -> None:
    from papergym.backends.model_roles import ModelReader

    class Echo:
        def chat(
            self, messages: Any, *, seed: int | None = None, max_tokens: int = 512, temperature: float = 0.0
        ):
            return "unknown"

    env = gym.make("papergym/MemoryQA-v0", pages=(3, 3), reader=ModelReader(Echo()))
    info = _play(env, lambda e: e.oracle_action(), 0)
    assert info[K.CHECKS] == {"correct": True, "memory_answerable": False}
    assert info[K.READER_ANSWER] == "unknown"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"kind": "novel"},
        {"pages": (2, 5)},
        {"pages": (9, 5)},
        {"pages": 5},
        {"memory_limit": 0},
        {"memory_unit": "bytes"},
        {"guessable_share": 2.0},
        {"difficulty": 4},
        {"reader": object()},
    ],
)
def test_bad_arguments_raise_value_error(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        gym.make("papergym/MemoryQA-v0", **kwargs)


def test_page_images_render() -> None:
    pytest.importorskip("PIL")
    env = gym.make("papergym/MemoryQA-v0", pages=(3, 3), render_mode="rgb_array")
    env.reset(seed=0)
    image = env.unwrapped.page_image(1)
    assert image.size == (612, 792) and image.mode == "RGB"
    frame = env.render()
    assert isinstance(frame, np.ndarray) and frame.shape == (792, 612, 3) and frame.dtype == np.uint8
    assert (frame < 128).any()  # text was drawn


def test_answers_compare_normalised() -> None:
    env = gym.make("papergym/MemoryQA-v0", pages=(3, 3))
    env.reset(seed=4)
    gold = env.unwrapped.question.answer
    for _ in env.unwrapped.chunks:
        env.step(env.unwrapped.oracle_action())
    _, reward, _, _, info = env.step(f"<answer> {gold.upper()}. </answer>")
    assert reward == 1.0 and info[K.ANSWER] == normalize_answer(gold)
