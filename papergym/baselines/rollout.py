"""Multi-turn episodes of a `PolicyModel` on any papergym env, in token space.

Several episodes play in lockstep: each turn, every unfinished episode's context is extended by one
batched `papergym.baselines.policy.sample` call, the decoded text is the env action, and the env's
reply is appended as chat-template tokens. The model's own sampled ids are kept as they were sampled
(never re-tokenised), so the log-probs a trainer computes later are those of what was sampled.

Per episode (`Episode`): the token ids of each context ``segment`` (one, unless the env resets the
agent's context, ``info["context_reset"]``, which starts a new one), a loss mask (1 on the policy's
tokens, 0 on prompt and environment tokens), a mask of forced tokens (a prefix from another model, or a
scripted completion), the sampling log-probs, and one `ActionSpan` per env step, so an `AdvantageHook`'s
per-action values can be spread over their tokens (`Episode.token_values`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from papergym.baselines.policy import PolicyModel, sample
from papergym.core import info_keys as K
from papergym.core.trajectory import Step, Trajectory, member_seed

ForcedTokens = Callable[[int, int, Any], Sequence[int] | None]
"""``forced(episode index, turn, observation)``: token ids to start (or make up) that action, or None."""

_SENTINEL = "\x00papergym-content\x00"


@dataclass
class Segment:
    """One context the model saw: token ids and per-token masks of the same length.

    Attributes:
        token_ids: the whole context (prompt, actions, env replies).
        loss_mask: 1 on the policy's tokens (sampled, and forced ones unless they were masked), else 0.
        forced_mask: 1 on forced tokens (prefix or scripted), else 0.
        logprobs: the sampling log-prob of each action token, 0.0 elsewhere.
    """

    token_ids: list[int] = field(default_factory=list)
    loss_mask: list[int] = field(default_factory=list)
    forced_mask: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)

    def extend(
        self,
        ids: Sequence[int],
        *,
        action: bool = False,
        forced: int = 0,
        mask_forced: bool = True,
        logprobs: Sequence[float] = (),
    ) -> None:
        """Append tokens; for an action, its first ``forced`` tokens were forced."""
        n = len(ids)
        self.token_ids.extend(int(t) for t in ids)
        if not action:
            self.loss_mask.extend([0] * n)
            self.forced_mask.extend([0] * n)
            self.logprobs.extend([0.0] * n)
            return
        self.forced_mask.extend([1] * forced + [0] * (n - forced))
        self.loss_mask.extend([0 if mask_forced else 1] * forced + [1] * (n - forced))
        self.logprobs.extend(float(x) for x in logprobs)


@dataclass(frozen=True)
class ActionSpan:
    """Where one action's tokens lie: ``segments[segment].token_ids[start:end]`` (stop token included)."""

    segment: int
    start: int
    end: int

    @property
    def length(self) -> int:
        return self.end - self.start


@dataclass
class Episode:
    """One episode in token space, and its `Trajectory` (for GroupRewards and AdvantageHooks).

    Attributes:
        trajectory: the episode as text steps (observation, action, reward, info).
        segments: the contexts (one per context reset; usually one).
        spans: one `ActionSpan` per step of ``trajectory``, in order.
        prompt_length: tokens of the first observation (the first segment's prompt).
        token_advantages: set by a trainer: per segment, per token, the advantage it trained with.
    """

    trajectory: Trajectory
    segments: list[Segment]
    spans: list[ActionSpan]
    prompt_length: int
    token_advantages: list[list[float]] | None = None

    @property
    def action_lengths(self) -> list[int]:
        """Each action's token count (what `AdvantageHook` takes)."""
        return [s.length for s in self.spans]

    @property
    def num_tokens(self) -> int:
        return sum(len(s.token_ids) for s in self.segments)

    def token_values(self, per_action: Sequence[float]) -> list[list[float]]:
        """Spread one value per action over its tokens: per segment, per token (0.0 outside actions)."""
        if len(per_action) != len(self.spans):
            raise ValueError(f"got {len(per_action)} values for {len(self.spans)} actions")
        values = [[0.0] * len(s.token_ids) for s in self.segments]
        for span, value in zip(self.spans, per_action, strict=True):
            values[span.segment][span.start : span.end] = [float(value)] * span.length
        return values


