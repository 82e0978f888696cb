"""A trainable policy: batched seeded sampling with per-token log-probs, and log-probs of given tokens.

Sampling is `papergym.backends.sampling.generate`, the loop `papergym.backends.hf.HFChatModel` runs too
(KV cache, left padding): every row has its own ``torch.Generator`` seeded from the call's seed and the
row index, so nothing touches torch's global random state, and a run replays exactly. A row may
be given forced tokens (a prefix from another model, or a whole scripted completion): they are fed
instead of sampled, and their log-probs under the policy are recorded like a sampled token's.

`token_logprobs` / `completion_logprobs` give differentiable log-probs of given token ids (GRPO's
current and reference policies, TTPO's and MOPD's teachers).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from papergym.backends.sampling import Samples, capped_budgets, generate, stop_token_ids
from papergym.core.errors import require
from papergym.core.trajectory import member_seed


@dataclass
class PolicyModel:
    """A causal LM with its tokenizer and what sampling needs to know about them.

    Attributes:
        model: a transformers causal LM.
        tokenizer: its tokenizer (with a chat template).
        stop_ids: token ids that end a completion (the generation config's eos ids and the tokenizer's).
        pad_id: the padding id.
        context: the model's context length (``max_position_embeddings``), or None if unknown.
    """

    model: Any
    tokenizer: Any
    stop_ids: frozenset[int]
    pad_id: int
    context: int | None

    @property
    def device(self) -> Any:
        return next(self.model.parameters()).device

    def encode_chat(
        self, messages: Sequence[dict[str, Any]], *, add_generation_prompt: bool = True
    ) -> list[int]:
        """The token ids of ``messages`` rendered by the chat template."""
        text = self.tokenizer.apply_chat_template(
            [dict(m) for m in messages], add_generation_prompt=add_generation_prompt, tokenize=False
        )
        return self.encode(text)

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (special-token strings in it become their ids; no extra bos/eos)."""
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def decode(self, ids: Sequence[int]) -> str:
        """The text of ``ids`` without stop and special tokens."""
        return self.tokenizer.decode([t for t in ids if t not in self.stop_ids], skip_special_tokens=True)


def wrap_policy(model: Any, tokenizer: Any) -> PolicyModel:
    """A `PolicyModel` around an already loaded model and tokenizer."""
    ids = stop_token_ids(model, tokenizer)
    if not ids:
        raise ValueError("the tokenizer and generation config define no eos token: set tokenizer.eos_token")
    pad = tokenizer.pad_token_id
    context = getattr(model.config, "max_position_embeddings", None)
    return PolicyModel(model, tokenizer, frozenset(ids), int(pad if pad is not None else min(ids)), context)


def load_policy(source: str | Path | PolicyModel, *, device: str = "cpu", dtype: Any = None) -> PolicyModel:
    """A policy from ``"tiny"`` (a fresh `papergym.baselines.tiny.build_tiny` model), a local checkpoint
    directory, or an existing `PolicyModel` (returned as is).

    Raises:
        ValueError: the path is not a local checkpoint directory.
    """
    if isinstance(source, PolicyModel):
        return source
    from papergym.baselines import tiny

    if str(source) == "tiny":
        model, tok = tiny.build_tiny()
        model.to(device)
    else:
        model, tok = tiny.load_model(source, dtype=dtype, device=device)
    return wrap_policy(model, tok)


