"""The tiny-LM copying benchmark scores each action category from the true prefix, and an oracle scores 1."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

from papergym.baselines.policy import load_policy  # noqa: E402
from papergym.baselines.rollout import Segment  # noqa: E402


@pytest.fixture
def bench(benchmark_module):
    return benchmark_module("tiny_copying")


def test_action_runs_are_the_loss_mask_runs(bench) -> None:
    seg = Segment(token_ids=list(range(8)), loss_mask=[0, 1, 1, 0, 0, 1, 0, 1])
    assert bench.action_runs(seg) == [(1, 3), (5, 6), (7, 8)]


class _Oracle(torch.nn.Module):
    """Predicts each segment's next token exactly (the segments are registered before use)."""

    def __init__(self, vocab: int, segments: list[Segment]) -> None:
        super().__init__()
        self.device_anchor = torch.nn.Parameter(torch.zeros(1))  # PolicyModel.device reads a parameter
        self.vocab = vocab
        self.next = {tuple(s.token_ids): [*s.token_ids[1:], 0] for s in segments}

    def forward(self, input_ids):
        following = torch.tensor([self.next[tuple(input_ids[0].tolist())]])
        return SimpleNamespace(logits=torch.nn.functional.one_hot(following, self.vocab).float())


def test_an_oracle_scores_one_and_a_fresh_model_does_not(bench) -> None:
    policy = load_policy("tiny")
    segments = bench.held_out_segments(policy, 1)
    fresh = bench.accuracies(policy, segments)
    assert set(fresh) == set(bench.CATEGORIES)
    tokens, digits, values = fresh["tokens"][1], fresh["digits"][1], fresh["values"][1]
    assert 0 < digits < tokens and 0 < values < tokens  # the demo copies ids and names into its calls
    assert fresh["actions"][1] == sum(len(bench.action_runs(s)) for s in segments)
    assert fresh["actions"][0] < 0.5  # an untrained model gets few whole actions right
    oracle = dataclasses.replace(policy, model=_Oracle(len(policy.tokenizer), segments))
    assert all(acc == 1.0 for acc, _ in bench.accuracies(oracle, segments).values())


def test_value_tokens_are_those_inside_quoted_argument_values(bench) -> None:
    inside = '<tool_call>{"name": "find_user_id_by_email", "arguments": {"email": "ava@'
    assert bench._IN_VALUE.search(inside)
    assert not bench._IN_VALUE.search(inside + 'x.com", "')
    assert not bench._IN_VALUE.search('<tool_call>{"name": "find_us')
