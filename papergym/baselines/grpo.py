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

Prefix perturbation (§2, `papergym.baselines.prefix`): with probability ``prefix_prob`` (0.2) a member's
first action starts with a reasoning prefix written by ``prefix_model``, cut where that model's token
entropy drops most, and is continued by the policy; the prefix tokens are masked from the loss
(``prefix_loss=mask``) or kept with LUFFY's weight (``prefix_loss=luffy``). Advantages are computed over the
whole group, perturbed members included (LUFFY).

The stages of a step are the functions `sample_groups`, `score_groups`, `advantages` and `update`.

Run: ``papergym train grpo --env papergym/Reasoning-v0 --env-kw domain=instruction --model runs/sft/final``.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from papergym.baselines import prefix as pfx
from papergym.baselines.losses import (
    LossStats,
    clipped_policy_loss,
    group_advantages,
    nonzero_variance_groups,
)
from papergym.baselines.policy import (
    PolicyModel,
    load_policy,
    micro_batches,
    pad_right,
    role_backends,
    token_logprobs,
)
from papergym.baselines.rollout import Episode, ForcedTokens, run_episodes, scripted_tokens
from papergym.baselines.run import (
    PolicyRunArgs,
    evaluate_args,
    make_envs,
    parameter_distance,
    parameter_snapshot,
    parse_kwargs,
    start_run,
)
from papergym.core import info_keys as K
from papergym.core.errors import require
from papergym.core.trajectory import Trajectory, member_seed
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
LUFFY_GAMMA = pfx.LUFFY_GAMMA
"""LUFFY's shaping constant γ (defined in `papergym.baselines.prefix`)."""


@dataclass
class Args(PolicyRunArgs):
    """GRPO and its variants."""

    out: str = "runs/grpo"
    """The run directory (metrics.jsonl, checkpoints/, final/, curves.png)."""
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
    micro_batch: int = 1
    """Rows per forward/backward pass of an update; gradients accumulate over a batch's micro-batches,
    so the update is the whole batch's (0: one pass over every row). Rows of similar length go together.
    1 pads nothing, the fastest on a CPU; raise it on a GPU as memory allows."""
    updates_per_batch: int = 1
    """Policy updates per sampling stage (μ; 1 makes the ratio 1 on the only update; 0 samples and scores
    only, the policy frozen: e.g. the agent of CAFE's critic-only ablation)."""
    env_wrapper: str | None = None
    """A gymnasium wrapper around every training env: a short name of `papergym.wrappers.WRAPPERS`
    (process_reward, four_cell) or module:Class, built as ``Wrapper(env=env)``; None: the env as
    registered. Held-out evaluation (``eval_tasks``) plays the unwrapped env."""
    group_reward: str | None = None
    """A GroupReward: short name (majority_vote, feedback_request) or module:Class; None: the env's return."""
    advantage_hook: str | None = None
    """An AdvantageHook: short name (feedback_shaping, influence) or module:Class; None: one advantage per
    episode."""
    advantage_hook_kw: list[str] = field(default_factory=list)
    """The hook's constructor kwargs as key=value (a value is parsed as JSON when it can be), e.g.
    ``noise=0.2`` for ``influence``."""
    policy_roles: list[str] = field(default_factory=list)
    """Env backend kwargs played by a model: ROLE is the training policy itself, weights shared (CAFE's
    critic: ``critic``), ROLE=DIR a frozen checkpoint."""
    role_tokens: int = 64
    """Token budget of one reply of a model-played role (inferred)."""
    role_temperature: float = 1.0
    """Sampling temperature of a model-played role (inferred)."""
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


def _anchors(args: Args, setup: _Setup, model: Any, resumed: bool) -> tuple[Any, list[Any]]:
    """The frozen KL reference (None without KL) and the drift origin θ_0: both the starting model, also
    after a resume."""
    reference = None
    if setup.beta > 0:
        reference = load_policy(args.model, device=args.device).model if resumed else copy.deepcopy(model)
        reference.eval().requires_grad_(False)
    if reference is not None:
        return reference, parameter_snapshot(reference)
    if resumed:
        return None, parameter_snapshot(load_policy(args.model, device=args.device).model)
    return None, parameter_snapshot(model)


