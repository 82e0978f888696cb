"""TRL adapters: train any papergym env with TRL's ``GRPOTrainer``.

- Single-turn envs (Reasoning, MultiDomain, TestTime): `dataset` writes one row per task (the first
  observation as the prompt, the ``task_id`` and ``seed`` as columns) and `reward_function` scores a
  completion by replaying that task and stepping the completion (``f(prompts, completions, **columns)``).
- Multi-turn envs with tools (SearchCritic, ServiceAgent): `environment_factory` builds the class TRL's
  ``environment_factory=`` takes: each env tool is a method (typed, with a Google docstring, so TRL
  renders its schema into the chat template), ``reset(**row)`` resets the env and returns its first
  observation. The final assistant message (the answer) is not a tool call, so `environment_reward`
  steps it into the env and returns the env's return: pass it as ``reward_funcs``.

Tool calls made through TRL become ``<tool_call>{"name": ..., "arguments": ...}</tool_call>`` actions of
the env, so the env's own parsing, budgets, penalties and scoring apply unchanged.

>>> rows = dataset("papergym/Reasoning-v0", 2, seed=0)
>>> sorted(rows[0]), rows[0]["prompt"][0]["role"]
(['prompt', 'seed', 'task_id'], 'user')
>>> reward = reward_function("papergym/Reasoning-v0")
>>> reward(prompts=None, completions=["no answer"], task_id=[rows[0]["task_id"]], seed=[0]) <= [0.0]
True
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium

from papergym.core import info_keys as K
from papergym.integrations.tasks import first_observations

logger = logging.getLogger(__name__)

__all__ = ["dataset", "environment_factory", "environment_reward", "reward_function"]

_JSON_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
}


def _make(env_id: str, env_kwargs: Mapping[str, Any] | None) -> gymnasium.Env:
    import papergym  # noqa: F401  (registers the ids)

    return gymnasium.make(env_id, **dict(env_kwargs or {}))


def _text(completion: Any) -> str:
    """A completion as text: a plain string, or the last assistant message of a conversation."""
    if isinstance(completion, str):
        return completion
    for message in reversed(list(completion)):
        if message.get("role") == "assistant" and message.get("content"):
            return str(message["content"])
    return ""


def dataset(
    env_id: str,
    n: int,
    *,
    seed: int = 0,
    split: str = "train",
    env_kwargs: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """One conversational row per task: ``prompt`` (the first observation), ``task_id`` and ``seed``.

    Wrap it with ``datasets.Dataset.from_list(rows)`` for TRL. Task ``i`` is the env's reset with seed
    ``seed + i`` on ``split``; the row's ``task_id`` replays exactly that task in `reward_function`.
    """
    return [
        {
            "prompt": [{"role": "user", "content": str(observation)}],
            "task_id": info[K.TASK_ID],
            "seed": task_seed,
        }
        for task_seed, observation, info in first_observations(
            env_id, n, seed=seed, split=split, env_kwargs=env_kwargs
        )
    ]


def reward_function(
    env_id: str, *, env_kwargs: Mapping[str, Any] | None = None
) -> Callable[..., list[float]]:
    """A TRL reward function for a single-turn env: replays each row's task and steps the completion.

    The returned function takes TRL's ``(prompts, completions, **columns)`` with the ``task_id`` and
    ``seed`` columns of `dataset`, and returns the env's reward for each completion.
    """
    env = _make(env_id, env_kwargs)

    def papergym_reward(prompts: Any, completions: Sequence[Any], **columns: Any) -> list[float]:
        del prompts
        task_ids, seeds = columns.get("task_id"), columns.get("seed")
        if task_ids is None or seeds is None:
            raise ValueError("the dataset needs the task_id and seed columns of papergym's trl.dataset()")
        rewards = []
        for completion, task_id, seed in zip(completions, task_ids, seeds, strict=True):
            env.reset(seed=int(seed), options={"task_id": task_id})
            _, reward, terminated, truncated, _ = env.step(_text(completion))
            if not (terminated or truncated):
                logger.warning("%s did not end after one step: it is not a single-turn env", env_id)
            rewards.append(float(reward))
        return rewards

    papergym_reward.__name__ = f"papergym_{env_id.split('/')[-1].replace('-', '_')}"
    return papergym_reward


def _tool_method(schema: Mapping[str, Any]) -> Callable[..., str]:
    """A method that forwards its arguments to the env as one ``<tool_call>`` action."""
    name = schema["name"]
    properties: Mapping[str, Any] = schema.get("parameters", {}).get("properties", {})
    required = set(schema.get("parameters", {}).get("required", ()))

    def method(self: _TRLEnvironment, **arguments: Any) -> str:
        return self._call_tool(name, arguments)

    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {"return": str}
    arg_lines = []
    for arg, spec in properties.items():
        kind = _JSON_TYPES.get(spec.get("type", "string"), str)
        if kind is list and "items" in spec:
            kind = list[_JSON_TYPES.get(spec["items"].get("type", "string"), str)]
        default = inspect.Parameter.empty if arg in required else None
        parameters.append(
            inspect.Parameter(arg, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=kind)
        )
        annotations[arg] = kind
        arg_lines.append(f"    {arg}: {spec.get('description', arg)}")
    method.__name__ = method.__qualname__ = name
    method.__signature__ = inspect.Signature(parameters, return_annotation=str)  # type: ignore[attr-defined]
    method.__annotations__ = annotations
    description = schema.get("description", name)
    method.__doc__ = f"{description}\n\nArgs:\n" + "\n".join(arg_lines) + "\n\nReturns:\n    The env's reply."
    return method


class _TRLEnvironment:
    """Base of the classes `environment_factory` builds (one env per instance)."""

    env_id: str
    env_kwargs: Mapping[str, Any]

    def __init__(self) -> None:
        self.env = _make(self.env_id, self.env_kwargs)
        self.total_reward = 0.0
        self.done = False
        self.tool_calls = 0
        self.last_info: Mapping[str, Any] = {}

    def reset(self, **row: Any) -> str:
        """Reset the env to the row's task (``task_id`` / ``seed`` columns, if any)."""
        options = {"task_id": row["task_id"]} if row.get("task_id") else None
        seed = None if row.get("seed") is None else int(row["seed"])
        observation, self.last_info = self.env.reset(seed=seed, options=options)
        self.total_reward, self.done, self.tool_calls = 0.0, False, 0
        return str(observation)

    def _step(self, action: str) -> str:
        if self.done:
            return "The episode is over."
        observation, reward, terminated, truncated, self.last_info = self.env.step(action)
        self.total_reward += float(reward)
        self.done = bool(terminated or truncated)
        return str(observation)

    def _call_tool(self, name: str, arguments: Mapping[str, Any]) -> str:
        self.tool_calls += 1
        call = {"name": name, "arguments": {k: v for k, v in arguments.items() if v is not None}}
        return self._step(f"<tool_call>{json.dumps(call)}</tool_call>")

    def _finish(self, final_text: str) -> float:
        """Step the final answer (if the episode still runs) and return the episode's return."""
        if not self.done:
            self._step(final_text)
        return self.total_reward