class ChatFrame:
    """Renders env turns as chat-template tokens that continue a context ending in the model's tokens.

    The text between an assistant turn's content and the next generation prompt is found once by
    rendering sentinel conversations, so any prefix-preserving template works (ChatML, Llama, ...).

    Raises:
        ValueError: the template does not render earlier messages the same whatever follows.
    """

    def __init__(self, policy: PolicyModel) -> None:
        self.policy = policy
        tok = policy.tokenizer
        self._base = [{"role": "user", "content": "x"}, {"role": "assistant", "content": _SENTINEL}]
        self._base_text = tok.apply_chat_template(self._base, tokenize=False)
        cut = self._base_text.rfind(_SENTINEL)
        if cut < 0:
            raise ValueError(
                "the chat template drops the assistant's content; it cannot frame multi-turn episodes"
            )
        self._closing = self._base_text[cut + len(_SENTINEL) :]  # e.g. "<|im_end|>\n"
        self._stop_texts = {t: tok.decode([t]) for t in policy.stop_ids}

    def first(self, messages: Sequence[Mapping[str, Any]]) -> list[int]:
        """The prompt of a context: ``messages`` and the generation prompt."""
        return self.policy.encode_chat([dict(m) for m in messages])

    def reply(self, messages: Sequence[Mapping[str, Any]], last_action: Sequence[int]) -> list[int]:
        """Tokens that close the model's turn (what its tokens did not already close) and add ``messages``
        and the next generation prompt."""
        tok = self.policy.tokenizer
        full = tok.apply_chat_template(
            [*self._base, *map(dict, messages)], add_generation_prompt=True, tokenize=False
        )
        if not full.startswith(self._base_text):
            raise ValueError("the chat template is not prefix-preserving; multi-turn token contexts need one")
        closing = self._closing
        if last_action and last_action[-1] in self._stop_texts:
            stop_text = self._stop_texts[last_action[-1]]
            if closing.startswith(stop_text):
                closing = closing[len(stop_text) :]
        return self.policy.encode(closing + full[len(self._base_text) :])


def _messages(observation: Any) -> list[dict[str, Any]]:
    """An observation as chat messages (text mode: one user message)."""
    if isinstance(observation, Mapping) and isinstance(observation.get("text"), str):
        observation = observation["text"]
    if isinstance(observation, str):
        return [{"role": "user", "content": observation}]
    if isinstance(observation, Sequence) and all(isinstance(m, Mapping) for m in observation):
        return [{"role": m["role"], "content": m["content"]} for m in observation]
    raise TypeError(f"observations must be text or chat messages, got {type(observation).__name__}")


@dataclass
class _Live:
    env: gym.Env
    episode: Episode
    observation: Any
    seen: int  # chat mode: messages of the observation already in the context
    turn: int = 0
    done: bool = False


def run_episodes(
    policy: PolicyModel,
    envs: Sequence[gym.Env],
    *,
    seeds: Sequence[int],
    sample_seed: int,
    options: Sequence[dict[str, Any] | None] | dict[str, Any] | None = None,
    max_new_tokens: int = 64,
    temperature: float = 1.0,
    top_p: float = 1.0,
    max_turns: int | None = None,
    forced: ForcedTokens | None = None,
    mask_forced: bool = True,
) -> list[Episode]:
    """Play one episode on each env, all in lockstep, and return them in token space.

    Args:
        policy: the acting policy.
        envs: one env per episode (reset here; text or chat ``obs_mode``).
        seeds: the env seed of each episode (GRPO: the same seed for a group's members).
        sample_seed: turn ``t`` of episode ``i`` samples with ``member_seed(member_seed(sample_seed, i), t)``.
        options: ``reset`` options, shared or one per env.
        max_new_tokens: the most tokens per action.
        temperature, top_p: sampling settings.
        max_turns: an extra bound on steps (the env's time limit applies anyway).
        forced: tokens to force at the start of an action (prefix perturbation; a scripted policy when
            they end with a stop token).
        mask_forced: forced tokens get loss mask 0 (default) or 1.

    Returns:
        One `Episode` per env. An episode whose context is full is truncated.
    """
    if len(seeds) != len(envs):
        raise ValueError(f"got {len(seeds)} seeds for {len(envs)} envs")
    opts = list(options) if isinstance(options, Sequence) else [options] * len(envs)
    frame = ChatFrame(policy)
    live = [_start(frame, env, seed, opt) for env, seed, opt in zip(envs, seeds, opts, strict=True)]
    limit = max_turns or 10**9
    while True:
        playing = [i for i, x in enumerate(live) if not x.done]
        if not playing:
            return [x.episode for x in live]
        contexts, budgets, forcing, ready = [], [], [], []
        for i in playing:
            x = live[i]
            context = x.episode.segments[-1].token_ids
            room = (
                max_new_tokens
                if policy.context is None
                else min(max_new_tokens, policy.context - len(context))
            )
            if room <= 0 or x.turn >= limit:
                x.episode.trajectory.truncated, x.done = True, True
                continue
            ready.append(i)
            contexts.append(context)
            budgets.append(room)
            forcing.append(forced(i, x.turn, x.observation) if forced is not None else None)
        if not ready:
            continue
        row_seeds = [member_seed(member_seed(sample_seed, i), live[i].turn) for i in ready]
        out = sample(
            policy,
            contexts,
            row_seeds=row_seeds,
            max_new_tokens=budgets,
            temperature=temperature,
            top_p=top_p,
            forced=forcing,
        )
        for row, i in enumerate(ready):
            _advance(live[i], frame, out.tokens[row], out.logprobs[row], out.forced[row], mask_forced)