def training_envs(args: Args, n: int, *, backends: Mapping[str, Any] | None = None) -> list[Any]:
    """``n`` training envs of ``args.env`` (``backends``: env backend kwargs played by a model, from
    `role_backends`), each wrapped in ``args.env_wrapper`` when one is named."""
    from papergym.wrappers import WRAPPERS

    envs = make_envs(args.env, parse_kwargs(args.env_kw) | dict(backends or {}), n)
    if args.env_wrapper is None:
        return envs
    return [resolve(args.env_wrapper, WRAPPERS, env=env) for env in envs]


def sample_groups(
    args: Args,
    policy: PolicyModel,
    envs: Sequence[Any],
    step_seed: int,
    perturbation: pfx.PrefixPerturbation | None,
    forced: ForcedTokens | None,
) -> tuple[list[Episode], dict[int, list[int]]]:
    """Play ``prompts_per_step`` tasks ``group_size`` times each (group-major), some members starting from
    a prefix; returns the episodes and the perturbed slots' prefixes."""
    task_seeds = [member_seed(step_seed, b) % 2**31 for b in range(args.prompts_per_step)]
    seeds = [s for s in task_seeds for _ in range(args.group_size)]
    prefixes = perturbation.prefixes(policy, envs, seeds, step_seed) if perturbation is not None else {}
    episodes = run_episodes(
        policy,
        envs,
        seeds=seeds,
        sample_seed=step_seed,
        max_new_tokens=args.max_new_tokens,
        temperature=args.temperature,
        top_p=args.top_p,
        max_turns=args.max_turns,
        forced=forced if forced is not None else pfx.prefix_forcing(prefixes),
        mask_forced=forced is None and args.prefix_loss == "mask",
    )
    return episodes, prefixes


def score_groups(episodes: Sequence[Episode], group_size: int, reward_fn: GroupReward | None) -> Any:
    """The ``(B, G)`` rewards: each member's return, or the `GroupReward`'s scores of its group."""
    groups = [
        [e.trajectory for e in episodes[b : b + group_size]] for b in range(0, len(episodes), group_size)
    ]
    return group_rewards(groups, reward_fn)


def group_rewards(groups: Sequence[Sequence[Trajectory]], reward_fn: GroupReward | None) -> Any:
    """The ``(B, G)`` rewards of trajectory groups: each member's return, or the `GroupReward`'s scores
    of its group (given the whole batch)."""
    torch = require("torch", "llm")
    if reward_fn is None:
        rewards = [[t.total_reward for t in g] for g in groups]
    else:
        rewards = [list(reward_fn(g, batch=groups)) for g in groups]
    return torch.tensor(rewards, dtype=torch.float32)


