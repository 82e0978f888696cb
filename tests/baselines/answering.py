"""A tiny model taught in a few seconds to answer TestTime / MultiDomain prompts with ``\\boxed{k}``, k drawn
from a skewed distribution, so majority votes have a winner and dissenters (a random model never answers)."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym

import papergym  # noqa: F401  (registers the ids)
from tests.backends.tiny_lm import build_tiny_checkpoint

ANSWERS = ("1", "2", "3")
WEIGHTS = (0.5, 0.3, 0.2)


def answering_checkpoint(path: Path, *, env_id: str = "papergym/TestTime-v0", steps: int = 40) -> Path:
    """Build the byte-level tiny model at ``path`` and fine-tune it to answer ``\\boxed{k}``."""
    import torch

    from papergym.baselines.policy import load_policy, pad_right, token_logprobs

    build_tiny_checkpoint(path, hidden=32, layers=2)
    policy = load_policy(path)
    env = gym.make(env_id)
    prompts = []
    for seed in range(8):
        obs, _ = env.reset(seed=seed)
        prompts.append(policy.encode_chat([{"role": "user", "content": obs}]))
    env.close()
    generator = torch.Generator().manual_seed(0)
    optimizer = torch.optim.Adam(policy.model.parameters(), lr=3e-3)
    eos = policy.tokenizer.eos_token_id
    policy.model.train()
    for _ in range(steps):
        picks = torch.multinomial(torch.tensor(WEIGHTS), len(prompts), replacement=True, generator=generator)
        rows, masks = [], []
        for prompt, k in zip(prompts, picks.tolist(), strict=True):
            answer = [*policy.encode(f"\\boxed{{{ANSWERS[k]}}}"), eos]
            rows.append(prompt + answer)
            masks.append([0] * len(prompt) + [1] * len(answer))
        ids, attn = pad_right(rows, policy.pad_id)
        loss_mask, _ = pad_right(masks, 0)
        logp = token_logprobs(policy.model, ids, attn)
        loss = -(logp * loss_mask).sum() / loss_mask.sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    policy.model.save_pretrained(path)
    return path
