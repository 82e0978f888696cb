"""CachedChatModel: replay, keys, pickling, and two processes writing one file."""

from __future__ import annotations

import multiprocessing
import pickle
from collections.abc import Sequence
from pathlib import Path

import gymnasium as gym
import pytest

import papergym  # noqa: F401  (registers the ids)
from papergym.backends.cache import CachedChatModel, request_key
from papergym.backends.policy import ChatModelPolicy
from papergym.backends.protocols import ChatModel, Message
from papergym.backends.usage import Usage
from papergym.core.errors import BackendError
from papergym.core.trajectory import rollout


class CountingModel:
    """A deterministic fake: the reply names the request; ``tag`` marks which instance answered."""

    def __init__(self, tag: str = "", fail: bool = False) -> None:
        self.model_id = "counting"
        self.usage = Usage()
        self.tag = tag
        self.fail = fail

    def chat(
        self,
        messages: Sequence[Message],
        *,
        seed: int | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ) -> str:
        if self.fail:
            self.usage.add(failures=1)
            raise BackendError("scripted failure", retryable=True)
        self.usage.add(model_calls=1, prompt_tokens=len(messages), completion_tokens=3)
        return f"{self.tag}{messages[-1]['content']}|{seed}|{max_tokens}|{temperature}"


def ask(model: ChatModel, i: int, seed: int | None = 0, temperature: float = 0.0) -> str:
    return model.chat(
        [{"role": "user", "content": f"q{i}"}], seed=seed, max_tokens=8, temperature=temperature
    )


def test_a_hit_returns_the_stored_reply_without_a_model_call(tmp_path: Path) -> None:
    inner = CountingModel()
    cached = CachedChatModel(inner, tmp_path / "c.db")
    assert isinstance(cached, ChatModel) and cached.model_id == "counting"
    first = [ask(cached, i) for i in range(3)]
    assert inner.usage.model_calls == 3 and cached.usage.model_calls == 3
    assert cached.usage.completion_tokens == 9
    again = CachedChatModel(CountingModel(tag="other:"), tmp_path / "c.db")
    assert [ask(again, i) for i in range(3)] == first
    assert again.usage.as_dict()["cache_hits"] == 3
    assert again.usage.model_calls == 0 and again.model.usage.model_calls == 0
    assert len(again) == 3


def test_keys_cover_every_request_field() -> None:
    base = {"max_tokens": 8, "temperature": 0.0, "seed": 1}
    msgs = [{"role": "user", "content": "x"}]
    key = request_key("m", msgs, **base)
    assert request_key("m", msgs, max_tokens=8, temperature=0, seed=1) == key  # 0 == 0.0
    assert request_key("m2", msgs, **base) != key
    assert request_key("m", [{"role": "user", "content": "y"}], **base) != key
    assert request_key("m", msgs, **{**base, "max_tokens": 9}) != key
    assert request_key("m", msgs, **{**base, "temperature": 0.5}) != key
    assert request_key("m", msgs, **{**base, "seed": 2}) != key
    assert request_key("m", msgs, **{**base, "seed": None}) != key


def test_unseeded_sampling_is_never_cached(tmp_path: Path) -> None:
    cached = CachedChatModel(CountingModel(), tmp_path / "c.db")
    ask(cached, 0, seed=None, temperature=0.7)
    ask(cached, 0, seed=None, temperature=0.7)
    assert cached.usage.model_calls == 2 and len(cached) == 0
    ask(cached, 0, seed=None, temperature=0.0)  # greedy without a seed is deterministic: cached
    ask(cached, 0, seed=None, temperature=0.0)
    assert cached.usage.cache_hits == 1 and len(cached) == 1


def test_a_failure_is_not_stored(tmp_path: Path) -> None:
    cached = CachedChatModel(CountingModel(fail=True), tmp_path / "c.db")
    with pytest.raises(BackendError):
        ask(cached, 0)
    assert len(cached) == 0 and cached.usage.failures == 1


def test_needs_a_model_id(tmp_path: Path) -> None:
    class Anonymous:
        def chat(self, messages: Sequence[Message], **kwargs: object) -> str:
            return "x"

    with pytest.raises(ValueError, match="model_id"):
        CachedChatModel(Anonymous(), tmp_path / "c.db")  # type: ignore[arg-type]
    cached = CachedChatModel(Anonymous(), tmp_path / "c.db", model_id="anon")  # type: ignore[arg-type]
    assert ask(cached, 0) == "x" and cached.usage.model_calls == 1


def test_pickles_and_reopens_its_connection(tmp_path: Path) -> None:
    cached = CachedChatModel(CountingModel(), tmp_path / "c.db")
    stored = ask(cached, 0)
    copy = pickle.loads(pickle.dumps(cached))
    assert ask(copy, 0) == stored and copy.usage.cache_hits == 1
    cached.close()
    assert ask(cached, 0) == stored  # reopened on demand


def _writer(cached: CachedChatModel, start: int, queue: multiprocessing.Queue, barrier: object) -> None:
    len(cached)  # open the connection first, so both processes start writing together
    barrier.wait(timeout=60)  # type: ignore[attr-defined]
    queue.put([ask(cached, i) for i in range(start, start + 150)])


def test_two_processes_write_one_file_at_once(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: no state shared through fork
    queue, barrier = context.Queue(), context.Barrier(2)
    workers = [
        context.Process(target=_writer, args=(CachedChatModel(CountingModel(tag=t), path), s, queue, barrier))
        for t, s in (("a:", 0), ("b:", 50))  # requests 50..149 are asked by both, at the same time
    ]
    for w in workers:
        w.start()
    results = [queue.get(timeout=60) for _ in workers]
    for w in workers:
        w.join(timeout=60)
        assert w.exitcode == 0
    merged: dict[str, str] = {}
    for replies in results:
        for reply in replies:
            question = reply.split(":", 1)[1]
            assert merged.setdefault(question, reply) == reply  # both returned the one stored reply
    reader = CachedChatModel(CountingModel(tag="c:"), path)
    assert len(reader) == 200
    assert [ask(reader, i) for i in range(200)] == [merged[f"q{i}|0|8|0.0"] for i in range(200)]
    assert reader.usage.model_calls == 0


def test_a_seeded_episode_replays_with_zero_model_calls(tiny_checkpoint: Path, tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    from papergym.backends.hf import HFChatModel

    model = HFChatModel(tiny_checkpoint)
    env = gym.make("papergym/Reasoning-v0", obs_mode="chat")

    def run() -> tuple[list, CachedChatModel]:
        cached = CachedChatModel(model, tmp_path / "replay.db")
        policy = ChatModelPolicy(cached, max_tokens=12, temperature=1.0)
        trajectories = [rollout(env, policy, seed=s) for s in range(3)]
        return [(t.task_id, [(s.action, s.reward) for s in t.steps]) for t in trajectories], cached

    first, cached_first = run()
    calls = model.usage.model_calls
    second, cached_second = run()
    assert second == first
    assert model.usage.model_calls == calls  # nothing reached the model the second time
    assert cached_first.usage.model_calls == 3 and cached_second.usage.cache_hits == 3
