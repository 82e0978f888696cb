"""What several trainers share, written once: group advantages, KL estimators, the clipped policy loss, DPO.

Formulas from papers/training.md §0.1 (GRPO / DeepSeekMath, DAPO, Dr. GRPO). Every function takes plain
tensors and a loss mask, so the same code serves prefix masking, TTPO's penalty-only tokens and
on-policy distillation (their trainers build the mask and the advantages).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Literal

from papergym.core.errors import require

if TYPE_CHECKING:  # torch is imported where a loss is computed, so importing a trainer stays light
    import torch

Normalization = Literal["seq", "token", "constant"]
KLEstimator = Literal["k1", "k2", "k3"]


def group_advantages(
    rewards: torch.Tensor, *, std_norm: bool = True, unbiased_std: bool = False, eps: float = 1e-6
) -> torch.Tensor:
    """Each member's advantage within its group.

    Args:
        rewards: ``(B, G)``: B groups of G members.
        std_norm: divide by the group's standard deviation (GRPO); False gives Dr. GRPO's ``r - mean``.
        unbiased_std: Bessel-corrected std. Default False (population std), which gives the
            worked example of training.md §0.1: rewards [1, 1, 1, 0] -> +0.58, -1.73.
        eps: added to the std, so a zero-variance group gets zero advantages.

    Returns:
        ``(B, G)`` advantages.

    >>> import torch
    >>> group_advantages(torch.tensor([[1.0, 1.0, 1.0, 0.0]])).round(decimals=2)
    tensor([[ 0.5800,  0.5800,  0.5800, -1.7300]])
    """
    if rewards.ndim != 2:
        raise ValueError(f"rewards must be (groups, members), got shape {tuple(rewards.shape)}")
    centred = rewards - rewards.mean(dim=1, keepdim=True)  # (B, G)
    if not std_norm:
        return centred
    return centred / (rewards.std(dim=1, keepdim=True, unbiased=unbiased_std) + eps)


def nonzero_variance_groups(rewards: torch.Tensor) -> torch.Tensor:
    """``(B,)`` booleans: the groups whose rewards differ (DAPO's dynamic sampling keeps only these)."""
    return (rewards.max(dim=1).values - rewards.min(dim=1).values) > 0


def kl_estimate(logp: torch.Tensor, ref_logp: torch.Tensor, kind: KLEstimator = "k3") -> torch.Tensor:
    """Per-token estimate of KL(π_θ ‖ π_ref) from the sampled tokens' log-probs (same shape in and out).

    ``k1 = log π_θ - log π_ref``; ``k2 = (k1)² / 2``; ``k3 = π_ref/π_θ - log(π_ref/π_θ) - 1`` (GRPO's,
    always >= 0).
    """
    log_ratio = ref_logp - logp  # log(π_ref / π_θ)
    if kind == "k1":
        return -log_ratio
    if kind == "k2":
        return 0.5 * log_ratio**2
    if kind == "k3":
        return log_ratio.exp() - log_ratio - 1.0
    raise ValueError(f"kind must be 'k1', 'k2' or 'k3', got {kind!r}")


@dataclass
class LossStats:
    """Detached diagnostics of one loss computation."""

    clip_fraction: float
    mean_ratio: float
    mean_kl: float

    @staticmethod
    def pooled(parts: Sequence[tuple[LossStats, float]]) -> LossStats:
        """A batch's statistics from its micro-batches' ``(stats, loss tokens)``: token-weighted means."""
        total = sum(n for _, n in parts)
        weights = [n / total if total > 0 else 1.0 / len(parts) for _, n in parts]
        means = {
            f.name: sum(w * getattr(s, f.name) for (s, _), w in zip(parts, weights, strict=True))
            for f in fields(LossStats)
        }
        return LossStats(**means)


def clipped_policy_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    eps_low: float = 0.2,
    eps_high: float = 0.2,
    norm: Normalization = "seq",
    max_length: int | None = None,
    ref_logp: torch.Tensor | None = None,
    beta: float = 0.0,
    kl: KLEstimator = "k3",
    batch_rows: int | None = None,
    batch_tokens: float | None = None,
) -> tuple[torch.Tensor, LossStats]:
    """The clipped surrogate loss of GRPO and its variants (to minimise).

    Given one micro-batch of a larger batch, with that batch's ``batch_rows`` and ``batch_tokens``, it
    returns this micro-batch's share of the whole batch's loss: the shares sum to the loss of one pass
    over the whole batch (and their gradients to its gradient), whichever way the rows are split.

    Args:
        logp: ``(B, T)`` log-probs of the sampled tokens under the current policy.
        old_logp: ``(B, T)`` the same under the sampling policy (equal to ``logp`` on the first update).
        advantages: ``(B,)`` one per sequence, or ``(B, T)`` one per token (advantage hooks, OPD).
        mask: ``(B, T)`` 1 for tokens that carry loss (the model's own tokens), 0 elsewhere.
        eps_low, eps_high: the clip range ``[1 - eps_low, 1 + eps_high]`` (DAPO: 0.2 / 0.28).
        norm: ``"seq"`` averages within each sequence then over sequences (GRPO); ``"token"`` over all
            loss tokens of the batch (DAPO); ``"constant"`` sums and divides by ``B * max_length``
            (Dr. GRPO).
        max_length: the constant of ``norm="constant"``.
        ref_logp: ``(B, T)`` reference log-probs, needed when ``beta > 0``.
        beta: the KL penalty weight (DeepSeekMath 0.04; DAPO 0).
        kl: the KL estimator.
        batch_rows: the whole batch's rows (default: ``B``).
        batch_tokens: the whole batch's loss tokens, ``mask``'s sum over every micro-batch (default:
            this ``mask``'s sum).

    Returns:
        The scalar loss and its `LossStats` (over this call's tokens).
    """
    if logp.shape != old_logp.shape or logp.shape != mask.shape:
        raise ValueError(
            f"logp, old_logp and mask must share a shape, got {logp.shape}, {old_logp.shape}, {mask.shape}"
        )
    if beta > 0 and ref_logp is None:
        raise ValueError("beta > 0 needs ref_logp")
    if norm == "constant" and not max_length:
        raise ValueError("norm='constant' needs max_length (Dr. GRPO divides by the generation budget)")
    mask = mask.to(logp.dtype)
    adv = advantages.unsqueeze(1) if advantages.ndim == 1 else advantages  # (B, 1) or (B, T)
    ratio = (logp - old_logp).exp()  # (B, T)
    clipped = ratio.clamp(1.0 - eps_low, 1.0 + eps_high)
    per_token = -(ratio * adv).minimum(clipped * adv)  # (B, T)
    kl_tokens = kl_estimate(logp, ref_logp, kl) if ref_logp is not None else logp.new_zeros(logp.shape)
    if beta > 0:
        per_token = per_token + beta * kl_tokens
    rows = logp.shape[0] if batch_rows is None else batch_rows
    if norm == "seq":
        loss = ((per_token * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)).sum() / rows
    elif norm == "token":
        tokens = mask.sum() if batch_tokens is None else mask.new_tensor(batch_tokens)
        loss = (per_token * mask).sum() / tokens.clamp(min=1.0)
    elif norm == "constant":
        loss = (per_token * mask).sum() / (rows * max_length)  # type: ignore[operator]
    else:
        raise ValueError(f"norm must be 'seq', 'token' or 'constant', got {norm!r}")
    with require("torch", "llm").no_grad():
        tokens = mask.sum().clamp(min=1.0)
        stats = LossStats(
            clip_fraction=float((((ratio - clipped).abs() > 0).to(logp.dtype) * mask).sum() / tokens),
            mean_ratio=float((ratio * mask).sum() / tokens),
            mean_kl=float((kl_tokens * mask).sum() / tokens),
        )
    return loss, stats


