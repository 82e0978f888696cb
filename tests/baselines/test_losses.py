from __future__ import annotations

import pytest
import torch

from papergym.baselines.losses import (
    clipped_policy_loss,
    dpo_loss,
    group_advantages,
    kl_estimate,
    nonzero_variance_groups,
)


def test_group_advantages_grpo_and_dr_grpo() -> None:
    rewards = torch.tensor([[1.0, 1.0, 1.0, 0.0], [0.5, 0.5, 0.5, 0.5]])
    grpo = group_advantages(rewards)
    assert grpo[0].tolist() == pytest.approx([0.57735, 0.57735, 0.57735, -1.73205], abs=1e-4)
    assert grpo[1].abs().max() == 0  # a zero-variance group teaches nothing
    assert group_advantages(rewards, std_norm=False)[0].tolist() == pytest.approx([0.25, 0.25, 0.25, -0.75])
    sample = group_advantages(rewards, unbiased_std=True)[0]
    assert sample.tolist() == pytest.approx([0.5, 0.5, 0.5, -1.5], abs=1e-4)
    assert nonzero_variance_groups(rewards).tolist() == [True, False]
    with pytest.raises(ValueError):
        group_advantages(torch.zeros(4))


def test_kl_estimators() -> None:
    logp, ref = torch.tensor([-1.0, -2.0, -0.5]), torch.tensor([-1.0, -1.0, -2.0])
    k3 = kl_estimate(logp, ref, "k3")
    r = ref - logp
    assert k3.tolist() == pytest.approx((torch.exp(r) - r - 1).tolist())
    assert k3[0] == 0 and (k3 >= 0).all()
    assert kl_estimate(logp, ref, "k1").tolist() == pytest.approx([0.0, -1.0, 1.5])
    assert kl_estimate(logp, ref, "k2").tolist() == pytest.approx([0.0, 0.5, 1.125])
    with pytest.raises(ValueError):
        kl_estimate(logp, ref, "k4")  # type: ignore[arg-type]


def _batch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    logp = torch.log(torch.tensor([[0.5, 0.5, 0.5], [0.2, 0.2, 0.2]]))
    mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]])  # lengths 3 and 1
    return logp, mask, torch.tensor([1.0, -1.0])


def test_on_policy_loss_is_minus_the_mean_advantage_under_each_normalisation() -> None:
    logp, mask, adv = _batch()
    seq, stats = clipped_policy_loss(logp, logp.clone(), adv, mask, norm="seq")
    assert (
        seq.item() == pytest.approx(-(1.0 + -1.0) / 2) and stats.clip_fraction == 0 and stats.mean_ratio == 1
    )
    token, _ = clipped_policy_loss(logp, logp.clone(), adv, mask, norm="token")
    assert token.item() == pytest.approx(-(3 * 1.0 - 1.0) / 4)  # long sequences are not down-weighted
    const, _ = clipped_policy_loss(logp, logp.clone(), adv, mask, norm="constant", max_length=10)
    assert const.item() == pytest.approx(-(3 * 1.0 - 1.0) / (2 * 10))


def test_clipping_is_asymmetric_and_pessimistic() -> None:
    old = torch.log(torch.tensor([[0.5]]))
    mask = torch.ones(1, 1)
    for ratio, adv, expected in [(1.5, 1.0, -1.28), (0.5, 1.0, -0.5), (1.5, -1.0, 1.5), (0.5, -1.0, 0.8)]:
        logp = old + torch.log(torch.tensor([[ratio]]))
        loss, stats = clipped_policy_loss(logp, old, torch.tensor([adv]), mask, eps_low=0.2, eps_high=0.28)
        assert loss.item() == pytest.approx(expected, abs=1e-5), (ratio, adv)
        assert stats.clip_fraction == 1.0


def test_kl_penalty_gradients_and_errors() -> None:
    logp, mask, adv = _batch()
    logp = logp.clone().requires_grad_(True)
    ref = logp.detach() - 0.3
    loss, stats = clipped_policy_loss(logp, logp.detach(), adv, mask, ref_logp=ref, beta=0.04)
    base, _ = clipped_policy_loss(logp, logp.detach(), adv, mask)
    assert loss.item() > base.item() and stats.mean_kl > 0
    loss.backward()
    assert logp.grad is not None and torch.isfinite(logp.grad).all() and logp.grad[1, 1:].abs().sum() == 0
    per_token_adv = torch.ones(2, 3)
    assert clipped_policy_loss(logp.detach(), logp.detach(), per_token_adv, mask)[0].item() == pytest.approx(
        -1.0
    )
    with pytest.raises(ValueError, match="ref_logp"):
        clipped_policy_loss(logp, logp, adv, mask, beta=0.1)
    with pytest.raises(ValueError, match="max_length"):
        clipped_policy_loss(logp, logp, adv, mask, norm="constant")
    with pytest.raises(ValueError, match="share a shape"):
        clipped_policy_loss(logp, logp[:, :2], adv, mask)


def test_dpo_loss_matches_a_hand_computation() -> None:
    import math

    # pair 1: margin (-1 - -2) - (-3 - -2.5) = 1.5; pair 2: margin (-4 - -4) - (-1 - -2) = -1.0
    chosen, rejected = torch.tensor([-1.0, -4.0]), torch.tensor([-3.0, -1.0])
    ref_chosen, ref_rejected = torch.tensor([-2.0, -4.0]), torch.tensor([-2.5, -2.0])
    beta = 0.5
    hand = (math.log1p(math.exp(-0.75)) + math.log1p(math.exp(0.5))) / 2
    got = dpo_loss(chosen, rejected, ref_chosen, ref_rejected, beta=beta)
    assert got.item() == pytest.approx(hand, rel=1e-6)
    # equal policy and reference: loss log 2 regardless of beta
    assert dpo_loss(chosen, rejected, chosen, rejected).item() == pytest.approx(math.log(2.0))
    with pytest.raises(ValueError):
        dpo_loss(chosen, rejected, ref_chosen, torch.zeros(3))