def advantages(
    episodes: Sequence[Episode], rewards: Any, setup: _Setup, hook: AdvantageHook | None
) -> tuple[list[list[float]], Any]:
    """One advantage per action of each episode (the member's group advantage, or the hook's per-action
    values; also stored per token in ``episode.token_advantages``) and the ``(B,)`` mask of groups kept."""
    torch = require("torch", "llm")
    group_size = rewards.shape[1]
    adv = group_advantages(rewards, std_norm=setup.std_norm)  # (B, G)
    keep = nonzero_variance_groups(rewards) if setup.drop_zero_variance else torch.ones(len(adv), dtype=bool)
    values = []
    trajs = [e.trajectory for e in episodes]
    batch = [trajs[i : i + group_size] for i in range(0, len(trajs), group_size)]
    for k, episode in enumerate(episodes):
        advantage = float(adv[k // group_size, k % group_size])
        n = len(episode.trajectory.steps)
        if hook is None:
            values.append([advantage] * n)
        else:
            group = batch[k // group_size]
            per_action = list(
                hook(
                    episode.trajectory,
                    advantage,
                    action_lengths=episode.action_lengths,
                    group=group,
                    batch=batch,
                )
            )
            if len(per_action) != n:
                raise ValueError(f"the advantage hook returned {len(per_action)} values for {n} actions")
            values.append(per_action)
        episode.token_advantages = episode.token_values(values[-1])
    return values, keep


def training_rows(
    episodes: Sequence[Episode], keep: Any, group_size: int, luffy_slots: Sequence[int]
) -> list[tuple[list[int], list[int], list[int], list[float]]]:
    """``(ids, on-policy mask, off-policy mask, per-token advantages)`` of every trained segment of the
    kept groups (``luffy_slots``: members whose prefix tokens take LUFFY's term)."""
    rows = []
    for k, episode in enumerate(episodes):
        if not keep[k // group_size] or episode.token_advantages is None:
            continue
        for seg, adv in zip(episode.segments, episode.token_advantages, strict=True):
            if any(seg.loss_mask):
                on, off = pfx.loss_masks(seg, k in luffy_slots)
                rows.append((seg.token_ids, on, off, adv))
    return rows


def update(
    args: Args,
    setup: _Setup,
    policy: PolicyModel,
    optimizer: Any,
    reference: Any,
    rows: Sequence[tuple[list[int], list[int], list[int], list[float]]],
) -> tuple[float, Any]:
    """``updates_per_batch`` clipped policy-gradient steps on ``rows`` (token ids, on-policy mask,
    off-policy prefix mask, per-token advantages), each accumulating gradients over ``micro_batch``-row
    passes; the last loss and its statistics (NaN and None without rows)."""
    torch = require("torch", "llm")
    if not rows:
        return float("nan"), None
    model = policy.model
    parts = [
        _MicroBatch.of([rows[i] for i in chunk], policy)
        for chunk in micro_batches([len(r[0]) for r in rows], args.micro_batch)
    ]
    loss_tokens = float(sum(p.on_mask.sum() for p in parts))
    trained_tokens = float(sum((p.on_mask + p.off_mask).sum() for p in parts))
    with torch.no_grad():
        for part in parts:
            keep = part.keep
            part.ref_logp = (
                token_logprobs(reference, part.ids, part.attn, keep=keep) if reference is not None else None
            )
            part.old_logp = (
                token_logprobs(model, part.ids, part.attn, keep=keep) if args.updates_per_batch > 1 else None
            )
    model.train()
    loss_value, stats = float("nan"), None
    for _ in range(args.updates_per_batch):
        optimizer.zero_grad(set_to_none=True)
        loss_value, part_stats = 0.0, []
        for part in parts:
            logp = token_logprobs(model, part.ids, part.attn, keep=part.keep)  # (r, L)
            loss, part_stat = clipped_policy_loss(
                logp,
                logp.detach() if part.old_logp is None else part.old_logp,
                part.advantages,
                part.on_mask,
                eps_low=args.eps_low,
                eps_high=setup.eps_high,
                norm=setup.norm,
                max_length=args.max_new_tokens,
                ref_logp=part.ref_logp,
                beta=setup.beta,
                kl=args.kl,
                batch_rows=len(rows),
                batch_tokens=loss_tokens,
            )
            if part.off_mask.any():  # LUFFY: off-policy prefix tokens weighted by π/(π+γ), no clipping
                loss = loss + pfx.luffy_loss(
                    logp, part.advantages, part.on_mask, part.off_mask, batch_tokens=trained_tokens
                )
            loss.backward()
            loss_value += float(loss.detach())
            part_stats.append((part_stat, float(part.on_mask.sum())))
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
        optimizer.step()
        stats = LossStats.pooled(part_stats)
    return loss_value, stats


@dataclass
class _MicroBatch:
    """One micro-batch of an update's rows, right-padded, with its masks and advantages; the reference
    and sampling log-probs are filled in before the first pass."""

    ids: Any
    attn: Any
    on_mask: Any
    off_mask: Any
    advantages: Any
    ref_logp: Any = None
    old_logp: Any = None

    @classmethod
    def of(
        cls, rows: Sequence[tuple[list[int], list[int], list[int], list[float]]], policy: PolicyModel
    ) -> _MicroBatch:
        torch = require("torch", "llm")
        ids, attn = pad_right([r[0] for r in rows], policy.pad_id, device=policy.device)
        width = ids.shape[1]
        return cls(
            ids=ids,
            attn=attn,
            on_mask=pad_right([r[1] for r in rows], 0, device=policy.device)[0].float(),
            off_mask=pad_right([r[2] for r in rows], 0, device=policy.device)[0].float(),
            advantages=torch.tensor([r[3] + [0.0] * (width - len(r[3])) for r in rows], device=policy.device),
        )

    @property
    def keep(self) -> Any:
        """The positions whose log-probs are read (the head runs there only)."""
        return (self.on_mask + self.off_mask) > 0


def step_metrics(
    episodes: Sequence[Episode], rewards: Any, loss: float, stats: Any, updated: bool
) -> dict[str, Any]:
    """What a step logs about its episodes and update (timings and drift are added by `main`)."""
    trajectories = [e.trajectory for e in episodes]
    return {
        "reward": float(rewards.mean()),
        "success": float(np.mean([t.success for t in trajectories])),
        "nonzero_variance_share": float(nonzero_variance_groups(rewards).float().mean()),
        "loss": loss,  # NaN (null in metrics.jsonl) on a step without an update
        "updated": updated,  # False when every group was dropped (all members scored alike)
        "clip_fraction": stats.clip_fraction if stats else 0.0,
        "kl": stats.mean_kl if stats else 0.0,
        "action_tokens": float(np.mean([np.mean(e.action_lengths or [0]) for e in episodes])),
        "turns": float(np.mean([len(t.steps) for t in trajectories])),
        "invalid_rate": float(
            np.mean([any(s.info.get(K.INVALID_ACTION) for s in t.steps) for t in trajectories])
        ),
    }


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
    if not 0 <= args.prefix_prob <= 1 or args.group_size < 1 or args.prompts_per_step < 1:
        raise ValueError("need 0 <= prefix_prob <= 1, group_size >= 1 and prompts_per_step >= 1")
    if args.updates_per_batch < 0:
        raise ValueError(f"updates_per_batch must be >= 0, got {args.updates_per_batch}")
    setup = _setup(args)
    reward_fn = group_reward if group_reward is not None else resolve(args.group_reward, GROUP_REWARDS)
    if args.advantage_hook_kw and (advantage_hook is not None or args.advantage_hook is None):
        raise ValueError("advantage_hook_kw configures --advantage-hook: give the hook by name")
    hook = (
        advantage_hook
        if advantage_hook is not None
        else resolve(args.advantage_hook, ADVANTAGE_HOOKS, **parse_kwargs(args.advantage_hook_kw))
    )
    run = start_run(args, total_steps=args.steps, desc=f"grpo ({args.variant})")
    policy = load_policy(run.checkpoint_model_path or args.model, device=args.device)
    reference, origin = _anchors(args, setup, policy.model, resumed=run.start_step > 0)
    perturbation = pfx.load_perturbation(
        args.prefix_model, device=args.device, prob=args.prefix_prob, lo=args.prefix_min,
        hi=args.prefix_max, window=args.prefix_window, max_new_tokens=args.prefix_tokens,
        temperature=args.temperature, loss=args.prefix_loss,
    )  # fmt: skip
    result: dict[str, Any] = {}
    if args.eval_tasks and run.start_step == 0:
        result["success_before"] = evaluate_args(
            policy, args, max_new_tokens=args.max_new_tokens, when="before"
        )
    n = args.prompts_per_step * args.group_size
    roles = role_backends(
        args.policy_roles,
        policy,
        device=args.device,
        max_tokens=args.role_tokens,
        temperature=args.role_temperature,
    )
    envs = training_envs(args, n, backends=roles)
    optimizer = torch.optim.AdamW(policy.model.parameters(), lr=args.lr, weight_decay=0.0)
    run.restore(optimizer)
    if script is not None and forced is None:
        forced = scripted_tokens(policy, envs, script)
    metrics: dict[str, Any] = {}
    for step in range(run.start_step, args.steps):
        started = time.perf_counter()
        step_seed = member_seed(args.seed, step)
        episodes, prefixes = sample_groups(args, policy, envs, step_seed, perturbation, forced)
        generated = time.perf_counter()
        rewards = score_groups(episodes, args.group_size, reward_fn)  # (B, G)
        _, keep = advantages(episodes, rewards, setup, hook)
        luffy_slots = list(prefixes) if args.prefix_loss == "luffy" else []
        rows = training_rows(episodes, keep, args.group_size, luffy_slots)
        loss, stats = update(args, setup, policy, optimizer, reference, rows)
        elapsed = time.perf_counter() - started
        metrics = {
            **step_metrics(episodes, rewards, loss, stats, updated=bool(rows) and args.updates_per_batch > 0),
            "prefix_share": len(prefixes) / n,
            "drift_l2": parameter_distance(policy.model, origin),  # ‖θ − θ_0‖, as ES reports it
            "samples_per_s": n / max(elapsed, 1e-9),
            "generate_s": generated - started,
            "step_s": elapsed,
        }
        run.log(step, metrics)
        if on_step is not None:
            on_step(step, metrics, episodes)
        run.checkpoint(step + 1, policy.model, policy.tokenizer, optimizer)
    for env in envs:
        env.close()
    result.update(metrics)
    if args.eval_tasks:
        result["success_after"] = evaluate_args(policy, args, max_new_tokens=args.max_new_tokens)
    run.finish(policy.model, policy.tokenizer)
    result["out"] = str(run.out)
    return result
