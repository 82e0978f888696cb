"""GRPO and its variants on any papergym env, with the papers' group rewards, advantage hooks and prefix
perturbation (papers/training.md §0.1, §2).

Each step samples ``prompts_per_step`` tasks and plays each ``group_size`` times (multi-turn episodes in
token space: `papergym.baselines.rollout`), scores every member (the env's return, or any `GroupReward`),
turns the group's rewards into advantages, spreads each member's advantage over its action tokens (or
per action through any `AdvantageHook`), and takes the clipped policy-gradient step of
`papergym.baselines.losses`.

Variants (``--variant``), each a set of defaults any flag overrides:

- ``grpo`` (DeepSeekMath): std-normalised advantages, sequence-level averaging, clip ε = 0.2, k3 KL to the
  initial model with β = 0.04.
- ``dapo``: token-level averaging, clip-higher (0.2 / 0.28), groups with zero reward variance dropped
  (DAPO's dynamic sampling, without its resampling to refill the batch), no KL.
- ``dr_grpo`` (Dr. GRPO): advantage ``r - mean(r)`` (no std), the token sum divided by a constant (the
  generation budget), no KL.

Prefix perturbation (§2, the PKU paper's mechanism, details inferred from its precursors): with probability
``prefix_prob`` (0.2) a member's first action starts with a reasoning prefix written by ``prefix_model``,
cut where that model's token entropy drops most (a smoothed drop over ``prefix_window`` tokens, within
10–70% of the trace), and is continued by the policy. The prefix tokens are masked from the loss
(``prefix_loss=mask``, PrefixRL / Prefix Sampling) or kept with LUFFY's weight ``π/(π+γ)``, γ = 0.1, unclipped
(``prefix_loss=luffy``). Advantages are computed over the whole group, perturbed members included (LUFFY).

Run: ``papergym train grpo --env papergym/Reasoning-v0 --env-kw domain=instruction --model runs/sft/final``.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from papergym.baselines.losses import clipped_policy_loss, group_advantages, nonzero_variance_groups
from papergym.baselines.policy import PolicyModel, load_policy, pad_right, token_logprobs
from papergym.baselines.prefix import prefix_tokens
from papergym.baselines.rollout import Episode, ForcedTokens, run_episodes
from papergym.baselines.run import (
    Run,
    evaluate_policy,
    make_envs,
    parameter_distance,
    parameter_snapshot,
    parse_kwargs,
    set_threads,
)
from papergym.core import info_keys as K
from papergym.core.errors import require
from papergym.core.trajectory import member_seed
from papergym.credit import ADVANTAGE_HOOKS, GROUP_REWARDS, resolve
from papergym.credit.protocols import AdvantageHook, GroupReward

VARIANTS: dict[str, dict[str, Any]] = {
    "grpo": {"std_norm": True, "norm": "seq", "eps_high": 0.2, "beta": 0.04, "drop_zero_variance": False},
    "dapo": {"std_norm": True, "norm": "token", "eps_high": 0.28, "beta": 0.0, "drop_zero_variance": True},
    "dr_grpo": {
        "std_norm": False,
        "norm": "constant",
        "eps_high": 0.2,
        "beta": 0.0,
        "drop_zero_variance": False,
    },
}
"""Each variant's defaults (training.md §0.1: DeepSeekMath, DAPO, Dr. GRPO)."""
LUFFY_GAMMA = 0.1
"""LUFFY's shaping constant γ in π/(π+γ) (arXiv 2504.14945; training.md §2.3)."""


