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


def test_the_scored_actions_are_exactly_the_trained_tokens(bench) -> None:
    # the spans the benchmark scores are the demonstrator's actions: the tokens SFT trains on, no others
    (episode,) = bench.held_out_episodes(load_policy("tiny"), 1)
    in_span = [[0] * len(s.token_ids) for s in episode.segments]
    for span in episode.spans:
        in_span[span.segment][span.start : span.end] = [1] * span.length
    assert episode.spans and in_span == [s.loss_mask for s in episode.segments]


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
    episodes = bench.held_out_episodes(policy, 1)
    segments = [s for e in episodes for s in e.segments]
    fresh = bench.accuracies(policy, episodes)
    assert set(fresh) == set(bench.CATEGORIES)
    tokens, digits, values = fresh["tokens"][1], fresh["digits"][1], fresh["values"][1]
    assert 0 < digits < tokens and 0 < values < tokens  # the demo copies ids and names into its calls
    assert fresh["actions"][1] == sum(len(e.spans) for e in episodes)
    assert fresh["actions"][0] < 0.5  # an untrained model gets few whole actions right
    oracle = dataclasses.replace(policy, model=_Oracle(len(policy.tokenizer), segments))
    assert all(acc == 1.0 for acc, _ in bench.accuracies(oracle, episodes).values())


def test_value_tokens_are_those_inside_quoted_argument_values(bench) -> None:
    inside = '<tool_call>{"name": "find_user_id_by_email", "arguments": {"email": "ava@'
    assert bench._IN_VALUE.search(inside)
    assert not bench._IN_VALUE.search(inside + 'x.com", "')
    assert not bench._IN_VALUE.search('<tool_call>{"name": "find_us')


def test_any_text_env_with_its_own_oracle_can_be_scored(bench) -> None:
    # MemoryQA-v0's oracle copies facts off the page into its memory: digit tokens in the scored actions
    policy = load_policy("tiny")
    kw = ["pages=[3, 3]", "difficulty=1", "kind=annual_report", "max_episode_steps=8"]
    episodes = bench.held_out_episodes(
        policy, 2, env_id="papergym/MemoryQA-v0", env_kw=kw, demonstrator_spec=None
    )
    actions = [
        policy.tokenizer.decode(e.segments[s.segment].token_ids[s.start : s.end])
        for e in episodes
        for s in e.spans
    ]
    assert actions and all("<memory>" in a or "<answer>" in a for a in actions)
    acc = bench.accuracies(policy, episodes)
    assert acc["actions"][1] == len(actions) and acc["values"][1] == 0  # no tool calls, no argument values
