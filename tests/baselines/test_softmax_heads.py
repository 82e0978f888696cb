"""`SoftmaxHeads`' optimizers: plain gradient descent keeps a per-decision weight's magnitude, Adam does not
on a row one decision reaches (why a credit rule's weights barely move a tabular policy trained with Adam)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from papergym.baselines.softmax_grpo import Sample, SoftmaxHeads  # noqa: E402


def _step(optimizer: str, weight: float) -> torch.Tensor:
    heads = SoftmaxHeads({"act": (2, 3)}, lr=0.5, epochs=1, optimizer=optimizer)
    samples = [Sample("", [("act", 0, 1)]), Sample("", [("act", 1, 2)])]
    heads.update(samples, [[1.0], [weight]])  # per-decision advantages: the second row's scaled
    return heads.logits["act"].detach().clone()


def test_sgd_keeps_a_weights_magnitude_and_adam_normalises_it_away() -> None:
    sgd_once, sgd_twice = _step("sgd", 1.0), _step("sgd", 2.0)
    assert torch.equal(sgd_once[0], sgd_twice[0]) and torch.allclose(sgd_twice[1], 2 * sgd_once[1])
    adam_once, adam_twice = _step("adam", 1.0), _step("adam", 2.0)
    assert torch.allclose(adam_once, adam_twice, atol=1e-6)  # Adam's first step is sign(g) · lr
    assert not torch.allclose(adam_once[1], torch.zeros(3))


def test_an_unknown_optimizer_is_refused() -> None:
    with pytest.raises(ValueError, match="optimizer must be one of"):
        SoftmaxHeads({"act": (1, 2)}, optimizer="rmsprop")