@dataclass
class Args:
    """GRPO and its variants."""

    env: str = "papergym/Reasoning-v0"
    """The env id to train on."""
    env_kw: list[str] = field(default_factory=list)
    """Env constructor kwargs as key=value (a value is parsed as JSON when it can be), e.g. domain=math."""
    model: str = "tiny"
    """"tiny" (a fresh tiny Qwen2 built in code) or a local checkpoint directory (SFT, ES or any HF model)."""
    out: str = "runs/grpo"
    """The run directory (metrics.jsonl, checkpoints/, final/, curves.png)."""
    seed: int = 0
    """The run seed: every task, sampling and perturbation seed derives from it and the step."""
    steps: int = 50
    """Optimizer steps (one sampling stage each)."""
    prompts_per_step: int = 4
    """Tasks per step (B)."""
    group_size: int = 8
    """Rollouts per task (G)."""
    max_new_tokens: int = 64
    """Token budget of one action."""
    max_turns: int | None = None
    """An extra bound on actions per episode (the env's time limit applies anyway)."""
    temperature: float = 1.0
    """Sampling temperature."""
    top_p: float = 1.0
    """Nucleus sampling mass (1.0: off)."""
    lr: float = 1e-5
    """AdamW learning rate (DeepSeekMath: 1e-6 for 7B; a tiny model needs more, e.g. 1e-4)."""
    max_grad_norm: float = 1.0
    """Gradient clipping norm."""
    variant: Literal["grpo", "dapo", "dr_grpo"] = "grpo"
    """Which defaults to use for the fields below left at None."""
    std_norm: bool | None = None
    """Divide advantages by the group's std (None: the variant's)."""
    norm: Literal["seq", "token", "constant"] | None = None
    """Loss averaging: per sequence, per token of the batch, or a constant (None: the variant's)."""
    eps_low: float = 0.2
    """Lower clip range ε_low."""
    eps_high: float | None = None
    """Upper clip range ε_high (None: the variant's, DAPO 0.28)."""
    beta: float | None = None
    """KL weight to the initial model (None: the variant's, GRPO 0.04)."""
    kl: Literal["k1", "k2", "k3"] = "k3"
    """KL estimator."""
    drop_zero_variance: bool | None = None
    """Drop groups whose rewards are all equal (None: the variant's, DAPO True)."""
    updates_per_batch: int = 1
    """Policy updates per sampling stage (μ; 1 makes the ratio 1 on the only update)."""
    group_reward: str | None = None
    """A GroupReward: short name (majority_vote, feedback_request) or module:Class; None: the env's return."""
    advantage_hook: str | None = None
    """An AdvantageHook: short name (feedback_shaping) or module:Class; None: one advantage per episode."""
    prefix_model: str | None = None
    """The small model writing reasoning prefixes ("tiny" or a checkpoint dir); None: no perturbation."""
    prefix_prob: float = 0.2
    """Probability that a member is prefix-perturbed (the PKU paper's 20%)."""
    prefix_min: float = 0.1
    """Earliest cut, as a fraction of the prefix model's trace (inferred, training.md §2.4)."""
    prefix_max: float = 0.7
    """Latest cut, as a fraction of the trace (inferred, training.md §2.4)."""
    prefix_window: int = 4
    """Tokens averaged on each side of a candidate cut (1: the raw single-step drop; inferred)."""
    prefix_tokens: int = 64
    """Token budget of the prefix model's trace."""
    prefix_loss: Literal["mask", "luffy"] = "mask"
    """Prefix tokens: masked from the loss, or kept with LUFFY's weight π/(π+0.1)."""
    eval_tasks: int = 0
    """Held-out test tasks for a greedy success rate before and after training (0: skip)."""
    eval_batch: int = 64
    """Episodes per evaluation batch."""
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


@dataclass
class _Setup:
    """The loss settings after applying the variant's defaults."""

    std_norm: bool
    norm: Literal["seq", "token", "constant"]
    eps_high: float
    beta: float
    drop_zero_variance: bool


def _setup(args: Args) -> _Setup:
    defaults = VARIANTS[args.variant]

    def pick(name: str) -> Any:
        value = getattr(args, name)
        return defaults[name] if value is None else value

    return _Setup(*(pick(n) for n in ("std_norm", "norm", "eps_high", "beta", "drop_zero_variance")))


def _prefixes(
    args: Args,
    prefix: PolicyModel,
    policy: PolicyModel,
    envs: Sequence[Any],
    slots: Sequence[int],
    seeds: Sequence[int],
    step_seed: int,
) -> dict[int, list[int]]:
    """The perturbed slots' prefixes as policy token ids (`papergym.baselines.prefix.prefix_tokens`)."""
    if not slots:
        return {}
    observations = [envs[i].reset(seed=int(seeds[i]))[0] for i in slots]
    tokens = prefix_tokens(
        prefix,
        policy,
        observations,
        seed=member_seed(step_seed, 7),
        max_new_tokens=args.prefix_tokens,
        temperature=args.temperature,
        lo=args.prefix_min,
        hi=args.prefix_max,
        window=args.prefix_window,
    )
    return dict(zip(slots, tokens, strict=True))


