"""Supervised warm-start on any env's oracle demonstrations, so a tiny model starts RL with nonzero success.

The oracle plays ``episodes`` training tasks; each episode becomes the token context the policy would see
(`papergym.baselines.rollout.demonstrations`: chat-template framing, env turns masked), and the policy
is trained with cross-entropy on the oracle's action tokens only. Run it with
``papergym train sft --env papergym/Reasoning-v0 --env-kw domain=instruction``.
"""

from __future__ import annotations

import importlib
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from papergym.baselines.policy import PolicyModel, load_policy, micro_batches, pad_right, token_logprobs
from papergym.baselines.rollout import Segment, demonstrations
from papergym.baselines.run import (
    PolicyRunArgs,
    Run,
    evaluate_args,
    make_envs,
    parse_kwargs,
    start_run,
)
from papergym.core.errors import require
from papergym.core.trajectory import Policy, member_seed


@dataclass
class Args(PolicyRunArgs):
    """Supervised fine-tuning on oracle demonstrations."""

    out: str = "runs/sft"
    """The run directory (metrics.jsonl, checkpoints/, final/, curves.png)."""
    episodes: int = 2000
    """Oracle demonstrations collected (training tasks with seeds derived from the run seed)."""
    steps: int = 300
    """Optimizer steps."""
    batch_size: int = 32
    """Sequences (contexts) per step."""
    micro_batch: int = 1
    """Contexts per forward/backward pass; gradients accumulate over a step's micro-batches (0: one pass).
    1 pads nothing, the fastest on a CPU; raise it on a GPU as memory allows."""
    lr: float = 2e-3
    """AdamW learning rate (a from-scratch tiny model needs a large one; use ~1e-5 for a pretrained model)."""
    weight_decay: float = 0.0
    """AdamW weight decay."""
    max_grad_norm: float = 1.0
    """Gradient clipping norm."""
    warmup_steps: int = 20
    """Linear learning-rate warm-up steps."""
    max_new_tokens: int = 64
    """Token budget per action at evaluation."""
    demonstrator: str | None = None
    """The policy that plays the demonstrations, as ``module:Class`` (a `papergym.core.trajectory.Policy`
    built with no arguments, bound to the env and reset with each episode's seed), e.g.
    ``papergym.envs.voice.hearing_oracle:HearingOracle``; None: the env's privileged
    ``oracle_action()``."""


def demonstration_contexts(policy: PolicyModel, args: Args) -> list[Segment]:
    """The oracle's trainable contexts: deterministic in the run seed, so a resumed run rebuilds them."""
    envs = make_envs(args.env, parse_kwargs(args.env_kw), 1)
    seeds = [member_seed(args.seed, i) % 2**31 for i in range(args.episodes)]
    teacher = demonstrator(args.demonstrator)
    contexts: list[Segment] = []
    for s in seeds:
        act = None
        if teacher is not None:
            bind = getattr(teacher, "bind", None)
            if bind is not None:
                bind(envs[0])
            teacher.reset(seed=s)
            act = acting(teacher)
        for episode in demonstrations(policy, envs, seeds=[s], act=act):
            contexts.extend(seg for seg in episode.segments if any(seg.loss_mask))
    if not contexts:
        raise ValueError(f"the oracle of {args.env} produced no trainable tokens")
    return contexts


def demonstrator(spec: str | None) -> Policy | None:
    """The `Policy` named by ``spec`` (``module:Class``, built with no arguments), or None.

    Raises:
        ValueError: ``spec`` is not of the form ``module:Class``.
    """
    if spec is None:
        return None
    module, sep, name = spec.partition(":")
    if not sep or not module or not name:
        raise ValueError(f"demonstrator must be module:Class, got {spec!r}")
    policy: Policy = getattr(importlib.import_module(module), name)()
    return policy


def acting(teacher: Policy) -> Callable[[Any, Any], str]:
    """``teacher`` as the ``act(env, observation)`` of `demonstrations` (its actions must be text; a
    demonstration script sees no step info, so the policy gets an empty mapping)."""

    def act(env: Any, observation: Any) -> str:
        action = teacher(observation, {})
        if not isinstance(action, str):
            raise TypeError(f"a demonstrator's actions must be text, got {type(action).__name__}")
        return action

    return act


