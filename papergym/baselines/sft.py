"""Supervised warm-start on any env's oracle demonstrations, so a tiny model starts RL with nonzero success.

The oracle plays ``episodes`` training tasks; each episode becomes the token context the policy would see
(`papergym.baselines.rollout.demonstrations`: chat-template framing, env turns masked), and the policy
is trained with cross-entropy on the oracle's action tokens only. Run it with
``papergym train sft --env papergym/Reasoning-v0 --env-kw domain=instruction``.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

from papergym.baselines.policy import load_policy, pad_right, token_logprobs
from papergym.baselines.rollout import Segment, demonstrations
from papergym.baselines.run import Run, evaluate_policy, make_envs, parse_kwargs, set_threads
from papergym.core.errors import require
from papergym.core.trajectory import member_seed


@dataclass
class Args:
    """Supervised fine-tuning on oracle demonstrations."""

    env: str = "papergym/Reasoning-v0"
    """The env id whose oracle demonstrates."""
    env_kw: list[str] = field(default_factory=list)
    """Env constructor kwargs as key=value (a value is parsed as JSON when it can be), e.g. domain=math."""
    model: str = "tiny"
    """"tiny" (a fresh tiny Qwen2 built in code) or a local checkpoint directory."""
    out: str = "runs/sft"
    """The run directory (metrics.jsonl, checkpoints/, final/, curves.png)."""
    seed: int = 0
    """The run seed: demonstration tasks and batch order derive from it."""
    episodes: int = 2000
    """Oracle demonstrations collected (training tasks with seeds derived from the run seed)."""
    steps: int = 300
    """Optimizer steps."""
    batch_size: int = 32
    """Sequences (contexts) per step."""
    lr: float = 2e-3
    """AdamW learning rate (a from-scratch tiny model needs a large one; use ~1e-5 for a pretrained model)."""
    weight_decay: float = 0.0
    """AdamW weight decay."""
    max_grad_norm: float = 1.0
    """Gradient clipping norm."""
    warmup_steps: int = 20
    """Linear learning-rate warm-up steps."""
    eval_tasks: int = 0
    """Held-out test tasks for a greedy success rate before and after training (0: skip)."""
    eval_batch: int = 64
    """Episodes per evaluation batch."""
    max_new_tokens: int = 64
    """Token budget per action at evaluation."""
    checkpoint_every: int = 0
    """Save a checkpoint every N steps (0: only the final model)."""
    resume: bool = False
    """Continue from the newest checkpoint in out."""
    progress: bool = True
    """Show a tqdm progress bar."""
    tensorboard: bool = False
    """Also write TensorBoard scalars to out/tb."""
    threads: int = 1
    """Torch CPU threads (0: torch's default)."""
    device: str = "cpu"
    """The torch device."""


def main(args: Args) -> dict[str, Any]:
    """Train; returns the final metrics (loss, and success before/after when ``eval_tasks > 0``)."""
    torch = require("torch", "llm")
    set_threads(args.threads)
    env_kwargs = parse_kwargs(args.env_kw)
    run = Run(
        args.out,
        total_steps=args.steps,
        resume=args.resume,
        progress=args.progress,
        tensorboard=args.tensorboard,
        desc="sft",
    )
    policy = load_policy(run.checkpoint_model_path or args.model, device=args.device)
    model = policy.model
    result: dict[str, Any] = {}
    if args.eval_tasks and run.start_step == 0:
        before = evaluate_policy(
            policy,
            args.env,
            env_kwargs,
            tasks=args.eval_tasks,
            batch=args.eval_batch,
            max_new_tokens=args.max_new_tokens,
        )
        result["success_before"] = before
    # the demonstrations: deterministic in the run seed, so a resumed run rebuilds the same data
    envs = make_envs(args.env, env_kwargs, 1)
    seeds = [member_seed(args.seed, i) % 2**31 for i in range(args.episodes)]
    contexts: list[Segment] = []
    for s in seeds:
        for episode in demonstrations(policy, envs, seeds=[s]):
            contexts.extend(seg for seg in episode.segments if any(seg.loss_mask))
    if not contexts:
        raise ValueError(f"the oracle of {args.env} produced no trainable tokens")
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    if run.resumed_state is not None:
        optimizer.load_state_dict(run.resumed_state["optimizer"])
    model.train()
    start = time.perf_counter()
    loss_value = float("nan")
    for step in range(run.start_step, args.steps):
        rng = random.Random(member_seed(args.seed, 10**7 + step))  # a private generator per step
        batch = [contexts[rng.randrange(len(contexts))] for _ in range(args.batch_size)]
        ids, attn = pad_right([c.token_ids for c in batch], policy.pad_id, device=policy.device)
        mask, _ = pad_right([c.loss_mask for c in batch], 0, device=policy.device)
        for group in optimizer.param_groups:
            group["lr"] = args.lr * min(1.0, (step + 1) / max(1, args.warmup_steps))
        logp = token_logprobs(model, ids, attn)  # (B, L)
        mask = mask.to(logp.dtype)
        loss = -(logp * mask).sum() / mask.sum().clamp(min=1.0)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
        optimizer.step()
        loss_value = float(loss.detach())
        run.log(
            step,
            {
                "loss": loss_value,
                "grad_norm": float(grad_norm),
                "tokens": float(mask.sum()),
                "lr": optimizer.param_groups[0]["lr"],
                "seconds": time.perf_counter() - start,
            },
        )
        done = step + 1
        if args.checkpoint_every and done % args.checkpoint_every == 0 and done < args.steps:
            run.save(done, model, policy.tokenizer, optimizer)
    result["loss"] = loss_value
    result["demonstration_contexts"] = len(contexts)
    if args.eval_tasks:
        result["success_after"] = evaluate_policy(
            policy,
            args.env,
            env_kwargs,
            tasks=args.eval_tasks,
            batch=args.eval_batch,
            max_new_tokens=args.max_new_tokens,
        )
    run.finish(model, policy.tokenizer)
    result["out"] = str(run.out)
    return result