def _action_values(
    episodes: Sequence[Episode], advantages: Any, hook: AdvantageHook | None, group_size: int
) -> list[list[float]]:
    """One value per action of each episode: the member's advantage, or the hook's per-action values."""
    values = []
    for k, episode in enumerate(episodes):
        advantage = float(advantages[k // group_size, k % group_size])
        n = len(episode.trajectory.steps)
        if hook is None:
            values.append([advantage] * n)
            continue
        group = [
            e.trajectory
            for e in episodes[(k // group_size) * group_size : (k // group_size + 1) * group_size]
        ]
        per_action = list(
            hook(episode.trajectory, advantage, action_lengths=episode.action_lengths, group=group)
        )
        if len(per_action) != n:
            raise ValueError(f"the advantage hook returned {len(per_action)} values for {n} actions")
        values.append(per_action)
    return values


def main(
    args: Args,
    *,
    group_reward: GroupReward | None = None,
    advantage_hook: AdvantageHook | None = None,
    forced: ForcedTokens | None = None,
    script: Callable[[int, Any, Any], str | None] | None = None,
    on_step: Callable[[int, dict[str, Any], list[Episode]], None] | None = None,
) -> dict[str, Any]:
    """Train; returns the last step's metrics plus success before/after (when ``eval_tasks > 0``).

    Args:
        args: the settings.
        group_reward, advantage_hook: objects that override ``args.group_reward`` / ``args.advantage_hook``.
        forced: a scripted policy's tokens (`papergym.baselines.rollout.run_episodes`); its tokens are
            trained like sampled ones (tests and forced-completion runs).
        script: a scripted policy in text: ``script(member index, env, observation)`` returns the whole
            action (tokenised and closed with a stop token, trained like sampled tokens) or None to sample.
        on_step: called after each update with the step, its metrics and its episodes (with
            ``episode.token_advantages`` set: per segment, per token).
    """
    torch = require("torch", "llm")
    set_threads(args.threads)
    setup = _setup(args)
    if not 0 <= args.prefix_prob <= 1 or args.group_size < 1 or args.prompts_per_step < 1:
        raise ValueError("need 0 <= prefix_prob <= 1, group_size >= 1 and prompts_per_step >= 1")
    env_kwargs = parse_kwargs(args.env_kw)
    reward_fn = group_reward if group_reward is not None else resolve(args.group_reward, GROUP_REWARDS)
    hook = advantage_hook if advantage_hook is not None else resolve(args.advantage_hook, ADVANTAGE_HOOKS)
    run = Run(
        args.out,
        total_steps=args.steps,
        resume=args.resume,
        progress=args.progress,
        tensorboard=args.tensorboard,
        desc=f"grpo ({args.variant})",
    )
    policy = load_policy(run.checkpoint_model_path or args.model, device=args.device)
    model = policy.model
    reference = None
    if setup.beta > 0:  # the KL anchor is the starting model, also after a resume
        reference = (
            load_policy(args.model, device=args.device).model if run.start_step else copy.deepcopy(model)
        )
        reference.eval().requires_grad_(False)
    if reference is not None:  # θ_0 of the drift metric: the starting model, also after a resume
        origin = parameter_snapshot(reference)
    elif run.start_step:
        origin = parameter_snapshot(load_policy(args.model, device=args.device).model)
    else:
        origin = parameter_snapshot(model)
    prefix = load_policy(args.prefix_model, device=args.device) if args.prefix_model else None
    result: dict[str, Any] = {}
    if args.eval_tasks and run.start_step == 0:
        result["success_before"] = evaluate_policy(
            policy,
            args.env,
            env_kwargs,
            tasks=args.eval_tasks,
            batch=args.eval_batch,
            max_new_tokens=args.max_new_tokens,
        )
    n = args.prompts_per_step * args.group_size
    envs = make_envs(args.env, env_kwargs, n)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    if run.resumed_state is not None:
        optimizer.load_state_dict(run.resumed_state["optimizer"])
    if script is not None and forced is None:
        stop = (
            policy.tokenizer.eos_token_id
            if policy.tokenizer.eos_token_id is not None
            else min(policy.stop_ids)
        )

        def forced(i: int, turn: int, observation: Any) -> Sequence[int] | None:
            text = script(i, envs[i], observation)
            return None if text is None else [*policy.encode(text), stop]

    metrics: dict[str, Any] = {}
    for step in range(run.start_step, args.steps):
        started = time.perf_counter()
        step_seed = member_seed(args.seed, step)
        task_seeds = [member_seed(step_seed, b) % 2**31 for b in range(args.prompts_per_step)]
        seeds = [s for s in task_seeds for _ in range(args.group_size)]
        rng = np.random.default_rng(member_seed(step_seed, 3))
        slots = [i for i in range(n) if prefix is not None and rng.random() < args.prefix_prob]
        prefixes = (
            _prefixes(args, prefix, policy, envs, slots, seeds, step_seed) if prefix is not None else {}
        )

        def forcing(i: int, turn: int, observation: Any, prefixes: dict[int, list[int]] = prefixes) -> Any:
            if forced is not None:
                return forced(i, turn, observation)
            return prefixes.get(i) if turn == 0 else None

        episodes = run_episodes(
            policy,
            envs,
            seeds=seeds,
            sample_seed=step_seed,
            max_new_tokens=args.max_new_tokens,
            temperature=args.temperature,
            top_p=args.top_p,
            max_turns=args.max_turns,
            forced=forcing if forced is not None or prefixes else None,
            mask_forced=forced is None and args.prefix_loss == "mask",
        )
        generated = time.perf_counter()
        groups = [
            [e.trajectory for e in episodes[b * args.group_size : (b + 1) * args.group_size]]
            for b in range(args.prompts_per_step)
        ]
        if reward_fn is None:
            rewards = [[t.total_reward for t in g] for g in groups]
        else:
            rewards = [list(reward_fn(g, batch=groups)) for g in groups]
        reward_t = torch.tensor(rewards, dtype=torch.float32)  # (B, G)
        advantages = group_advantages(reward_t, std_norm=setup.std_norm)  # (B, G)
        keep = (
            nonzero_variance_groups(reward_t)
            if setup.drop_zero_variance
            else torch.ones(len(groups), dtype=bool)
        )
        values = _action_values(episodes, advantages, hook, args.group_size)
        rows: list[tuple[list[int], list[int], list[int], list[float]]] = []
        for k, episode in enumerate(episodes):
            episode.token_advantages = episode.token_values(values[k])
            if not keep[k // args.group_size]:
                continue
            luffy = args.prefix_loss == "luffy" and k in prefixes
            for seg, adv in zip(episode.segments, episode.token_values(values[k]), strict=True):
                if any(seg.loss_mask):
                    off = seg.forced_mask if luffy else [0] * len(seg.token_ids)
                    on = [m * (1 - f) for m, f in zip(seg.loss_mask, off, strict=True)]
                    rows.append((seg.token_ids, on, off, adv))
        loss_value, stats = float("nan"), None
        if rows:
            ids, attn = pad_right([r[0] for r in rows], policy.pad_id, device=policy.device)
            on_mask = pad_right([r[1] for r in rows], 0, device=policy.device)[0].float()
            off_mask = pad_right([r[2] for r in rows], 0, device=policy.device)[0].float()
            width = ids.shape[1]
            adv_t = torch.tensor([r[3] + [0.0] * (width - len(r[3])) for r in rows], device=policy.device)
            ref_logp = None
            if reference is not None:
                with torch.no_grad():
                    ref_logp = token_logprobs(reference, ids, attn)
            old_logp = None
            if args.updates_per_batch > 1:
                with torch.no_grad():
                    old_logp = token_logprobs(model, ids, attn)
            model.train()
            for _ in range(args.updates_per_batch):
                logp = token_logprobs(model, ids, attn)  # (R, L)
                loss, stats = clipped_policy_loss(
                    logp,
                    logp.detach() if old_logp is None else old_logp,
                    adv_t,
                    on_mask,
                    eps_low=args.eps_low,
                    eps_high=setup.eps_high,
                    norm=setup.norm,
                    max_length=args.max_new_tokens,
                    ref_logp=ref_logp,
                    beta=setup.beta,
                    kl=args.kl,
                )
                if off_mask.any():  # LUFFY: off-policy prefix tokens weighted by π/(π+γ), no clipping
                    p = logp.exp()
                    shaped = -(p / (p + LUFFY_GAMMA)) * adv_t * off_mask
                    loss = loss + shaped.sum() / (on_mask + off_mask).sum().clamp(min=1.0)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                optimizer.step()
                loss_value = float(loss.detach())
        elapsed = time.perf_counter() - started
        trajectories = [t for g in groups for t in g]
        metrics = {
            "reward": float(reward_t.mean()),
            "success": float(np.mean([t.success for t in trajectories])),
            "nonzero_variance_share": float(nonzero_variance_groups(reward_t).float().mean()),
            "loss": loss_value,  # NaN (null in metrics.jsonl) on a step without an update
            "updated": bool(rows),  # False when every group was dropped (all members scored alike)
            "clip_fraction": stats.clip_fraction if stats else 0.0,
            "kl": stats.mean_kl if stats else 0.0,
            "action_tokens": float(np.mean([np.mean(e.action_lengths or [0]) for e in episodes])),
            "turns": float(np.mean([len(t.steps) for t in trajectories])),
            "invalid_rate": float(
                np.mean([any(s.info.get(K.INVALID_ACTION) for s in t.steps) for t in trajectories])
            ),
            "prefix_share": len(prefixes) / n,
            "drift_l2": parameter_distance(model, origin),  # ‖θ − θ_0‖, as ES reports it
            "samples_per_s": n / max(elapsed, 1e-9),
            "generate_s": generated - started,
            "step_s": elapsed,
        }
        run.log(step, metrics)
        if on_step is not None:
            on_step(step, metrics, episodes)
        done = step + 1
        if args.checkpoint_every and done % args.checkpoint_every == 0 and done < args.steps:
            run.save(done, model, policy.tokenizer, optimizer)
    for env in envs:
        env.close()
    result.update(metrics)
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