def _start(frame: ChatFrame, env: gym.Env, seed: int, options: dict[str, Any] | None) -> _Live:
    """Reset ``env`` and open the episode's first context."""
    observation, info = env.reset(seed=int(seed), options=options)
    messages = _messages(observation)
    prompt = frame.first(messages)
    segment = Segment()
    segment.extend(prompt)
    traj = Trajectory(task_id=str(info.get(K.TASK_ID, "")), seed=int(seed), reset_info=info)
    return _Live(env, Episode(traj, [segment], [], len(prompt)), observation, len(messages))


def demonstrations(
    policy: PolicyModel,
    envs: Sequence[gym.Env],
    *,
    seeds: Sequence[int],
    options: dict[str, Any] | None = None,
    act: Callable[[gym.Env, Any], str] | None = None,
    max_turns: int | None = None,
) -> list[Episode]:
    """Scripted episodes in token space, without running the model: each action is ``act(env, observation)``
    (default: the env's oracle), tokenised and closed with a stop token; its tokens carry loss mask 1 (and
    forced mask 1). SFT's data, and a scripted policy's episodes.

    Args:
        policy: supplies the tokenizer and chat template.
        envs: one env per episode.
        seeds: the env seeds.
        options: ``reset`` options.
        act: the script; default ``env.unwrapped.oracle_action()``.
        max_turns: an extra bound on steps.
    """
    if len(seeds) != len(envs):
        raise ValueError(f"got {len(seeds)} seeds for {len(envs)} envs")
    frame = ChatFrame(policy)
    stop = min(policy.stop_ids) if policy.tokenizer.eos_token_id is None else policy.tokenizer.eos_token_id
    episodes = []
    for env, seed in zip(envs, seeds, strict=True):
        x = _start(frame, env, seed, options)
        while not x.done:
            if max_turns is not None and x.turn >= max_turns:
                x.episode.trajectory.truncated = True
                break
            text = act(env, x.observation) if act is not None else env.unwrapped.oracle_action()  # type: ignore[attr-defined]
            tokens = [*policy.encode(text), stop]
            _advance(x, frame, tokens, [0.0] * len(tokens), len(tokens), False)
        episodes.append(x.episode)
    return episodes


def _advance(
    x: _Live, frame: ChatFrame, tokens: list[int], logprobs: list[float], forced: int, mask_forced: bool
) -> None:
    """Apply one sampled action to its env and extend the episode's context."""
    episode = x.episode
    segment = episode.segments[-1]
    start = len(segment.token_ids)
    segment.extend(tokens, action=True, forced=forced, mask_forced=mask_forced, logprobs=logprobs)
    episode.spans.append(ActionSpan(len(episode.segments) - 1, start, len(segment.token_ids)))
    action = frame.policy.decode(tokens)
    observation, reward, terminated, truncated, info = x.env.step(action)
    episode.trajectory.steps.append(Step(x.observation, action, float(reward), info))
    x.turn += 1
    if terminated or truncated:
        episode.trajectory.terminated, episode.trajectory.truncated = bool(terminated), bool(truncated)
        episode.trajectory.success = bool(info.get(K.SUCCESS, False))
        x.done = True
        return
    messages = _messages(observation)
    if info.get(K.CONTEXT_RESET):
        fresh = Segment()
        fresh.extend(frame.first(messages))
        episode.segments.append(fresh)
    else:
        # chat mode: the observation repeats the conversation; new are the messages after our action
        new = messages if isinstance(observation, (str, Mapping)) else messages[x.seen + 1 :]
        segment.extend(frame.reply(new, tokens))
    x.seen = len(messages)
    x.observation = observation


def scripted_tokens(
    policy: PolicyModel, envs: Sequence[gym.Env], script: Callable[[int, Any, Any], str | None]
) -> ForcedTokens:
    """`ForcedTokens` from a scripted policy in text: ``script(episode index, env, observation)`` returns the
    whole action (tokenised and closed with a stop token) or None to let the policy sample."""
    eos = policy.tokenizer.eos_token_id
    stop = eos if eos is not None else min(policy.stop_ids)

    def forced(i: int, turn: int, observation: Any) -> Sequence[int] | None:
        text = script(i, envs[i], observation)
        return None if text is None else [*policy.encode(text), stop]

    return forced


def completion_parts(episode: Episode) -> tuple[list[int], list[int], list[int], list[float]]:
    """Prompt ids, completion ids, loss mask and sampling log-probs of a one-context episode (ttpo, mopd)."""
    if len(episode.segments) != 1:
        raise ValueError("this trainer trains on one-context episodes (no context resets)")
    seg, cut = episode.segments[0], episode.prompt_length
    return seg.token_ids[:cut], seg.token_ids[cut:], seg.loss_mask[cut:], seg.logprobs[cut:]


def group_seeds(seed: int, step: int, prompts: int, group_size: int) -> tuple[list[int], int]:
    """One step's slot seeds (task ``j`` is ``member_seed(seed, step·prompts + j)``, repeated ``group_size``
    times, group-major) and its sampling seed ``member_seed(seed + 1, step)`` (ttpo, mopd)."""
    task_seeds = [member_seed(seed, step * prompts + j) for j in range(prompts)]
    return [s for s in task_seeds for _ in range(group_size)], member_seed(seed + 1, step)