def sample(
    policy: PolicyModel,
    prompts: Sequence[Sequence[int]],
    *,
    seed: int | None = None,
    row_seeds: Sequence[int] | None = None,
    num_samples: int = 1,
    max_new_tokens: int | Sequence[int] = 64,
    temperature: float = 1.0,
    top_p: float = 1.0,
    forced: Sequence[Sequence[int] | None] | None = None,
    return_entropy: bool = False,
) -> Samples:
    """Sample ``num_samples`` completions of each prompt in one batch (`papergym.backends.sampling.generate`,
    the loop `HFChatModel` runs too). Rows are prompt-major: prompt ``i``'s samples are rows
    ``i*n .. i*n+n-1``.

    Args:
        policy: the policy.
        prompts: token ids of each prompt (already rendered by the chat template).
        seed: row ``r`` draws from a generator seeded with ``member_seed(seed, r)``.
        row_seeds: instead of ``seed``, each row's own seed (a row then samples the same whatever batch it
            is in).
        num_samples: completions per prompt (GRPO's G).
        max_new_tokens: the most new tokens, for every row or per row (also capped by the context).
        temperature: softmax temperature; 0 is greedy.
        top_p: nucleus sampling mass (1.0: off).
        forced: per row, tokens to feed instead of sampling at the first positions (None: none).
        return_entropy: also record each position's entropy.

    Returns:
        The `Samples`.
    """
    if num_samples < 1 or not prompts or any(len(p) == 0 for p in prompts):
        raise ValueError("sample needs num_samples >= 1 and at least one non-empty prompt")
    if temperature < 0 or not 0 < top_p <= 1:
        raise ValueError(f"need temperature >= 0 and 0 < top_p <= 1, got {temperature}, {top_p}")
    rows = [list(p) for p in prompts for _ in range(num_samples)]
    n = len(rows)
    if forced is not None and len(forced) != n:
        raise ValueError(f"forced has {len(forced)} entries for {n} rows")
    budgets = capped_budgets(max_new_tokens, rows, policy.context)
    if all(b <= 0 for b in budgets):
        return Samples([[] for _ in rows], [[] for _ in rows], [[] for _ in rows] if return_entropy else None,
                       [0] * n, [False] * n)  # fmt: skip
    if (seed is None) == (row_seeds is None):
        raise ValueError("pass exactly one of seed= and row_seeds=")
    if row_seeds is not None:
        seeds = [int(s) for s in row_seeds]
    elif seed is not None:
        seeds = [member_seed(seed, r) for r in range(n)]
    if len(seeds) != n:
        raise ValueError(f"row_seeds has {len(seeds)} entries for {n} rows")
    return generate(
        policy.model,
        rows,
        pad_id=policy.pad_id,
        stop_ids=policy.stop_ids,
        seeds=seeds,
        max_new_tokens=budgets,
        temperature=temperature,
        top_p=top_p,
        forced=forced,
        return_entropy=return_entropy,
    )


def pad_right(sequences: Sequence[Sequence[int]], pad_id: int, *, device: Any = None) -> tuple[Any, Any]:
    """``(B, L)`` ids and attention mask of ``sequences``, right-padded with ``pad_id``."""
    torch = require("torch", "llm")
    width = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for i, s in enumerate(sequences):
        ids[i, : len(s)] = torch.tensor(list(s), dtype=torch.long)
        mask[i, : len(s)] = 1
    return ids.to(device), mask.to(device)


def micro_batches(lengths: Sequence[int], size: int) -> list[list[int]]:
    """Row indices in groups of at most ``size`` (0: one group of every row), rows of similar length
    together (sorted by length, stable), so each group pads little. With ``size=1`` nothing is padded:
    on a CPU the tiny LM's SFT step on 8 VoiceService-v0 contexts of 1,192-3,653 tokens ran 5.1x faster
    than one padded pass, and 1.7x on MobileGUI-v0's of 903-1,290 (benchmarks/README.md, "Micro-batching")."""
    if size < 0:
        raise ValueError(f"a micro-batch size must be >= 0, got {size}")
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    if size == 0:
        return [order] if order else []
    return [order[i : i + size] for i in range(0, len(order), size)]


HEAD_ONLY_TYPES = frozenset({"qwen2", "qwen3", "llama", "mistral"})
"""Model types whose logits are exactly ``lm_head(last hidden state)`` (no soft-capping or scaling), so
`token_logprobs` may apply the head at the kept positions only. Others always take the full path."""


