"""The verl agent loop against the real verl (its own virtualenv: ``make test-verl``).

A fake inference server stands in for vLLM / SGLang: it answers ``generate`` with token ids of the
oracle's action (plus the end-of-turn token), as a server would, and records the prompts it got. The
test checks what verl's trainer relies on: the model's own token ids appear unchanged in the response
under mask 1, the environment's tokens under mask 0, and the episode's return is the reward score.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import papergym  # noqa: F401
from papergym.integrations.verl import AGENT_NAME, verl_rows

SEARCH = "papergym/SearchCritic-v0"  # several turns per episode


def test_rows_replay_their_task() -> None:
    rows = verl_rows(SEARCH, 3, seed=4, split="test")
    env = gym.make(SEARCH)
    for row in rows:
        extra = row["extra_info"]
        observation, info = env.reset(seed=extra["seed"], options={"task_id": extra["task_id"]})
        assert row["prompt"][0]["content"] == observation and info["split"] == "test"
        assert row["agent_name"] == AGENT_NAME and extra["env_id"] == SEARCH


@pytest.mark.verl
def test_agent_loop_keeps_the_model_tokens_and_masks_the_env(tiny_checkpoint: Path) -> None:
    pytest.importorskip("verl", reason="verl lives in its own virtualenv: run `make test-verl`")
    from omegaconf import OmegaConf
    from transformers import AutoTokenizer
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap
    from verl.workers.rollout.replica import TokenOutput

    from papergym.integrations.verl import PapergymAgentLoop

    tokenizer = AutoTokenizer.from_pretrained(tiny_checkpoint)
    row = verl_rows(SEARCH, 1, seed=2)[0]
    oracle_env = gym.make(SEARCH)
    oracle_env.reset(seed=row["extra_info"]["seed"], options={"task_id": row["extra_info"]["task_id"]})

    class OracleServer:
        """Answers with the oracle's next action, in token ids, and steps its own copy of the env."""

        def __init__(self) -> None:
            self.generated: list[list[int]] = []
            self.prompts: list[list[int]] = []
            self.total = 0.0

        async def generate(self, *, request_id: str, prompt_ids: list[int], sampling_params: dict, **_: Any):
            action = oracle_env.unwrapped.oracle_action()
            self.total += float(oracle_env.step(action)[1])
            ids = [*tokenizer.encode(action, add_special_tokens=False), tokenizer.eos_token_id]
            self.prompts.append(list(prompt_ids))
            self.generated.append(ids)
            return TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids))

    config = OmegaConf.create(
        {"actor_rollout_ref": {"rollout": {"prompt_length": 4096, "response_length": 4096}}}
    )
    server = OracleServer()

    async def play() -> Any:
        # verl's agent loop binds to the event loop it is built in: build it inside the running one
        loop = PapergymAgentLoop(
            trainer_config=DictConfigWrap(config),
            server_manager=server,
            tokenizer=tokenizer,
            processor=None,
            dataset_cls=None,
            data_config=DictConfigWrap(OmegaConf.create({})),
        )
        return await loop.run({"temperature": 1.0}, raw_prompt=row["prompt"], **row)

    output = asyncio.run(play())

    assert output.reward_score == pytest.approx(server.total) and output.extra_fields["success"]
    assert output.extra_fields["env_steps"] == len(server.generated) >= 2
    assert len(output.response_ids) == len(output.response_mask) == len(output.response_logprobs)
    # the model's tokens appear verbatim, in order, under mask 1; everything else is masked
    model_tokens = [t for t, m in zip(output.response_ids, output.response_mask, strict=True) if m == 1]
    assert model_tokens == [t for ids in server.generated for t in ids]
    env_tokens = [t for t, m in zip(output.response_ids, output.response_mask, strict=True) if m == 0]
    assert "<information>" in tokenizer.decode(env_tokens)
    # every later prompt the server saw extends the previous one (no re-tokenising of the history)
    for earlier, later in zip(server.prompts, server.prompts[1:], strict=False):
        assert later[: len(earlier)] == earlier
    output.as_dict()  # verl's own conversion to tensors accepts it
