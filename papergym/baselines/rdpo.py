"""RDPO: CAFE's offline update of the critic role, DPO on the feedback text (papers/envs.md §3.3).

From the latest rollouts, per prompt, a rollout that requested feedback and succeeded is paired with one
that requested feedback and failed, when their pre-request prefixes have token-set Jaccard >= 0.7
(`papergym.credit.feedback.rdpo_pairs`). The successful rollout's feedback f⁺ is chosen, the failed one's
f⁻ rejected, both scored under the successful rollout's critic input (CAFE's critic prompt,
`papergym.envs.search.critic.cafe_critic_messages`), and the policy (which plays the critic: one model,
two roles) takes `papergym.baselines.losses.dpo_loss` steps against its frozen starting point. CAFE: lr
2e-7 and 2 epochs for a 7B model; its LLM-judge filter of the pairs is not run (no judge in the loop).

The rollouts are collected here (``prompts`` tasks × ``group_size`` members, the policy as its own critic,
sampled with ``critic_temperature``) unless `main` is given the pairs (CAFE's alternation passes those of
the latest online rollouts). The stages are `collect_groups`, `encode_pairs` and `update`.

Run: ``papergym train rdpo --model runs/sft/final --env-kw n_passages=2000``.
"""

from __future__ import annotations

import copy
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from papergym.backends.protocols import Message
from papergym.baselines.losses import DPO_BETA, dpo_loss
from papergym.baselines.policy import (
    PolicyModel,
    completion_logprobs,
    load_policy,
    micro_batches,
    role_backends,
)
from papergym.baselines.rollout import run_episodes
from papergym.baselines.run import PolicyRunArgs, make_envs, parse_kwargs, start_run
from papergym.core.errors import require
from papergym.core.trajectory import Trajectory, member_seed
from papergym.credit.feedback import JACCARD_THRESHOLD, RDPOPair, rdpo_pairs
from papergym.envs.search.critic import cafe_critic_messages, feedback_completion

logger = logging.getLogger(__name__)

RDPO_LR = 2e-7
"""CAFE's RDPO learning rate (envs.md §3.3, for a 7B model)."""
RDPO_EPOCHS = 2
"""CAFE's RDPO epochs (envs.md §3.3)."""


@dataclass
class Args(PolicyRunArgs):
    """RDPO on the critic role (the policy plays the env's critic)."""

    env: str = "papergym/SearchCritic-v0"
    """The env id (its ``critic`` kwarg is played by the policy)."""
    out: str = "runs/rdpo"
    """The run directory (metrics.jsonl, checkpoints/, final/, curves.png)."""
    prompts: int = 16
    """Tasks whose groups are collected for pairs."""
    group_size: int = 8
    """Rollouts per task (CAFE: n = 8)."""
    max_new_tokens: int = 96
    """Token budget of one agent action."""
    max_turns: int | None = None
    """An extra bound on actions per episode (the env's time limit applies anyway)."""
    temperature: float = 1.0
    """The agent's sampling temperature while collecting."""
    critic_tokens: int = 64
    """Token budget of one critic reply (inferred)."""
    critic_temperature: float = 1.0
    """The critic's sampling temperature while collecting (inferred: pairs need differing feedback)."""
    epochs: int = RDPO_EPOCHS
    """Passes over the pairs (CAFE: 2)."""
    batch_size: int = 4
    """Pairs per optimizer step."""
    lr: float = RDPO_LR
    """AdamW learning rate (CAFE: 2e-7 for 7B; a tiny model needs more, e.g. 1e-4)."""
    beta: float = DPO_BETA
    """DPO's β (inferred: CAFE gives none)."""
    jaccard: float = JACCARD_THRESHOLD
    """Minimum token-set Jaccard of the paired pre-request prefixes (CAFE: 0.7)."""
    max_grad_norm: float = 1.0
    """Gradient clipping norm."""
    micro_batch: int = 1
    """Pairs per forward/backward pass of a step, gradients accumulated (0: every pair in one padded
    pass); the step is the whole batch's either way (as `papergym.baselines.grpo.Args.micro_batch`)."""