def token_logprobs(
    model: Any,
    input_ids: Any,
    attention_mask: Any,
    *,
    temperature: float = 1.0,
    return_entropy: bool = False,
    keep: Any = None,
) -> Any:
    """Per-position log-probs of given ids: ``out[:, t] = log p(ids[:, t] | ids[:, :t])``; ``out[:, 0] = 0``.

    Differentiable (call it under ``torch.no_grad()`` for a reference or teacher). Works with left or
    right padding (positions come from the attention mask).

    Args:
        model: a causal LM.
        input_ids: ``(B, L)`` token ids.
        attention_mask: ``(B, L)`` 1 on real tokens.
        temperature: divides the logits first (match the sampling temperature for importance ratios).
        return_entropy: also return each position's entropy (``(B, L)``, same alignment).
        keep: optional ``(B, L)`` mask of the positions whose log-probs the caller reads (a loss mask);
            the others come back as 0. For the model types of `HEAD_ONLY_TYPES` the output head then runs
            at those positions only (the head over a 4k vocabulary at every position dominates a tiny
            model's step; the values are the same); other models compute every position.

    Returns:
        ``(B, L)`` log-probs, or ``(logprobs, entropies)``.
    """
    torch = require("torch", "llm")
    positions = (attention_mask.cumsum(-1) - 1).clamp(min=0)
    real = attention_mask.to(torch.float32)
    config = getattr(model, "config", None)
    if keep is not None and getattr(config, "model_type", None) in HEAD_ONLY_TYPES:
        hidden = model.get_decoder()(
            input_ids=input_ids, attention_mask=attention_mask, position_ids=positions
        ).last_hidden_state
        chosen = keep[:, 1:].bool() & attention_mask[:, 1:].bool()  # (B, L-1): position t predicts t+1
        logits = model.get_output_embeddings()(hidden[:, :-1][chosen]).float()  # (N, V)
        targets = input_ids[:, 1:][chosen]
        scattered = _scatter_rows(torch, chosen)
    else:
        logits = model(input_ids=input_ids, attention_mask=attention_mask, position_ids=positions).logits
        logits = logits[:, :-1, :].float()  # (B, L-1, V)
        targets = input_ids[:, 1:]
        scattered = None
    if temperature > 0 and temperature != 1.0:
        logits = logits / temperature
    logz = torch.logsumexp(logits, dim=-1)
    picked = logits.gather(-1, targets[..., None]).squeeze(-1) - logz
    entropy = None
    if return_entropy:
        probs_logp = logits - logz[..., None]
        entropy = -(probs_logp.exp() * probs_logp).sum(-1)
    if scattered is not None:
        picked = scattered(picked)
        entropy = scattered(entropy) if entropy is not None else None
    zero = torch.zeros_like(picked[:, :1])
    logp = torch.cat([zero, picked], dim=1) * real
    if entropy is None:
        return logp
    return logp, torch.cat([zero, entropy], dim=1) * real


def _scatter_rows(torch: Any, chosen: Any) -> Callable[[Any], Any]:
    """A function placing ``(N,)`` values at ``chosen``'s true positions of a ``(B, L-1)`` zero tensor."""

    def place(values: Any) -> Any:
        out = torch.zeros(chosen.shape, dtype=values.dtype, device=values.device)
        return out.masked_scatter(chosen, values)

    return place


def completion_logprobs(
    policy: PolicyModel,
    prompts: Sequence[Sequence[int]],
    completions: Sequence[Sequence[int]],
    *,
    temperature: float = 1.0,
    return_entropy: bool = False,
) -> Any:
    """Log-probs of each completion's tokens given its prompt, aligned to the completion.

    Args:
        policy: the model scoring the tokens (a student, a reference, a teacher with the same tokenizer).
        prompts: the prompts' ids, one per completion.
        completions: the completions' ids.
        temperature: as `token_logprobs`.
        return_entropy: also return the entropies.

    Returns:
        ``(logp, mask)`` (or ``(logp, entropy, mask)``), each ``(B, Tc)`` right-padded to the longest
        completion; ``mask`` is 1 on real completion tokens.
    """
    torch = require("torch", "llm")
    if len(prompts) != len(completions):
        raise ValueError(f"got {len(prompts)} prompts for {len(completions)} completions")
    ids, attn = pad_right(
        [list(p) + list(c) for p, c in zip(prompts, completions, strict=True)],
        policy.pad_id,
        device=policy.device,
    )
    keep = torch.zeros_like(attn)
    for i, (p, c) in enumerate(zip(prompts, completions, strict=True)):
        keep[i, len(p) : len(p) + len(c)] = 1
    out = token_logprobs(
        policy.model, ids, attn, temperature=temperature, return_entropy=return_entropy, keep=keep
    )
    logp, entropy = out if return_entropy else (out, None)
    width = max(1, max(len(c) for c in completions))
    index = torch.zeros((len(prompts), width), dtype=torch.long, device=ids.device)
    mask = torch.zeros((len(prompts), width), device=ids.device)
    for i, (p, c) in enumerate(zip(prompts, completions, strict=True)):
        index[i, : len(c)] = torch.arange(len(p), len(p) + len(c))
        mask[i, : len(c)] = 1.0
    gathered = logp.gather(1, index) * mask
    if entropy is None:
        return gathered, mask
    return gathered, entropy.gather(1, index) * mask, mask


