"""CAFE's shared critic: the agent's own model plays the critic (`PolicyChatModel` through the env's backend
rule), so it is the same weights object and every policy update changes the critic; a frozen checkpoint
(``critic=DIR``) does not change."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from papergym.backends import ModelCritic
from papergym.baselines.policy import PolicyChatModel, completion_logprobs, role_backends
from papergym.core import info_keys as K
from papergym.envs.search.critic import cafe_critic_messages, feedback_completion
from papergym.envs.search.search_critic_env import SearchCriticEnv

N = 500


def _critic_logprob(policy, messages) -> float:
    import torch

    with torch.no_grad():
        logp, mask = completion_logprobs(
            policy,
            [policy.encode_chat(messages)],
            [policy.encode(feedback_completion("Search the director."))],
        )
    return float((logp * mask).sum())


def _step_on_agent_tokens(policy) -> None:
    """One SGD step that raises an agent action's log-prob (the agent role's update)."""
    import torch

    optimizer = torch.optim.SGD(policy.model.parameters(), lr=0.5)
    prompt = policy.encode_chat([{"role": "user", "content": "Question: who?"}])
    logp, mask = completion_logprobs(policy, [prompt], [policy.encode("<answer>yes</answer>")])
    (-(logp * mask).sum()).backward()
    optimizer.step()


def test_the_env_wraps_the_policy_in_cafes_critic_and_shares_its_weights(tiny_policy) -> None:
    env = SearchCriticEnv(n_passages=N, critic=PolicyChatModel(tiny_policy, max_tokens=6))
    assert type(env.critic) is ModelCritic and "trajectory critic" in env.critic.system_prompt
    assert env.critic.model.policy.model is tiny_policy.model  # one model, two roles
    env.reset(seed=0)
    obs, _, _, _, info = env.step("<think>stuck</think><request_feedback></request_feedback>")
    assert obs.startswith("<feedback>") and obs.endswith("</feedback>")
    seen = info[K.SEGMENTS]["critic_input"]
    assert seen["question"] == env.item.question and seen["trajectory"][0]["role"] == "user"


def test_updating_the_policy_changes_the_shared_critic_but_not_a_frozen_one(
    tiny_dir: Path, tiny_policy
) -> None:
    roles = role_backends(["critic"], tiny_policy)
    frozen = role_backends([f"critic={tiny_dir}"], tiny_policy)["critic"]
    messages = cafe_critic_messages("Where was Tek born?", [{"role": "user", "content": "Question: x"}])
    shared_before, frozen_before = (
        _critic_logprob(roles["critic"].policy, messages),
        _critic_logprob(frozen.policy, messages),
    )
    assert shared_before == pytest.approx(frozen_before, abs=1e-4)  # same checkpoint, same weights
    _step_on_agent_tokens(tiny_policy)
    assert abs(_critic_logprob(roles["critic"].policy, messages) - shared_before) > 1e-3
    assert _critic_logprob(frozen.policy, messages) == pytest.approx(frozen_before, abs=1e-6)


def test_the_critic_is_sent_exactly_the_recorded_input(tiny_policy) -> None:
    sent: list = []

    class Recording(PolicyChatModel):
        def chat(self, messages, **kwargs):  # type: ignore[no-untyped-def]
            sent.append([dict(m) for m in messages])
            return super().chat(messages, **kwargs)

    env = SearchCriticEnv(n_passages=N, critic=Recording(tiny_policy, max_tokens=4))
    env.reset(seed=3)
    env.step('<tool_call>{"name": "search", "arguments": {"query": ["film"]}}</tool_call>')
    info = env.step("<request_feedback></request_feedback>")[4]
    seen = info[K.SEGMENTS]["critic_input"]
    assert sent == [cafe_critic_messages(seen["question"], seen["trajectory"])]  # what RDPO trains on


def test_role_specs_name_the_fix(tiny_policy) -> None:
    with pytest.raises(ValueError, match="NAME or NAME=CHECKPOINT_DIR"):
        role_backends(["critic="], tiny_policy)
    with pytest.raises(ValueError, match="given twice"):
        role_backends(["critic", "critic"], tiny_policy)
    with pytest.raises(ValueError, match="max_tokens >= 1"):
        PolicyChatModel(tiny_policy, max_tokens=0)


def test_grpo_with_policy_roles_asks_the_training_policy_for_feedback(tiny_dir: Path, tmp_path: Path) -> None:
    from papergym.baselines import grpo

    def script(i: int, env, observation: str) -> str:  # type: ignore[no-untyped-def]
        return (
            "<answer>yes</answer>"
            if observation.startswith("<feedback>")
            else "<request_feedback></request_feedback>"
        )

    seen: list = []
    args = grpo.Args(
        env="papergym/SearchCritic-v0", env_kw=[f"n_passages={N}"], model=str(tiny_dir),
        out=str(tmp_path / "g"), steps=1, prompts_per_step=1, group_size=2, max_new_tokens=32, max_turns=3,
        policy_roles=["critic"], role_tokens=5, group_reward="feedback_request",
        advantage_hook="feedback_shaping", progress=False, checkpoint_every=0,
    )  # fmt: skip
    grpo.main(args, script=script, on_step=lambda step, metrics, episodes: seen.extend(episodes))
    for episode in seen:
        segments = episode.trajectory.final_info[K.SEGMENTS]
        assert segments["n_requests"] == 1 and segments["request_step"] == 0
        assert segments["critic_input"]["question"] and isinstance(segments["feedback"], str)
        assert episode.trajectory.steps[0].info[K.COST]["critic_calls"] == 1
