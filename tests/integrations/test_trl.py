"""The TRL adapters with the real TRL GRPOTrainer on the CPU (settings of DEPENDENCIES.md §9)."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import papergym  # noqa: F401
from papergym.integrations.trl import dataset, environment_factory, environment_reward, reward_function

REASONING = "papergym/Reasoning-v0"
SEARCH = "papergym/SearchCritic-v0"


def test_reward_function_replays_the_rows_task() -> None:
    rows = dataset(REASONING, 4, seed=5)
    reward = reward_function(REASONING)
    env = gym.make(REASONING)
    right = []
    for row in rows:
        env.reset(seed=row["seed"], options={"task_id": row["task_id"]})
        right.append(env.unwrapped.oracle_action())
    columns = {"task_id": [r["task_id"] for r in rows], "seed": [r["seed"] for r in rows]}
    good = reward(None, right, **columns)
    bad = reward(None, [[{"role": "assistant", "content": "no idea"}]] * 4, **columns)
    assert all(g > b for g, b in zip(good, bad, strict=True))
    with pytest.raises(ValueError, match="task_id and seed"):
        reward(None, right)


def test_environment_class_exposes_the_env_tools_as_typed_methods() -> None:
    cls = environment_factory(SEARCH)
    signature = inspect.signature(cls.search)
    assert list(signature.parameters) == ["self", "query"]
    from transformers.utils import get_json_schema

    schema = get_json_schema(cls().search)["function"]
    assert schema["name"] == "search" and schema["parameters"]["required"] == ["query"]
    env = cls()
    row = dataset(SEARCH, 1, seed=3)[0]
    assert env.reset(**row) is None  # the row's prompt already is the first observation
    assert env.reset(seed=3).startswith("You are")  # without a prompt, TRL gets the observation
    reply = env.search(query=["film director"])
    assert "<information>" in reply and env.tool_calls == 1
    assert env.last_info["tool_calls"] == [
        {"name": "search", "arguments": {"query": ["film director"]}, "ok": True}
    ]
    # the final answer is stepped by the reward function, which returns the env's return
    twin = cls()
    twin.reset(seed=3)
    assert environment_reward(None, ["<answer>x</answer>"], [twin]) == [twin.total_reward]
    assert twin.done
    with pytest.raises(ValueError, match="no tools"):
        environment_factory(REASONING)


def _two_step_config(trl, tmp_path: Path, **overrides: Any):
    """GRPOConfig for two CPU steps (the settings that work here: DEPENDENCIES.md §9)."""
    settings = {
        "output_dir": str(tmp_path / "out"),
        "max_steps": 2,
        "per_device_train_batch_size": 4,
        "num_generations": 4,
        "learning_rate": 1e-4,
        "use_vllm": False,
        "use_cpu": True,
        "bf16": False,
        "fp16": False,
        "report_to": "none",
        "save_strategy": "no",
        "logging_steps": 1,
        "seed": 0,
    }
    return trl.GRPOConfig(**{**settings, **overrides})


def test_trl_grpo_trains_two_steps_on_a_single_turn_env(tmp_path: Path, tiny_checkpoint: Path) -> None:
    datasets = pytest.importorskip("datasets")
    trl = pytest.importorskip("trl")
    from transformers import AutoTokenizer

    rows = dataset(REASONING, 8, seed=0)
    returned: list[list[float]] = []
    scorer = reward_function(REASONING)

    def counted(prompts, completions, **columns):
        rewards = scorer(prompts, completions, **columns)
        returned.append(rewards)
        return rewards

    config = _two_step_config(trl, tmp_path, max_completion_length=8)
    tokenizer = AutoTokenizer.from_pretrained(tiny_checkpoint)
    trainer = trl.GRPOTrainer(
        model=str(tiny_checkpoint),
        reward_funcs=counted,
        args=config,
        train_dataset=datasets.Dataset.from_list(rows),
        processing_class=tokenizer,
    )
    trainer.train()
    assert sum(len(r) for r in returned) == 8  # every completion of both steps went through the env
    logged = [entry for entry in trainer.state.log_history if "reward" in entry]
    assert len(logged) == 2
    for entry, rewards in zip(logged, returned, strict=True):  # the env's rewards reached the trainer
        assert entry["reward"] == pytest.approx(sum(rewards) / len(rewards))
    json.dumps(logged)  # the log is plain data


def _tool_calling_tiny(path: Path, tools: list[dict]) -> Path:
    """The tiny model, fine-tuned in a few seconds to answer a search question with a search call.

    An untrained model never calls a tool; this SFT teaches it one fixed call after SearchCritic's
    first observations, rendered with the tool schema as TRL renders them (loss on the reply's
    tokens only). That is all the test needs: TRL must parse the call, run the env's tool and carry
    the env's return to the trainer.
    """
    import torch

    from papergym.baselines.policy import pad_right, token_logprobs
    from papergym.baselines.tiny import build_tiny, save

    model, tokenizer = build_tiny(None, hidden=64, layers=2, heads=4, kv_heads=2)
    reply = '<tool_call>{"name": "search", "arguments": {"query": ["film director"]}}</tool_call><|im_end|>'
    reply_ids = tokenizer.encode(reply, add_special_tokens=False)
    prompts = [
        tokenizer.encode(
            tokenizer.apply_chat_template(
                row["prompt"], tools=tools, add_generation_prompt=True, tokenize=False
            ),
            add_special_tokens=False,
        )
        for row in dataset(SEARCH, 16, seed=100)  # other tasks than the training rows
    ]
    rows = [prompt + reply_ids for prompt in prompts]
    masks = [[0] * len(prompt) + [1] * len(reply_ids) for prompt in prompts]
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    for step in range(200):
        batch = [(step * 4 + i) % len(rows) for i in range(4)]
        ids, attention = pad_right([rows[i] for i in batch], tokenizer.pad_token_id)
        mask, _ = pad_right([masks[i] for i in batch], 0)
        logp = token_logprobs(model, ids, attention)  # (B, L)
        loss = -(logp * mask).sum() / mask.sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if float(loss) < 0.01:
            break
    return save(model, tokenizer, path)


def test_trl_grpo_runs_the_env_tools_of_a_multi_turn_env(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    trl = pytest.importorskip("trl")
    from transformers import AutoTokenizer
    from transformers.utils import get_json_schema

    environment = environment_factory(SEARCH)
    checkpoint = _tool_calling_tiny(tmp_path / "tiny", [get_json_schema(environment.search)])
    returned: list[list[float]] = []
    tool_calls: list[int] = []

    def reward(prompts, completions, environments, **kwargs):
        rewards = environment_reward(prompts, completions, environments, **kwargs)
        returned.append(rewards)
        tool_calls.append(sum(env.tool_calls for env in environments))
        return rewards

    config = _two_step_config(trl, tmp_path, max_completion_length=96, temperature=0.3)
    trainer = trl.GRPOTrainer(
        model=str(checkpoint),
        reward_funcs=reward,
        args=config,
        train_dataset=datasets.Dataset.from_list(dataset(SEARCH, 8, seed=0)),
        processing_class=AutoTokenizer.from_pretrained(checkpoint),
        environment_factory=environment,
    )
    trainer.train()
    assert sum(tool_calls) >= 1  # the env's search tool ran inside TRL's generation loop
    logged = [entry for entry in trainer.state.log_history if "reward" in entry]
    assert len(logged) == 2
    assert any(entry["tools/call_frequency"] > 0 for entry in logged)
    for entry, rewards in zip(logged, returned, strict=True):  # the env's returns reached the trainer
        assert entry["reward"] == pytest.approx(sum(rewards) / len(rewards))