def completion_logits(
    policy: PolicyModel,
    prompts: Sequence[Sequence[int]],
    completions: Sequence[Sequence[int]],
) -> tuple[Any, Any]:
    """The full-vocabulary logits that predict each completion token given its prompt (differentiable).

    Returns:
        ``(logits, mask)``: ``(B, Tc, V)`` float32 logits (row ``i``, position ``j`` predicts
        ``completions[i][j]``) and the ``(B, Tc)`` mask of real completion tokens.
    """
    torch = require("torch", "llm")
    if len(prompts) != len(completions) or any(len(p) == 0 for p in prompts):
        raise ValueError("need one non-empty prompt per completion")
    ids, attn = pad_right(
        [list(p) + list(c) for p, c in zip(prompts, completions, strict=True)],
        policy.pad_id,
        device=policy.device,
    )
    positions = (attn.cumsum(-1) - 1).clamp(min=0)
    logits = policy.model(input_ids=ids, attention_mask=attn, position_ids=positions).logits.float()
    width = max(1, max(len(c) for c in completions))
    index = torch.zeros((len(prompts), width), dtype=torch.long, device=ids.device)
    mask = torch.zeros((len(prompts), width), device=ids.device)
    for i, (p, c) in enumerate(zip(prompts, completions, strict=True)):
        index[i, : len(c)] = torch.arange(len(p) - 1, len(p) - 1 + len(c))
        mask[i, : len(c)] = 1.0
    gathered = logits.gather(1, index[..., None].expand(-1, -1, logits.shape[-1]))  # (B, Tc, V)
    return gathered, mask


class PolicyChatModel:
    """A `PolicyModel` as a `ChatModel` that shares its weights: the same model object answers chat requests
    (a role such as CAFE's critic, with the role's own prompt), so every update of the policy changes the
    role too.

    Args:
        policy: the policy whose model answers.
        max_tokens: caps every reply (None: the caller's ``max_tokens``).
        temperature: the sampling temperature of every reply, instead of the caller's (None: the
            caller's); a role played while training samples, so its replies vary.

    ``chat`` samples with `sample` (greedy at temperature 0) under ``torch.no_grad`` and restores the
    model's train/eval mode; a call without a seed uses seed 0, so a replay is exact.
    """

    def __init__(
        self, policy: PolicyModel, *, max_tokens: int | None = None, temperature: float | None = None
    ) -> None:
        if (max_tokens is not None and max_tokens < 1) or (temperature is not None and temperature < 0):
            raise ValueError(f"need max_tokens >= 1 and temperature >= 0, got {max_tokens}, {temperature}")
        self.policy = policy
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.model_id = f"policy:{id(policy.model):x}"

    def __repr__(self) -> str:
        return f"PolicyChatModel({type(self.policy.model).__name__})"

    def chat(
        self,
        messages: Sequence[dict[str, Any]],
        *,
        seed: int | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ) -> str:
        """The policy's reply to ``messages`` (new tokens only, stop and special tokens dropped)."""
        torch = require("torch", "llm")
        prompt = self.policy.encode_chat(messages)
        model = self.policy.model
        training = model.training
        model.eval()
        try:
            with torch.no_grad():
                out = sample(
                    self.policy,
                    [prompt],
                    row_seeds=[0 if seed is None else int(seed)],
                    max_new_tokens=min(max_tokens, self.max_tokens or max_tokens),
                    temperature=temperature if self.temperature is None else self.temperature,
                )
        finally:
            model.train(training)
        return self.policy.decode(out.tokens[0]).strip()


def role_backends(
    roles: Sequence[str],
    policy: PolicyModel,
    *,
    device: str = "cpu",
    max_tokens: int | None = None,
    temperature: float | None = None,
) -> dict[str, Any]:
    """Env backend kwargs played by models: ``ROLE`` is the training ``policy`` itself (a `PolicyChatModel`
    sharing its weights), ``ROLE=DIR`` a frozen checkpoint. The env wraps each bare `ChatModel` in its
    role's model-backed class (the backend rule of `papergym.backends`); ``max_tokens`` and
    ``temperature`` go to every `PolicyChatModel`.

    >>> role_backends([], None)
    {}
    """
    out: dict[str, Any] = {}
    for spec in roles:
        role, sep, path = spec.partition("=")
        if not role.isidentifier() or (sep and not path):
            raise ValueError(f"a role is NAME or NAME=CHECKPOINT_DIR, got {spec!r}")
        if role in out:
            raise ValueError(f"role {role!r} given twice")
        if sep:
            frozen = load_policy(path, device=device)
            frozen.model.eval().requires_grad_(False)
            out[role] = PolicyChatModel(frozen, max_tokens=max_tokens, temperature=temperature)
        else:
            out[role] = PolicyChatModel(policy, max_tokens=max_tokens, temperature=temperature)
    return out
