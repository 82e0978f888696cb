"""Prefix perturbation's shared piece (papers/training.md §2.4): a small model's reasoning prefix, cut where
its token entropy drops most, handed to the policy to continue.

The cut rule is the design proposal of training.md §2.4 (inferred: the PKU paper's exact rule could not be
read): ``t* = argmax_{t in [lo·n, hi·n]} mean(H[t-w:t]) - mean(H[t:t+w])`` over the small model's per-token
entropies ``H``, i.e. right after the model "commits" to an approach.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from papergym.baselines.policy import PolicyModel, sample


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