def collect_groups(args: Args, policy: PolicyModel, seed: int) -> list[list[Trajectory]]:
    """``prompts`` training tasks played ``group_size`` times each, the policy acting and critiquing."""
    kwargs = parse_kwargs(args.env_kw) | role_backends(
        ["critic"], policy, max_tokens=args.critic_tokens, temperature=args.critic_temperature
    )
    envs = make_envs(args.env, kwargs, args.prompts * args.group_size)
    task_seeds = [member_seed(seed, b) % 2**31 for b in range(args.prompts)]
    try:
        episodes = run_episodes(
            policy,
            envs,
            seeds=[s for s in task_seeds for _ in range(args.group_size)],
            sample_seed=member_seed(seed, 1),
            max_new_tokens=args.max_new_tokens,
            temperature=args.temperature,
            max_turns=args.max_turns,
        )
    finally:
        for env in envs:
            env.close()
    trajs = [e.trajectory for e in episodes]
    return [trajs[i : i + args.group_size] for i in range(0, len(trajs), args.group_size)]


def critic_context(pair: RDPOPair) -> list[dict[str, Any]]:
    """The critic's input for a pair: CAFE's critic prompt over the successful history (the pair's bare
    ``prompt`` as the user message when no critic input was recorded)."""
    if pair.question:
        history: list[Message] = [{"role": m["role"], "content": m["content"]} for m in pair.trajectory]
        return [dict(m) for m in cafe_critic_messages(pair.question, history)]
    return [{"role": "user", "content": pair.prompt}]


@dataclass
class EncodedPairs:
    """Token ids of the pairs and the frozen reference's sequence log-probs of both completions."""

    prompts: list[list[int]]
    chosen: list[list[int]]
    rejected: list[list[int]]
    ref_chosen: Any  # (P,)
    ref_rejected: Any  # (P,)


def encode_pairs(
    policy: PolicyModel,
    reference: PolicyModel,
    pairs: Sequence[RDPOPair],
    context: Callable[[RDPOPair], list[dict[str, Any]]] = critic_context,
) -> EncodedPairs:
    """Tokenise ``pairs`` (the completion is the feedback as the critic writes it, closed with a stop
    token) and score them once under the ``reference``."""
    torch = require("torch", "llm")
    eos = policy.tokenizer.eos_token_id
    stop = eos if eos is not None else min(policy.stop_ids)
    prompts = [policy.encode_chat(context(p)) for p in pairs]
    chosen = [[*policy.encode(feedback_completion(p.chosen)), stop] for p in pairs]
    rejected = [[*policy.encode(feedback_completion(p.rejected)), stop] for p in pairs]
    with torch.no_grad():
        ref_c = sequence_logprobs(reference, prompts, chosen)
        ref_r = sequence_logprobs(reference, prompts, rejected)
    return EncodedPairs(prompts, chosen, rejected, ref_c, ref_r)


def sequence_logprobs(
    policy: PolicyModel, prompts: Sequence[list[int]], completions: Sequence[list[int]]
) -> Any:
    """``(P,)`` summed log-probs of each completion given its prompt (differentiable)."""
    logp, mask = completion_logprobs(policy, prompts, completions)  # (P, Tc)
    return (logp * mask).sum(dim=1)


def pair_logprobs(policy: PolicyModel, data: EncodedPairs, rows: Sequence[int]) -> tuple[Any, Any]:
    """The policy's ``(R,)`` sequence log-probs of the chosen and the rejected feedback of ``rows``."""
    prompts = [data.prompts[i] for i in rows]
    chosen = sequence_logprobs(policy, prompts, [data.chosen[i] for i in rows])
    return chosen, sequence_logprobs(policy, prompts, [data.rejected[i] for i in rows])


def margin(policy: PolicyModel, data: EncodedPairs, rows: Sequence[int]) -> Any:
    """``(R,)`` DPO's implicit reward margin over β of ``rows``:
    (log π(f⁺) − log π_ref(f⁺)) − (log π(f⁻) − log π_ref(f⁻))."""
    chosen, rejected = pair_logprobs(policy, data, rows)
    index = list(rows)
    return (chosen - data.ref_chosen[index]) - (rejected - data.ref_rejected[index])