def update(
    policy: PolicyModel,
    optimizer: Any,
    batch: Sequence[Segment],
    *,
    lr: float,
    warmup_steps: int,
    max_grad_norm: float,
    step: int,
    micro_batch: int = 1,
) -> dict[str, float]:
    """One cross-entropy step on the ``loss_mask`` tokens of ``batch`` (linear warm-up to ``lr`` over
    ``warmup_steps``, gradient clipped to ``max_grad_norm``), its gradient accumulated over
    ``micro_batch``-context passes (0: one pass); the step's metrics. Also the learned world model's
    step (`papergym.baselines.world_model`)."""
    torch = require("torch", "llm")
    for group in optimizer.param_groups:
        group["lr"] = lr * min(1.0, (step + 1) / max(1, warmup_steps))
    tokens = float(sum(sum(c.loss_mask) for c in batch))
    optimizer.zero_grad(set_to_none=True)
    loss_value = 0.0
    for chunk in micro_batches([len(c.token_ids) for c in batch], micro_batch):
        ids, attn = pad_right([batch[i].token_ids for i in chunk], policy.pad_id, device=policy.device)
        mask, _ = pad_right([batch[i].loss_mask for i in chunk], 0, device=policy.device)
        logp = token_logprobs(policy.model, ids, attn, keep=mask)  # (b, L)
        loss = -(logp * mask.to(logp.dtype)).sum() / max(tokens, 1.0)
        loss.backward()
        loss_value += float(loss.detach())
    grad_norm = torch.nn.utils.clip_grad_norm_(policy.model.parameters(), max_grad_norm)
    optimizer.step()
    return {
        "loss": loss_value,
        "grad_norm": float(grad_norm),
        "tokens": tokens,
        "lr": optimizer.param_groups[0]["lr"],
    }


def fit(
    run: Run,
    policy: PolicyModel,
    batch_at: Callable[[int], Sequence[Segment]],
    *,
    steps: int,
    lr: float,
    warmup_steps: int,
    max_grad_norm: float,
    weight_decay: float = 0.0,
    micro_batch: int = 1,
) -> dict[str, float]:
    """The cross-entropy loop every supervised trainer shares (SFT, the learned world model, induction
    pre-training): AdamW (restored on a resumed run), then `update` on ``batch_at(step)`` for each of the
    run's remaining steps up to ``steps``, each logged (with seconds since the loop began) and
    checkpointed on the run's period. Returns the last step's metrics (loss NaN when no step ran)."""
    torch = require("torch", "llm")
    optimizer = torch.optim.AdamW(policy.model.parameters(), lr=lr, weight_decay=weight_decay)
    run.restore(optimizer)
    policy.model.train()
    start = time.perf_counter()
    metrics: dict[str, float] = {"loss": float("nan")}
    for step in range(run.start_step, steps):
        metrics = update(
            policy,
            optimizer,
            batch_at(step),
            lr=lr,
            warmup_steps=warmup_steps,
            max_grad_norm=max_grad_norm,
            step=step,
            micro_batch=micro_batch,
        )
        run.log(step, {**metrics, "seconds": time.perf_counter() - start})
        run.checkpoint(step + 1, policy.model, policy.tokenizer, optimizer)
    return metrics


def main(args: Args, *, extra: Sequence[Segment] = ()) -> dict[str, Any]:
    """Train; returns the final metrics (loss, and success before/after when ``eval_tasks > 0``).

    Args:
        args: the settings.
        extra: more trainable contexts mixed with the oracle's (e.g. CAFE's recovery data,
            `papergym.baselines.recovery`); with ``episodes=0`` they are the only data.
    """
    require("torch", "llm")  # the install hint before any work
    run = start_run(args, total_steps=args.steps, desc="sft")
    policy = load_policy(run.checkpoint_model_path or args.model, device=args.device)
    result: dict[str, Any] = {}
    if args.eval_tasks and run.start_step == 0:
        result["success_before"] = evaluate_args(
            policy, args, max_new_tokens=args.max_new_tokens, when="before"
        )
    contexts = (demonstration_contexts(policy, args) if args.episodes else []) + list(extra)
    if not contexts:
        raise ValueError("no training contexts: set episodes > 0 or pass extra contexts")

    def batch_at(step: int) -> list[Segment]:
        rng = random.Random(member_seed(args.seed, 10**7 + step))  # a private generator per step
        return [contexts[rng.randrange(len(contexts))] for _ in range(args.batch_size)]

    metrics = fit(
        run,
        policy,
        batch_at,
        steps=args.steps,
        lr=args.lr,
        warmup_steps=args.warmup_steps,
        max_grad_norm=args.max_grad_norm,
        weight_decay=args.weight_decay,
        micro_batch=args.micro_batch,
    )
    result["loss"] = metrics["loss"]
    result["demonstration_contexts"] = len(contexts)
    if args.eval_tasks:
        result["success_after"] = evaluate_args(policy, args, max_new_tokens=args.max_new_tokens)
    run.finish(policy.model, policy.tokenizer)
    result["out"] = str(run.out)
    return result
