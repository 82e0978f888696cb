"""Multi-teacher on-policy distillation (MOPD): domain experts distilled into one student on its own rollouts.

The student samples completions of a domain mixture (``papergym/MultiDomain-v0``); each prompt is routed to
its domain's teacher (``info["domain"]`` at reset), which scores the student's tokens. The per-token
advantage is ``stop_grad(log π_teacher − log π_student)`` (M2RL's ``on_policy_distillation`` estimator
[C: Mosi-AI/M2RL loss.py], papers/training.md §0.3 / §3.2: a single-sample estimate of the reverse KL),
used in the clipped policy loss, optionally plus ``α`` times the group-normalised outcome advantage
(MiMo-V2-Flash's form, §3.2). Settings default to M2RL's multi_teacher_opd.sh where it gives them.

Teachers are local checkpoints with the student's tokenizer, e.g. GRPO experts trained per domain
(``papergym train grpo --env papergym/Reasoning-v0 --env-kw domain=math``); compare with merging them
(``papergym train merge``) and with Mix-RL (GRPO on MultiDomain-v0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from papergym.baselines.losses import LossStats, clipped_policy_loss, group_advantages
from papergym.baselines.policy import PolicyModel, completion_logprobs, load_policy, micro_batches
from papergym.baselines.rollout import Episode, completion_parts, group_seeds, run_episodes
from papergym.baselines.run import (
    PolicyRunArgs,
    evaluate_args,
    make_envs,
    parse_kwargs,
    split_options,
    start_run,
)
from papergym.core import info_keys as K
from papergym.core.errors import require


@dataclass
class Args(PolicyRunArgs):
    """Multi-teacher on-policy distillation (defaults: M2RL's multi_teacher_opd.sh unless marked inferred)."""

    env: str = "papergym/MultiDomain-v0"
    """The env: its reset info must name each episode's domain (``info["domain"]``)."""
    out: str = "runs/mopd"
    """The run directory (metrics.jsonl, checkpoints/, final/, curves.png)."""
    teachers: list[str] = field(default_factory=list)
    """One ``domain=PATH`` per domain: the teacher checkpoint each domain's prompts are routed to."""
    steps: int = 400
    """Optimizer steps (M2RL: 400 rollouts)."""
    prompts_per_step: int = 8
    """Prompts per step (inferred; M2RL: 256)."""
    group_size: int = 4
    """Samples per prompt (M2RL: 4)."""
    temperature: float = 1.0
    """Sampling temperature (M2RL: 1.0)."""
    max_new_tokens: int = 256
    """Most tokens per action (inferred; M2RL: 16384)."""
    lr: float = 1e-6
    """Adam learning rate (M2RL: 1e-6, constant)."""
    weight_decay: float = 0.1
    """AdamW weight decay (M2RL: 0.1)."""
    beta2: float = 0.98
    """Adam's β2 (M2RL: (0.9, 0.98))."""
    clip_eps: float = 0.2
    """The clip range of the policy loss (PPO's usual 0.2)."""
    outcome_weight: float = 0.0
    """α: add α times the group-normalised env-return advantage (MiMo-V2-Flash; M2RL: 0)."""
    max_grad_norm: float = 1.0
    """Clip the gradient to this global L2 norm before each step (the same default as sft and grpo)."""
    micro_batch: int = 1
    """Episodes per forward/backward pass of a step, gradients accumulated (0: one padded pass over the
    batch); the step is the whole batch's either way (as `papergym.baselines.grpo.Args.micro_batch`)."""


def parse_teachers(specs: Sequence[str]) -> dict[str, str]:
    """``["math=PATH", ...]`` as ``{"math": "PATH"}``.

    >>> parse_teachers(["math=runs/m/final", "code=runs/c/final"])
    {'math': 'runs/m/final', 'code': 'runs/c/final'}
    """
    table: dict[str, str] = {}
    for spec in specs:
        domain, sep, path = spec.partition("=")
        if not sep or not domain or not path:
            raise ValueError(f"teachers are domain=PATH, got {spec!r}")
        table[domain] = path
    return table


def domain_of(episode: Episode) -> str:
    """The episode's domain (``info["domain"]`` of its reset)."""
    domain = episode.trajectory.reset_info.get(K.DOMAIN)
    if not isinstance(domain, str):
        raise ValueError("MOPD routes by info['domain']; this env's reset info has none")
    return domain


def opd_advantages(teacher_logp: Any, student_logp: Any, mask: Any) -> Any:
    """``stop_grad(log π_T − log π_S)`` per token, 0 off the mask (``(B, T)`` in and out)."""
    return (teacher_logp.detach() - student_logp.detach()) * mask


def micro_batch_loss(
    args: Args,
    policy: PolicyModel,
    teachers: Mapping[str, PolicyModel],
    parts: Sequence[tuple[list[int], list[int], list[int], list[float]]],
    domains: Sequence[str],
    outcome_advantages: Any,
    batch_tokens: float,
) -> tuple[Any, float, LossStats]:
    """One micro-batch's share of the batch's distillation loss (`completion_parts` of its episodes, each
    scored by its own domain's teacher; ``outcome_advantages`` ``(b,)`` or None; ``batch_tokens`` the
    whole batch's loss tokens): the loss, its summed reverse-KL estimate and its loss statistics."""
    torch = require("torch", "llm")
    prompts = [p for p, _, _, _ in parts]
    completions = [c if c else [policy.pad_id] for _, c, _, _ in parts]
    logp, mask = completion_logprobs(policy, prompts, completions, temperature=args.temperature)  # (b, T)
    loss_mask = torch.zeros_like(mask)
    old_logp = torch.zeros_like(mask)
    for i, (_, _, m, lp) in enumerate(parts):
        loss_mask[i, : len(m)] = torch.tensor(m, dtype=mask.dtype)
        old_logp[i, : len(lp)] = torch.tensor(lp, dtype=mask.dtype)
    teacher_logp = torch.zeros_like(mask)
    with torch.no_grad():
        for domain, teacher in teachers.items():
            rows = [i for i, d in enumerate(domains) if d == domain]
            if rows:
                t_logp, _ = completion_logprobs(
                    teacher,
                    [prompts[i] for i in rows],
                    [completions[i] for i in rows],
                    temperature=args.temperature,
                )
                teacher_logp[rows, : t_logp.shape[1]] = t_logp
    advantages = opd_advantages(teacher_logp, logp, loss_mask)  # (b, T)
    if outcome_advantages is not None:
        advantages = advantages + args.outcome_weight * outcome_advantages.view(-1, 1) * loss_mask
    loss, stats = clipped_policy_loss(
        logp,
        old_logp,
        advantages,
        loss_mask,
        eps_low=args.clip_eps,
        eps_high=args.clip_eps,
        norm="token",
        batch_tokens=batch_tokens,
    )
    reverse_kl = float(((logp.detach() - teacher_logp) * loss_mask).sum())
    return loss, reverse_kl, stats


def load_teachers(args: Args, policy: PolicyModel) -> dict[str, PolicyModel]:
    """The frozen teachers of ``args.teachers``, each checked to share the student's vocabulary."""
    teachers = {d: load_policy(p, device=args.device) for d, p in parse_teachers(args.teachers).items()}
    for domain, teacher in teachers.items():
        teacher.model.requires_grad_(False)
        if teacher.tokenizer.get_vocab() != policy.tokenizer.get_vocab():
            raise ValueError(
                f"the {domain} teacher's tokenizer differs from the student's: OPD needs one vocabulary"
            )
    return teachers


def sample_groups(args: Args, policy: PolicyModel, envs: Sequence[Any], step: int) -> list[Episode]:
    """The step's episodes: ``prompts_per_step`` training tasks, ``group_size`` samples each (group-major)."""
    seeds, sample_seed = group_seeds(args.seed, step, args.prompts_per_step, args.group_size)
    return run_episodes(
        policy,
        envs,
        seeds=seeds,
        sample_seed=sample_seed,
        options=split_options(envs[0], "train"),
        max_new_tokens=args.max_new_tokens,
        temperature=args.temperature,
    )


def update(
    args: Args,
    policy: PolicyModel,
    teachers: Mapping[str, PolicyModel],
    optimizer: Any,
    episodes: Sequence[Episode],
) -> dict[str, Any]:
    """One clipped step on the batch's distillation loss, gradients accumulated over ``args.micro_batch``-
    episode passes of similar length (the token-mean loss's shares, so the step is the whole batch's); the
    metrics."""
    torch = require("torch", "llm")
    outcome = [e.trajectory.total_reward for e in episodes]
    parts = [completion_parts(e) for e in episodes]
    domains = [domain_of(e) for e in episodes]
    outcome_advantages = None
    if args.outcome_weight:
        returns = torch.tensor(outcome, dtype=torch.float32).view(-1, args.group_size)  # (P, G)
        outcome_advantages = group_advantages(returns).reshape(-1)
    batch_tokens = max(float(sum(sum(m) for _, _, m, _ in parts)), 1.0)
    optimizer.zero_grad(set_to_none=True)
    loss_sum, reverse_kl, part_stats = 0.0, 0.0, []
    for chunk in micro_batches([len(p) + len(c) for p, c, _, _ in parts], args.micro_batch):
        loss, kl_sum, chunk_stats = micro_batch_loss(
            args,
            policy,
            teachers,
            [parts[i] for i in chunk],
            [domains[i] for i in chunk],
            None if outcome_advantages is None else outcome_advantages[chunk],
            batch_tokens,
        )
        loss.backward()
        loss_sum += float(loss.detach())
        reverse_kl += kl_sum / batch_tokens
        part_stats.append((chunk_stats, float(sum(sum(parts[i][2]) for i in chunk))))
    grad_norm = torch.nn.utils.clip_grad_norm_(policy.model.parameters(), args.max_grad_norm)
    optimizer.step()
    stats = {
        "loss": loss_sum,
        "reverse_kl": reverse_kl,
        "clip_fraction": LossStats.pooled(part_stats).clip_fraction,
    }
    return {
        "grad_norm": float(grad_norm),
        **stats,
        "reward": float(np.mean(outcome)),
        "success": float(np.mean([e.trajectory.success for e in episodes])),
    }


def main(args: Args) -> dict[str, Any]:
    """Run MOPD; returns the last step's metrics and the run directory (and success before/after when
    ``eval_tasks > 0``)."""
    torch = require("torch", "llm")
    paths = parse_teachers(args.teachers)
    if not paths:
        raise ValueError("mopd needs --teachers domain=PATH ... (one per domain of the env)")
    envs = make_envs(args.env, parse_kwargs(args.env_kw), args.prompts_per_step * args.group_size)
    missing = [d for d in getattr(envs[0].unwrapped, "domains", ()) if d not in paths]
    if missing:
        raise ValueError(f"no teacher for domains {missing}: add --teachers {missing[0]}=PATH")
    run = start_run(args, total_steps=args.steps, desc="mopd")
    policy = load_policy(run.checkpoint_model_path or args.model, device=args.device)
    teachers = load_teachers(args, policy)
    result: dict[str, Any] = {"out": str(run.out), "args": asdict(args)}
    if args.eval_tasks and run.start_step == 0:
        result["success_before"] = evaluate_args(
            policy, args, max_new_tokens=args.max_new_tokens, when="before"
        )
    optimizer = torch.optim.AdamW(
        policy.model.parameters(), lr=args.lr, weight_decay=args.weight_decay, betas=(0.9, args.beta2)
    )
    run.restore(optimizer)
    metrics: dict[str, Any] = {}
    try:
        for step in range(run.start_step, args.steps):
            episodes = sample_groups(args, policy, envs, step)
            metrics = update(args, policy, teachers, optimizer, episodes)
            run.log(step, metrics)
            run.checkpoint(step + 1, policy.model, policy.tokenizer, optimizer)
    finally:
        for env in envs:
            env.close()
    if args.eval_tasks:
        result["success_after"] = evaluate_args(policy, args, max_new_tokens=args.max_new_tokens)
    run.finish(policy.model, policy.tokenizer)
    return {**result, **metrics}
