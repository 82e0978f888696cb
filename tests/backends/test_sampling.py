"""One generation core: `HFChatModel` and the trainers' policy sample through
`papergym.backends.sampling.generate`, so the same request and seed give the same output through either."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

from papergym.backends.hf import HFChatModel  # noqa: E402
from papergym.backends.sampling import generate  # noqa: E402
from papergym.baselines.policy import PolicyModel, load_policy, sample  # noqa: E402

REQUESTS = [
    [{"role": "user", "content": "hi hi hi"}],
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 2 + 2?"}],
    [{"role": "user", "content": "count: one two three four five six"}],
]


@pytest.fixture(scope="module")
def both(tiny_checkpoint: Path) -> tuple[HFChatModel, PolicyModel]:
    return HFChatModel(tiny_checkpoint), load_policy(tiny_checkpoint)


@pytest.mark.parametrize("temperature", [0.0, 1.0, 1.7])
def test_the_same_request_and_seed_give_the_same_text_through_either_path(
    both: tuple[HFChatModel, PolicyModel], temperature: float
) -> None:
    chat, policy = both
    seeds = [5, 6, 7]
    replies = chat.chat_batch(REQUESTS, seeds=seeds, max_tokens=24, temperature=temperature)
    prompts = [policy.encode_chat(m) for m in REQUESTS]
    out = sample(policy, prompts, row_seeds=seeds, max_new_tokens=24, temperature=temperature)
    assert [policy.decode(t) for t in out.tokens] == replies and any(replies)
    alone = [
        chat.chat(m, seed=s, max_tokens=24, temperature=temperature)
        for m, s in zip(REQUESTS, seeds, strict=True)
    ]
    assert alone == replies
    if temperature > 0:  # the seed matters, so the match above is not a greedy coincidence
        other = sample(policy, prompts, row_seeds=[8, 9, 10], max_new_tokens=24, temperature=temperature)
        assert other.tokens != out.tokens


def test_rows_at_different_temperatures_sample_as_they_would_alone(
    both: tuple[HFChatModel, PolicyModel],
) -> None:
    chat, policy = both
    prompts = [policy.encode_chat(m) for m in REQUESTS]
    common: dict[str, Any] = dict(pad_id=policy.pad_id, stop_ids=policy.stop_ids, max_new_tokens=12)
    mixed = generate(chat.model, prompts, seeds=[1, 2, 3], temperature=[0.0, 1.0, 1.5], **common)
    for i, t in enumerate([0.0, 1.0, 1.5]):
        alone = generate(chat.model, [prompts[i]], seeds=[i + 1], temperature=t, **common)
        assert alone.tokens[0] == mixed.tokens[i]


def test_generate_leaves_the_global_generator_and_training_mode_alone(
    both: tuple[HFChatModel, PolicyModel],
) -> None:
    _, policy = both
    model = policy.model
    model.train()
    state = torch.random.get_rng_state()
    generate(
        model, [[1, 2, 3]], pad_id=0, stop_ids=frozenset(), seeds=[None], max_new_tokens=4, temperature=1.0
    )
    assert torch.equal(torch.random.get_rng_state(), state) and model.training
    model.eval()