def environment_factory(env_id: str, *, env_kwargs: Mapping[str, Any] | None = None) -> type:
    """The class to pass as TRL's ``environment_factory=`` for a multi-turn env with tools.

    The env's tools come from ``env.unwrapped.tool_schemas`` (or ``info["tools"]`` at reset), as
    OpenAI function schemas; each becomes a method of the class.
    """
    probe = _make(env_id, env_kwargs)
    try:
        _, info = probe.reset(seed=0)
        schemas = list(getattr(probe.unwrapped, "tool_schemas", ()) or info.get(K.TOOLS, ()))
    finally:
        probe.close()
    if not schemas:
        raise ValueError(f"{env_id} declares no tools: use reward_function() for a single-turn env")
    namespace: dict[str, Any] = {"env_id": env_id, "env_kwargs": dict(env_kwargs or {})}
    for schema in schemas:
        schema = schema.get("function", schema)
        if schema["name"] in ("reset", "get_reward") or schema["name"].startswith("_"):
            raise ValueError(f"tool name {schema['name']!r} clashes with TRL's environment interface")
        namespace[schema["name"]] = _tool_method(schema)
    name = "".join(part.capitalize() for part in env_id.split("/")[-1].replace("-", "_").split("_"))
    return type(f"{name}TRLEnvironment", (_TRLEnvironment,), namespace)


def environment_reward(
    prompts: Any, completions: Sequence[Any], environments: Sequence[Any], **_: Any
) -> list[float]:
    """TRL reward function for `environment_factory` envs: steps each final answer, returns the env's return.

    TRL passes the rollouts' environment instances as ``environments``; the final assistant message of
    each completion is the answer (it is not a tool call), so it is stepped into the env here.
    """
    del prompts
    return [env._finish(_text(c)) for c, env in zip(completions, environments, strict=True)]