def update(
    args: Args, policy: PolicyModel, optimizer: Any, data: EncodedPairs, rows: Sequence[int]
) -> dict[str, float]:
    """One DPO step on the pairs ``rows`` (gradients accumulated over ``args.micro_batch``-pair passes of
    similar length; DPO's loss is a mean over pairs, so each pass's mean is weighted by its share); the
    step's loss, reward margin and preference accuracy."""
    torch = require("torch", "llm")
    policy.model.train()
    optimizer.zero_grad(set_to_none=True)
    rows = list(rows)
    lengths = [len(data.prompts[i]) + max(len(data.chosen[i]), len(data.rejected[i])) for i in rows]
    loss_sum, gaps = 0.0, []
    for chunk in micro_batches(lengths, args.micro_batch):
        index = [rows[j] for j in chunk]
        chosen, rejected = pair_logprobs(policy, data, index)
        ref_c, ref_r = data.ref_chosen[index], data.ref_rejected[index]
        loss = dpo_loss(chosen, rejected, ref_c, ref_r, beta=args.beta) * (len(index) / len(rows))
        loss.backward()
        loss_sum += float(loss.detach())
        gaps.append(((chosen - ref_c) - (rejected - ref_r)).detach())  # the margin before this step
    torch.nn.utils.clip_grad_norm_(policy.model.parameters(), args.max_grad_norm)
    optimizer.step()
    gap = torch.cat(gaps)
    return {
        "loss": loss_sum,
        "margin": float(gap.mean()),
        "accuracy": float((gap > 0).float().mean()),
    }


def main(args: Args, *, pairs: Sequence[RDPOPair] | None = None) -> dict[str, Any]:
    """Train the critic role with DPO; returns the pair count, the first and last step's metrics.

    Args:
        args: the settings.
        pairs: RDPO pairs to train on (CAFE's alternation passes the latest online rollouts'); None
            collects ``prompts`` × ``group_size`` rollouts with the starting model and builds them.
    """
    torch = require("torch", "llm")
    if args.epochs < 0 or args.batch_size < 1 or args.prompts < 1 or args.group_size < 1:
        raise ValueError("need epochs >= 0, batch_size >= 1, prompts >= 1 and group_size >= 1")
    start = load_policy(args.model, device=args.device)
    if pairs is None:
        groups = collect_groups(args, start, args.seed)
        pairs = [p for g in groups for p in rdpo_pairs(g, threshold=args.jaccard)]
    per_epoch = -(-len(pairs) // args.batch_size)
    run = start_run(args, total_steps=args.epochs * per_epoch, desc="rdpo")
    resumed = run.checkpoint_model_path
    policy = start if resumed is None else load_policy(resumed, device=args.device)
    reference = copy.deepcopy(start) if resumed is None else start
    reference.model.eval().requires_grad_(False)
    result: dict[str, Any] = {"pairs": len(pairs)}
    optimizer = torch.optim.AdamW(policy.model.parameters(), lr=args.lr, weight_decay=0.0)
    run.restore(optimizer)
    if not pairs:
        logger.warning("rdpo: no pairs (no prompt had a successful and a failed feedback rollout); no update")
    data = encode_pairs(policy, reference, pairs) if pairs else None
    began = time.perf_counter()
    for step in range(run.start_step, args.epochs * per_epoch):
        epoch, k = divmod(step, per_epoch)
        order = list(range(len(pairs)))
        random.Random(member_seed(args.seed, epoch)).shuffle(order)  # a private generator per epoch
        rows = order[k * args.batch_size : (k + 1) * args.batch_size]
        metrics = update(args, policy, optimizer, data, rows)  # type: ignore[arg-type]
        result.setdefault("first", metrics)
        result["last"] = metrics
        run.log(step, {**metrics, "epoch": epoch, "seconds": time.perf_counter() - began})
        run.checkpoint(step + 1, policy.model, policy.tokenizer, optimizer)
    run.finish(policy.model, policy.tokenizer)
    result["out"] = str(run.out)
    return result