# inferred: the CAFE note gives no RDPO beta; 0.1 is the DPO paper's usual setting (Rafailov et al. 2023)
DPO_BETA = 0.1


def dpo_loss(
    logp_chosen: torch.Tensor,
    logp_rejected: torch.Tensor,
    ref_logp_chosen: torch.Tensor,
    ref_logp_rejected: torch.Tensor,
    beta: float = DPO_BETA,
) -> torch.Tensor:
    """Mean DPO loss −log σ(β[(logπ(y_w) − logπ_ref(y_w)) − (logπ(y_l) − logπ_ref(y_l))]).

    Each argument is a ``[P]`` tensor of sequence log-probabilities (summed over the response tokens,
    e.g. CAFE RDPO's feedback text f⁺ / f⁻ under the shared history), one entry per pair.
    """
    functional = require("torch.nn.functional", "llm")
    if beta <= 0:
        raise ValueError(f"beta must be positive, got {beta}")
    shapes = {tuple(t.shape) for t in (logp_chosen, logp_rejected, ref_logp_chosen, ref_logp_rejected)}
    if len(shapes) != 1:
        raise ValueError(f"dpo_loss needs four tensors of one shape, got {sorted(shapes)}")
    margin = (logp_chosen - ref_logp_chosen) - (logp_rejected - ref_logp_rejected)
    return -functional.logsigmoid(beta * margin).mean()
