"""Prefix perturbation (papers/training.md §2, the PKU paper's mechanism, details inferred from its
precursors), all of it: which group members are perturbed, the small model's reasoning prefix cut where its
token entropy drops most, handing it to the policy as forced first tokens, and how the prefix tokens enter
the loss (masked, PrefixRL / Prefix Sampling, or kept with LUFFY's weight ``π/(π+γ)``, unclipped).

The cut rule is the design proposal of training.md §2.4 (inferred: the PKU paper's exact rule could not be
read): ``t* = argmax_{t in [lo·n, hi·n]} mean(H[t-w:t]) - mean(H[t:t+w])`` over the small model's per-token
entropies ``H``, i.e. right after the model "commits" to an approach.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from papergym.baselines.policy import PolicyModel, load_policy, sample
from papergym.baselines.rollout import ForcedTokens, Segment
from papergym.core.trajectory import member_seed

LUFFY_GAMMA = 0.1
"""LUFFY's shaping constant γ in π/(π+γ) (arXiv 2504.14945; training.md §2.3)."""


def prefix_cut(entropies: Sequence[float], *, lo: float = 0.1, hi: float = 0.7, window: int = 4) -> int:
    """Where to cut a trace: the position of the largest (smoothed) entropy drop within ``[lo, hi]`` of it.

    ``ΔH_t = mean(H[t-w:t]) - mean(H[t:t+w])`` (windows cut at the ends); the prefix is ``trace[:t*]``.

    >>> prefix_cut([3.0, 3.0, 3.0, 3.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5], window=2)
    4
    """
    n = len(entropies)
    first, last = max(1, int(np.ceil(lo * n))), max(1, int(np.floor(hi * n)))
    if n < 2 or first > last:
        return max(1, min(n, first))
    h = np.asarray(entropies, dtype=float)
    drops = [h[max(0, t - window) : t].mean() - h[t : t + window].mean() for t in range(first, last + 1)]
    return first + int(np.argmax(drops))


def prefix_tokens(
    prefix: PolicyModel,
    policy: PolicyModel,
    observations: Sequence[Any],
    *,
    seed: int,
    max_new_tokens: int = 64,
    temperature: float = 1.0,
    lo: float = 0.1,
    hi: float = 0.7,
    window: int = 4,
) -> list[list[int]]:
    """For each first observation, the prefix model's trace cut at its entropy drop, as policy token ids.

    The prefix model may have another tokenizer: the cut trace goes through text (decoded by the prefix
    model's tokenizer, encoded by the policy's).
    """
    prompts = []
    for observation in observations:
        text = observation["text"] if isinstance(observation, Mapping) else observation
        messages = [{"role": "user", "content": text}] if isinstance(text, str) else [dict(m) for m in text]
        prompts.append(prefix.encode_chat(messages))
    out = sample(
        prefix,
        prompts,
        seed=seed,
        max_new_tokens=max_new_tokens,
        temperature=temperature,
        return_entropy=True,
    )
    result = []
    for row in range(len(prompts)):
        tokens = [t for t in out.tokens[row] if t not in prefix.stop_ids]
        entropies = out.entropies[row][: len(tokens)] if out.entropies is not None else []
        cut = prefix_cut(entropies, lo=lo, hi=hi, window=window)
        result.append(policy.encode(prefix.decode(tokens[:cut])) if tokens else [])
    return result


@dataclass
class PrefixPerturbation:
    """Perturbs a share of each step's group members with the prefix model's cut traces.

    Args:
        model: the small model writing the prefixes.
        prob: the probability that a member is perturbed (the PKU paper's 20%).
        lo, hi: earliest and latest cut as fractions of the trace (inferred, training.md §2.4).
        window: tokens averaged on each side of a candidate cut (inferred).
        max_new_tokens: the token budget of the prefix model's trace.
        temperature: its sampling temperature.
        loss: ``"mask"`` drops the prefix tokens from the loss; ``"luffy"`` keeps them with LUFFY's weight.
    """

    model: PolicyModel
    prob: float = 0.2
    lo: float = 0.1
    hi: float = 0.7
    window: int = 4
    max_new_tokens: int = 64
    temperature: float = 1.0
    loss: Literal["mask", "luffy"] = "mask"

    def prefixes(
        self, policy: PolicyModel, envs: Sequence[Any], seeds: Sequence[int], step_seed: int
    ) -> dict[int, list[int]]:
        """The perturbed slots of one step (each with probability ``prob``, from the step seed) and their
        prefixes as policy token ids."""
        rng = np.random.default_rng(member_seed(step_seed, 3))
        slots = [i for i in range(len(envs)) if rng.random() < self.prob]
        if not slots:
            return {}
        observations = [envs[i].reset(seed=int(seeds[i]))[0] for i in slots]
        tokens = prefix_tokens(
            self.model,
            policy,
            observations,
            seed=member_seed(step_seed, 7),
            max_new_tokens=self.max_new_tokens,
            temperature=self.temperature,
            lo=self.lo,
            hi=self.hi,
            window=self.window,
        )
        return dict(zip(slots, tokens, strict=True))


def load_perturbation(
    source: str | None, *, device: str = "cpu", **settings: Any
) -> PrefixPerturbation | None:
    """A `PrefixPerturbation` with the prefix model ``source`` ("tiny" or a checkpoint), or None (off)."""
    if source is None:
        return None
    return PrefixPerturbation(load_policy(source, device=device), **settings)


def prefix_forcing(prefixes: Mapping[int, Sequence[int]]) -> ForcedTokens | None:
    """Forced tokens that start each perturbed slot's first action with its prefix (None: no prefix)."""
    if not prefixes:
        return None

    def forcing(i: int, turn: int, observation: Any) -> Sequence[int] | None:
        return prefixes.get(i) if turn == 0 else None

    return forcing


def loss_masks(segment: Segment, luffy: bool) -> tuple[list[int], list[int]]:
    """The on-policy mask (clipped loss) and the off-policy mask (LUFFY's shaped term) of a segment.

    Without LUFFY every trained token is on-policy (masked prefix tokens are already out of ``loss_mask``);
    with it the forced prefix tokens move to the off-policy mask.
    """
    off = segment.forced_mask if luffy else [0] * len(segment.token_ids)
    on = [m * (1 - f) for m, f in zip(segment.loss_mask, off, strict=True)]
    return on, list(off)


def luffy_loss(
    logp: Any,
    advantages: Any,
    on_mask: Any,
    off_mask: Any,
    gamma: float = LUFFY_GAMMA,
    *,
    batch_tokens: float | None = None,
) -> Any:
    """LUFFY's term for off-policy prefix tokens: ``-(π/(π+γ)) · A`` over them, no clipping, averaged over
    all trained tokens (``(R, L)`` tensors in, a scalar out). On a micro-batch, ``batch_tokens`` is the
    whole batch's trained-token count (default: this one's)."""
    p = logp.exp()
    shaped = -(p / (p + gamma)) * advantages * off_mask
    trained = (on_mask + off_mask).sum() if batch_tokens is None else on_mask.new_tensor(batch_tokens)
    return shaped.sum() / trained.clamp(min=1.0)
