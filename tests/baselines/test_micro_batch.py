"""Micro-batched updates: gradient accumulation over length-sorted micro-batches gives the whole batch's
update (GRPO with every loss normalisation, KL and LUFFY prefix tokens; SFT's cross-entropy; RDPO's DPO
loss)."""

from __future__ import annotations

import copy
import random

import pytest

from papergym.baselines.policy import micro_batches

torch = pytest.importorskip("torch")


def test_micro_batches_group_rows_of_similar_length() -> None:
    lengths = [5, 1, 9, 3, 7]
    assert micro_batches(lengths, 2) == [[1, 3], [0, 4], [2]]
    assert micro_batches(lengths, 1) == [[1], [3], [0], [4], [2]]
    assert micro_batches(lengths, 0) == [[1, 3, 0, 4, 2]]
    assert micro_batches([], 0) == []
    with pytest.raises(ValueError, match=">= 0"):
        micro_batches(lengths, -1)


def _rows(vocab: int, seed: int = 0) -> list[tuple[list[int], list[int], list[int], list[float]]]:
    """GRPO update rows of different lengths: prompt tokens, then on-policy tokens (one row also has
    off-policy prefix tokens), per-token advantages of both signs."""
    rng = random.Random(seed)
    rows = []
    for i, length in enumerate((7, 19, 12, 4, 15)):
        ids = [rng.randrange(10, vocab) for _ in range(length)]
        prompt = 3
        off = [0] * length
        if i == 1:
            off[prompt : prompt + 4] = [1] * 4
        on = [0] * prompt + [0 if off[t] else 1 for t in range(prompt, length)]
        adv = [0.0] * prompt + [rng.uniform(-1, 1)] * (length - prompt)
        rows.append((ids, on, off, adv))
    return rows


def _after_update(tiny_policy, micro_batch: int, norm: str, beta: float, updates: int):
    from papergym.baselines import grpo

    policy = copy.deepcopy(tiny_policy)
    args = grpo.Args(
        env="unused", micro_batch=micro_batch, norm=norm, beta=beta, updates_per_batch=updates, lr=1e-2
    )
    setup = grpo._setup(args)
    reference = copy.deepcopy(policy.model).eval().requires_grad_(False) if beta > 0 else None
    optimizer = torch.optim.SGD(policy.model.parameters(), lr=1.0)
    loss, stats = grpo.update(args, setup, policy, optimizer, reference, _rows(len(policy.tokenizer)))
    return loss, stats, [p.detach().clone() for p in policy.model.parameters()]


@pytest.mark.parametrize(
    ("norm", "beta", "updates"), [("seq", 0.04, 1), ("token", 0.0, 2), ("constant", 0.04, 2)]
)
def test_grpo_micro_batches_give_the_whole_batch_update(tiny_policy, norm, beta, updates) -> None:
    whole_loss, whole_stats, whole = _after_update(tiny_policy, 0, norm, beta, updates)
    start = [p.detach() for p in tiny_policy.model.parameters()]
    assert any(not torch.equal(a, b) for a, b in zip(whole, start, strict=True))  # the update moved
    for micro_batch in (1, 2):
        loss, stats, params = _after_update(tiny_policy, micro_batch, norm, beta, updates)
        assert loss == pytest.approx(whole_loss, rel=1e-4, abs=1e-6)
        assert stats.mean_ratio == pytest.approx(whole_stats.mean_ratio, rel=1e-4)
        assert stats.mean_kl == pytest.approx(whole_stats.mean_kl, rel=1e-3, abs=1e-7)
        for a, b in zip(params, whole, strict=True):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)


def test_sft_micro_batches_give_the_whole_batch_step(tiny_policy) -> None:
    from papergym.baselines import sft
    from papergym.baselines.rollout import Segment

    rng = random.Random(1)
    batch = []
    for length in (9, 21, 5, 14):
        ids = [rng.randrange(10, len(tiny_policy.tokenizer)) for _ in range(length)]
        batch.append(Segment(ids, [0] * 2 + [1] * (length - 2), [0] * length, [0.0] * length))
    results = {}
    for micro_batch in (0, 1, 3):
        policy = copy.deepcopy(tiny_policy)
        optimizer = torch.optim.SGD(policy.model.parameters(), lr=1.0)
        metrics = sft.update(
            policy,
            optimizer,
            batch,
            lr=1.0,
            warmup_steps=0,
            max_grad_norm=1.0,
            step=0,
            micro_batch=micro_batch,
        )
        results[micro_batch] = (metrics, [p.detach().clone() for p in policy.model.parameters()])
    whole_metrics, whole = results[0]
    assert whole_metrics["tokens"] == sum(length - 2 for length in (9, 21, 5, 14))
    for micro_batch in (1, 3):
        metrics, params = results[micro_batch]
        assert metrics["loss"] == pytest.approx(whole_metrics["loss"], rel=1e-5)
        assert metrics["grad_norm"] == pytest.approx(whole_metrics["grad_norm"], rel=1e-4)
        for a, b in zip(params, whole, strict=True):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)


def test_rdpo_micro_batches_give_the_whole_batch_step(tiny_policy) -> None:
    from papergym.baselines import rdpo
    from papergym.credit.feedback import RDPOPair

    history = ({"role": "user", "content": "Question: Where was the director of Tek born?"},)
    pairs = [
        RDPOPair(
            "p", "Search the director Voust by name.", "Answer now.", 0.8, "Where was he born?", history
        ),
        RDPOPair(
            "p2", "Read it.", "Guess the city from the film's title alone.", 0.9, "Which came first?", history
        ),
        RDPOPair("p3", "Look up the film Tek.", "Stop.", 0.7, "Who directed Tek?", history),
    ]
    results = {}
    for micro_batch in (0, 1, 2):
        policy = copy.deepcopy(tiny_policy)
        data = rdpo.encode_pairs(policy, copy.deepcopy(tiny_policy), pairs)
        with torch.no_grad():  # a margin away from 0, so the pairs' losses and gradients differ
            for p in policy.model.parameters():
                p.add_(0.01 * torch.randn(p.shape, generator=torch.Generator().manual_seed(p.numel())))
        optimizer = torch.optim.SGD(policy.model.parameters(), lr=1.0)
        metrics = rdpo.update(rdpo.Args(micro_batch=micro_batch), policy, optimizer, data, [2, 0, 1])
        results[micro_batch] = (metrics, [p.detach().clone() for p in policy.model.parameters()])
    whole_metrics, whole = results[0]
    assert whole_metrics["loss"] != pytest.approx(0.6931, abs=1e-4)
    for micro_batch in (1, 2):
        metrics, params = results[micro_batch]
        for key in ("loss", "margin", "accuracy"):
            assert metrics[key] == pytest.approx(whole_metrics[key], rel=1e-4, abs=1e-6)
        for a, b in zip(params, whole, strict=True):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)
