"""verl adapter: any papergym env as an agent loop of verl's multi-turn rollout.

verl (>= 0.9) runs rollouts through *agent loops*: a coroutine that talks to the inference server in
token ids and returns the prompt ids, the response ids and a response mask (1 for the model's tokens,
0 for the environment's). `PapergymAgentLoop` plays one papergym episode that way:

- the model's tokens go from the server into the response unchanged (never decoded and re-encoded):
  verl's Continuous Token builder appends them (``ct_merge_assistant_token``); the decoded text is only
  the env's action;
- each observation becomes a user message whose tokens are appended with mask 0
  (``ct_merge_context_msg``);
- the episode's return is the trajectory's ``reward_score``; ``extra_fields`` carry the task id and
  success.

Set-up (verl pins its own transformers range: install it in its own virtualenv, ``make test-verl``)::

    # agent_loops.yaml
    - name: papergym_agent
      _target_: papergym.integrations.verl.PapergymAgentLoop

    python -m verl.trainer.main_ppo ... \\
        actor_rollout_ref.rollout.mode=async \\
        actor_rollout_ref.rollout.agent.agent_loop_config_path=agent_loops.yaml \\
        data.train_files=papergym_train.parquet

where the parquet rows come from `verl_rows` (each row names the env, the task and the agent loop).
This module imports without verl; `PapergymAgentLoop` is built (and registered with verl) on first
access.

>>> rows = verl_rows("papergym/Reasoning-v0", 2, seed=0)
>>> rows[0]["agent_name"], sorted(rows[0]["extra_info"])
('papergym_agent', ['env_id', 'env_kwargs', 'seed', 'task_id'])
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from functools import cache
from typing import Any
from uuid import uuid4

import gymnasium

from papergym.core import info_keys as K
from papergym.core.errors import require
from papergym.integrations.tasks import first_observations

logger = logging.getLogger(__name__)

__all__ = ["AGENT_NAME", "verl_rows"]  # and PapergymAgentLoop, built on first access

AGENT_NAME = "papergym_agent"


def verl_rows(
    env_id: str,
    n: int,
    *,
    seed: int = 0,
    split: str = "train",
    env_kwargs: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Dataset rows for verl (write them to parquet): one per task, routed to `PapergymAgentLoop`.

    Task ``i`` is the env's reset with seed ``seed + i`` on ``split``; ``extra_info`` names it exactly
    (``task_id``), so the agent loop replays the same task.
    """
    kwargs = json.dumps(dict(env_kwargs or {}), sort_keys=True)
    return [
        {
            "data_source": env_id,
            "agent_name": AGENT_NAME,
            "prompt": [{"role": "user", "content": str(observation)}],
            "reward_model": {"style": "rule", "ground_truth": ""},
            "extra_info": {
                "env_id": env_id,
                "env_kwargs": kwargs,
                "seed": task_seed,
                "task_id": info[K.TASK_ID],
            },
        }
        for task_seed, observation, info in first_observations(
            env_id, n, seed=seed, split=split, env_kwargs=env_kwargs
        )
    ]


@cache
def _agent_loop_class() -> type:
    """Build `PapergymAgentLoop` on verl's ``AgentLoopBase`` and register it (once per process)."""
    require("verl", "verl")
    from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, register

    import papergym  # noqa: F401  (registers the ids in this worker)

    class PapergymAgentLoop(AgentLoopBase):
        """Plays one papergym episode per dataset row, in token ids (see the module docstring)."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.response_length = self.rollout_config.response_length

        async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
            extra = kwargs.get("extra_info") or {}
            if "env_id" not in extra:
                raise ValueError("the row's extra_info needs env_id (build rows with papergym's verl_rows)")
            env_kwargs = json.loads(extra.get("env_kwargs") or "{}")
            env = gymnasium.make(extra["env_id"], **env_kwargs)
            try:
                return await self._play(env, extra, sampling_params)
            finally:
                env.close()

        async def _play(
            self, env: gymnasium.Env, extra: Mapping[str, Any], sampling_params: dict[str, Any]
        ) -> AgentLoopOutput:
            options = {"task_id": extra["task_id"]} if extra.get("task_id") else None
            seed = None if extra.get("seed") is None else int(extra["seed"])
            observation, info = env.reset(seed=seed, options=options)
            messages: list[dict[str, Any]] = [{"role": "user", "content": str(observation)}]
            token_ids = await self.ct_build_initial_tokens(messages)
            mask: list[int] = []
            logprobs: list[float] = []
            request_id = uuid4().hex  # one id per episode: the server keeps its prefix cache
            total, turns, done = 0.0, 0, False
            while not done:
                output = await self.server_manager.generate(
                    request_id=request_id, prompt_ids=token_ids, sampling_params=sampling_params
                )
                merged, mask, new_logprobs = await self.ct_merge_assistant_token(
                    token_ids,
                    output.token_ids,
                    mask,
                    logprobs if (logprobs or output.log_probs) else None,
                    assistant_logprobs=output.log_probs or None,
                )
                token_ids = merged.token_ids
                logprobs = new_logprobs if new_logprobs is not None else logprobs
                action = self.tokenizer.decode(output.token_ids, skip_special_tokens=True)
                observation, reward, terminated, truncated, info = env.step(action)
                total, turns = total + float(reward), turns + 1
                messages.append({"role": "assistant", "content": action})
                done = terminated or truncated or len(mask) >= self.response_length
                if not done:
                    previous = list(messages)
                    messages.append({"role": "user", "content": str(observation)})
                    merged, mask, new_logprobs = await self.ct_merge_context_msg(
                        previous, messages, token_ids, mask, logprobs or None
                    )
                    token_ids = merged.token_ids
                    logprobs = new_logprobs if new_logprobs is not None else logprobs
                    done = len(mask) >= self.response_length
            response_ids = token_ids[len(token_ids) - len(mask) :]
            return AgentLoopOutput(
                prompt_ids=token_ids[: len(token_ids) - len(mask)],
                response_ids=response_ids[: self.response_length],
                response_mask=mask[: self.response_length],
                response_logprobs=logprobs[: self.response_length] if logprobs else None,
                reward_score=total,
                num_turns=2 * turns + 1,
                metrics={},
                extra_fields={
                    "task_id": extra.get("task_id", ""),
                    "success": bool(info.get(K.SUCCESS, False)),
                    "env_steps": turns,
                },
            )

    PapergymAgentLoop.__module__ = __name__
    PapergymAgentLoop.__qualname__ = "PapergymAgentLoop"
    return register(AGENT_NAME)(PapergymAgentLoop)


def __getattr__(name: str) -> Any:
    # PEP 562: hydra's ``_target_: papergym.integrations.verl.PapergymAgentLoop`` resolves here.
    if name == "PapergymAgentLoop":
        return _agent_loop_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
