"""The one generation core: a seeded, KV-cached, left-padded sampling loop over a causal LM's forward pass.

`HFChatModel` (chat replies) and the trainers' `papergym.baselines.policy.sample` (rollouts with
log-probs) both call `generate`, so the same prompt, seed and settings give the same tokens through either.

Every row has its own CPU ``torch.Generator`` (seeded from the row's seed; ``None`` draws a
nondeterministic seed), so nothing touches torch's global random state, and a row samples the same
whether it runs alone or inside a batch (exactly so in float32). Rows are left-padded so that every
row's last token sits at the end; positions come from the attention mask. A row may be given forced
tokens (a prefix, or a whole scripted completion): they are fed with the prompt in one prefill pass and
their log-probs recorded like a sampled token's. A row ends on any stop id or when its budget runs out.

torch is imported inside the functions: importing this module stays light.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from papergym.core.errors import require

SEED_MODULUS = 2**64
"""``torch.Generator.manual_seed`` takes seeds in ``[0, 2**64)``; row seeds are taken modulo this."""


@dataclass
class Samples:
    """What `generate` produced, one entry per row.

    Attributes:
        tokens: the completion's ids (a stop token, when reached, is the last).
        logprobs: each token's log-prob under the sampling distribution (temperature and top-p applied;
            the model's own distribution at temperature 1 without top-p; untempered when greedy), forced
            tokens included.
        entropies: each position's entropy of that distribution (when asked for), else None.
        forced: how many leading tokens of each row were forced rather than sampled.
        finished: the row ended on a stop token (rather than running out of budget).
    """

    tokens: list[list[int]]
    logprobs: list[list[float]]
    entropies: list[list[float]] | None
    forced: list[int]
    finished: list[bool]


def stop_token_ids(model: Any, tokenizer: Any) -> frozenset[int]:
    """The generation config's eos ids (instruct models often list several) and the tokenizer's."""
    ids: set[int] = set()
    configured = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    for value in (configured, tokenizer.eos_token_id):
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, Sequence):
            ids.update(int(v) for v in value)
    return frozenset(ids)


def capped_budgets(
    budgets: int | Sequence[int], prompts: Sequence[Sequence[int]], context: int | None
) -> list[int]:
    """Each row's token budget (one for all, or per row), capped by what the context leaves after its
    prompt."""
    rows = [budgets] * len(prompts) if isinstance(budgets, int) else [int(b) for b in budgets]
    if len(rows) != len(prompts):
        raise ValueError(f"max_new_tokens has {len(rows)} entries for {len(prompts)} rows")
    if context is None:
        return rows
    return [min(b, context - len(p)) for b, p in zip(rows, prompts, strict=True)]


def row_generator(seed: int | None) -> Any:
    """A CPU generator (sampling happens on the CPU: the same draws on any device); ``None`` seeds it
    nondeterministically, leaving the global generator alone."""
    torch = require("torch", "llm")
    generator = torch.Generator()
    if seed is None:
        generator.seed()
    else:
        generator.manual_seed(int(seed) % SEED_MODULUS)
    return generator


def generate(
    model: Any,
    prompts: Sequence[Sequence[int]],
    *,
    pad_id: int,
    stop_ids: frozenset[int],
    seeds: Sequence[int | None],
    max_new_tokens: int | Sequence[int],
    temperature: float | Sequence[float] = 1.0,
    top_p: float = 1.0,
    context: int | None = None,
    forced: Sequence[Sequence[int] | None] | None = None,
    return_entropy: bool = False,
) -> Samples:
    """Sample one completion per prompt in one batch.

    Args:
        model: a transformers causal LM (its training mode is restored afterwards).
        prompts: each row's token ids (non-empty).
        pad_id: the padding id.
        stop_ids: ids that end a row.
        seeds: each row's generator seed (None: nondeterministic; unused by greedy rows).
        max_new_tokens: the most new tokens, for every row or per row (also capped by ``context``).
        temperature: softmax temperature, for every row or per row; 0 is greedy.
        top_p: nucleus sampling mass (1.0: off).
        context: the model's context length (None: unbounded).
        forced: per row, tokens fed instead of sampled at the first positions (None: none).
        return_entropy: also record each position's entropy.
    """
    torch = require("torch", "llm")
    n = len(prompts)
    temperatures = [float(temperature)] * n if isinstance(temperature, (int, float)) else list(temperature)
    budgets = capped_budgets(max_new_tokens, prompts, context)
    forced_rows = [list(f or ()) for f in forced] if forced is not None else [[] for _ in range(n)]
    if not len(seeds) == len(temperatures) == len(forced_rows) == n:
        raise ValueError(f"need one seed, temperature and forced entry per row ({n} rows)")
    out = Samples(
        [[] for _ in range(n)], [[] for _ in range(n)], [[] for _ in range(n)], [0] * n, [False] * n
    )
    if not return_entropy:
        out.entropies = None
    active = [b > 0 for b in budgets]
    if not any(active):
        return out
    generators = [row_generator(s) if t > 0 else None for s, t in zip(seeds, temperatures, strict=True)]
    device = next(model.parameters()).device
    # forced tokens are fed with the prompt in one prefill pass; their log-probs come from its last logits
    forced_rows = [f[: max(0, b)] for f, b in zip(forced_rows, budgets, strict=True)]
    keep = 1 + max(len(f) for f in forced_rows)
    full = [list(r) + f for r, f in zip(prompts, forced_rows, strict=True)]
    width = max(len(r) for r in full)
    ids = torch.full((n, width), pad_id, dtype=torch.long)
    mask = torch.zeros((n, width), dtype=torch.long)
    for i, r in enumerate(full):  # left padding: every row's last token sits at the end
        ids[i, width - len(r) :] = torch.tensor(r, dtype=torch.long)
        mask[i, width - len(r) :] = 1
    ids, mask = ids.to(device), mask.to(device)
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    argument = cache_argument(model)
    cache = None
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            while True:
                result = model(
                    input_ids=ids,
                    attention_mask=mask,
                    position_ids=positions,
                    use_cache=True,
                    logits_to_keep=keep,
                    **{argument: cache},
                )
                cache = result.cache if argument == "cache" else result.past_key_values
                logits = result.logits[:, -keep:, :].float().cpu()  # (n, keep, V)
                all_logprobs = _row_logprobs(torch, logits, temperatures, top_p)
                all_entropy = _entropy(all_logprobs) if return_entropy else None
                if keep > 1:  # the prefill: record the forced tokens
                    _record_forced(out, forced_rows, all_logprobs, all_entropy, stop_ids)
                    active = [not out.finished[i] and len(out.tokens[i]) < budgets[i] for i in range(n)]
                    if not any(active):
                        return out
                    keep = 1
                logprobs = all_logprobs[:, -1]  # (n, V)
                chosen = []
                for i in range(n):
                    if not active[i]:
                        chosen.append(pad_id)
                        continue
                    if generators[i] is None:
                        token = int(torch.argmax(logprobs[i]))
                    else:
                        token = int(torch.multinomial(logprobs[i].exp(), 1, generator=generators[i]))
                    out.tokens[i].append(token)
                    out.logprobs[i].append(float(logprobs[i, token]))
                    if out.entropies is not None and all_entropy is not None:
                        out.entropies[i].append(float(all_entropy[i, -1]))
                    out.finished[i] = token in stop_ids
                    active[i] = not out.finished[i] and len(out.tokens[i]) < budgets[i]
                    chosen.append(token)
                if not any(active):
                    return out
                ids = torch.tensor(chosen, dtype=torch.long, device=device)[:, None]
                mask = torch.cat([mask, torch.ones_like(ids)], dim=1)
                positions = positions[:, -1:] + 1
    finally:
        model.train(was_training)


def cache_argument(model: Any) -> str:
    """The forward's KV-cache argument: transformers renamed it (past_key_values -> cache) within 5.x."""
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def _row_logprobs(torch: Any, logits: Any, temperatures: Sequence[float], top_p: float) -> Any:
    """``(n, keep, V)`` sampling log-probs, each row at its own temperature (one batched pass per
    distinct temperature)."""
    distinct = sorted(set(temperatures))
    if len(distinct) == 1:
        return sampling_logprobs(torch, logits, distinct[0], top_p)
    out = torch.empty_like(logits)
    for t in distinct:
        rows = [i for i, ti in enumerate(temperatures) if ti == t]
        out[rows] = sampling_logprobs(torch, logits, t, top_p)[rows]
    return out


