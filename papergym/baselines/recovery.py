"""CAFE's Stage I data: feedback-augmented recovery SFT on the agent's own failures (papers/envs.md §3.3).

From the base agent's failed rollouts on `papergym/SearchCritic-v0`: replay each one's actions, locate the
earliest erroneous or stalled turn (an invalid action, a search that retrieved no new passage of the gold
evidence chain, or the wrong answer itself), keep the agent's own prefix through that turn (a wrong answer
is replaced, not kept), insert a ``<request_feedback>`` turn, let the teacher critic write the feedback
(the env's critic: by default its oracle critic, which hints without naming the answer; CAFE's teacher
is Kimi-K2.5) and the teacher continue (the env's oracle). Only repaired episodes that reach success are
kept (CAFE: "keep only repaired trajectories that reach the correct answer"). A rollout that already
requested feedback before its first error is skipped: the budget (1) has no room for another request.

Each repair gives two training contexts for `papergym.baselines.sft.main` (``extra=``), one per role of
the shared model:

- the agent's: the repaired episode in token space, with loss on the request turn and the teacher's
  continuation; the agent's own erroneous prefix is context, not a target;
- the critic's: CAFE's critic prompt over the history at the request, with loss on the teacher's feedback.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from papergym.baselines.policy import PolicyModel
from papergym.baselines.rollout import Segment, demonstrations
from papergym.core import info_keys as K
from papergym.core.trajectory import Trajectory
from papergym.envs.search.critic import cafe_critic_messages, feedback_completion

REQUEST_ACTION = "<think>I may be off track.</think><request_feedback></request_feedback>"
"""The inserted request turn (CAFE's format, envs.md §3.2)."""
MAX_TURNS = 40
"""The bound on a repaired episode's turns when the env has no time limit (SearchCritic-v0's registered
``max_episode_steps``)."""


@dataclass(frozen=True)
class Recovery:
    """One repaired failure.

    Attributes:
        agent: the agent's context (loss on the request turn and the continuation only).
        critic: the critic role's context (loss on the feedback only).
        error_step: the index of the earliest erroneous turn in the original rollout.
        kept: how many of the original actions were kept as the prefix.
        feedback: the teacher's feedback text.
    """

    agent: Segment
    critic: Segment
    error_step: int
    kept: int
    feedback: str


def _reset(env: gym.Env, traj: Trajectory) -> None:
    env.reset(seed=traj.seed, options={"task_id": traj.task_id})


def first_error(env: gym.Env, traj: Trajectory) -> tuple[int, int] | None:
    """Replay ``traj``'s actions on ``env``: ``(error step, actions kept)`` of its earliest erroneous or
    stalled turn, or None when it requested feedback first or shows no error (e.g. truncated while making
    progress)."""
    _reset(env, traj)
    inner: Any = env.unwrapped
    for i, step in enumerate(traj.steps):
        found = inner.chain_found()
        _, _, terminated, truncated, info = env.step(step.action)
        parsed = info.get(K.PARSED_ACTION) or {}
        if info.get(K.INVALID_ACTION):
            return i, i + 1
        if "request_feedback" in parsed:
            return None
        if terminated:  # an answer on a failed rollout is the error; the request replaces it
            return (i, i) if not info.get(K.SUCCESS) else None
        if "search" in parsed and inner.chain_found() == found:
            return i, i + 1
        if truncated:
            return None
    return None


def repair(policy: PolicyModel, env: gym.Env, traj: Trajectory) -> Recovery | None:
    """The repaired episode of one failed rollout (see the module docstring), or None when there is no
    error to repair or the teacher's continuation does not succeed."""
    if traj.success:
        return None
    located = first_error(env, traj)
    if located is None:
        return None
    error_step, kept = located
    prefix = [s.action for s in traj.steps[:kept]]
    script = [*prefix, REQUEST_ACTION]

    def act(env: gym.Env, observation: Any) -> str:
        return script.pop(0) if script else env.unwrapped.oracle_action()  # type: ignore[attr-defined]

    spec = getattr(env, "spec", None)
    limit = getattr(spec, "max_episode_steps", None) or MAX_TURNS
    (episode,) = demonstrations(
        policy, [env], seeds=[traj.seed], options={"task_id": traj.task_id}, act=act, max_turns=limit
    )
    steps = episode.trajectory.steps
    if not episode.trajectory.success or len(steps) <= kept:
        return None
    segments = steps[kept].info.get(K.SEGMENTS) or {}
    if segments.get("request_step") != kept or segments.get("feedback") is None:
        return None  # the request was not answered (e.g. a critic fault)
    agent = episode.segments[0]
    for span in episode.spans[:kept]:  # the agent's own erroneous prefix is context
        agent.loss_mask[span.start : span.end] = [0] * span.length
    seen = segments["critic_input"]
    critic = critic_segment(policy, seen["question"], seen["trajectory"], segments["feedback"])
    return Recovery(agent, critic, error_step, kept, segments["feedback"])


def critic_segment(policy: PolicyModel, question: str, trajectory: Sequence[Any], feedback: str) -> Segment:
    """The critic role's SFT context: CAFE's critic prompt (loss 0) then the feedback (loss 1)."""
    eos = policy.tokenizer.eos_token_id
    stop = eos if eos is not None else min(policy.stop_ids)
    segment = Segment()
    segment.extend(policy.encode_chat([dict(m) for m in cafe_critic_messages(question, list(trajectory))]))
    reply = [*policy.encode(feedback_completion(feedback)), stop]
    segment.extend(reply, action=True, forced=len(reply), mask_forced=False, logprobs=[0.0] * len(reply))
    return segment


def build_recovery(
    policy: PolicyModel, make_env: Callable[[], gym.Env], failed: Sequence[Trajectory]
) -> list[Recovery]:
    """`repair` every rollout of ``failed`` on one env from ``make_env`` (its critic is the teacher's);
    the repairs that succeeded."""
    env = make_env()
    try:
        repairs = [repair(policy, env, t) for t in failed]
    finally:
        env.close()
    return [r for r in repairs if r is not None]


def training_contexts(repairs: Sequence[Recovery]) -> list[Segment]:
    """Both roles' contexts of ``repairs`` (what `papergym.baselines.sft.main` takes as ``extra``)."""
    return [seg for r in repairs for seg in (r.agent, r.critic)]