def sampling_logprobs(torch: Any, logits: Any, temperature: float, top_p: float) -> Any:
    """``(..., V)`` log-probs of the distribution sampled from (greedy: the untempered one)."""
    logprobs = torch.log_softmax(logits / temperature if temperature > 0 else logits, dim=-1)
    if top_p >= 1.0 or temperature == 0:
        return logprobs
    sorted_lp, order = torch.sort(logprobs, dim=-1, descending=True)
    cumulative = sorted_lp.exp().cumsum(-1)
    drop = cumulative - sorted_lp.exp() >= top_p  # keep the smallest set whose mass reaches top_p
    sorted_lp = sorted_lp.masked_fill(drop, float("-inf"))
    kept = torch.full_like(logprobs, float("-inf")).scatter(-1, order, sorted_lp)
    return torch.log_softmax(kept, dim=-1)


def _entropy(logprobs: Any) -> Any:
    """Entropy over the last axis of log-probs (``-inf`` entries contribute 0)."""
    return -(logprobs.exp() * logprobs.nan_to_num(neginf=0.0)).sum(-1)


def _record_forced(
    out: Samples, forced: Sequence[Sequence[int]], logprobs: Any, entropy: Any, stop_ids: frozenset[int]
) -> None:
    """Append each row's forced tokens with their log-probs; ``logprobs`` is ``(n, keep, V)`` over the last
    ``keep`` positions, and row ``i``'s forced token ``j`` is predicted at index ``keep - 1 - len(f) + j``."""
    keep = logprobs.shape[1]
    for i, f in enumerate(forced):
        for j, token in enumerate(f):
            at = keep - 1 - len(f) + j
            out.tokens[i].append(int(token))
            out.logprobs[i].append(float(logprobs[i, at, int(token)]))
            if out.entropies is not None:
                out.entropies[i].append(float(entropy[i, at]))
        out.forced[i] = len(f)
        out.finished[i] = bool(f) and int(f[-1]) in stop_ids
