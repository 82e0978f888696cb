"""RDPO (`papergym.baselines.rdpo`): DPO on the critic role's feedback raises the chosen-over-rejected
margin, trains on the critic's own input, and runs end to end from given pairs or its own rollouts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from papergym.baselines import rdpo
from papergym.baselines.policy import load_policy
from papergym.credit.feedback import RDPOPair
from papergym.envs.search.critic import CAFE_CRITIC_SYSTEM


def _pairs() -> list[RDPOPair]:
    history = ({"role": "user", "content": "Question: Where was the director of Tek born?"},)
    return [
        RDPOPair(
            "p",
            "Search the director Voust by name.",
            "Answer now.",
            0.8,
            "Where was Tek's director born?",
            history,
        ),
        RDPOPair(
            "p2", "Read the film passage first.", "Guess the city.", 0.9, "Which film came first?", history
        ),
    ]


def test_critic_context_is_cafes_critic_prompt_over_the_successful_history() -> None:
    pair = _pairs()[0]
    messages = rdpo.critic_context(pair)
    assert messages[0] == {"role": "system", "content": CAFE_CRITIC_SYSTEM}
    assert "<query>Where was Tek's director born?</query>" in messages[1]["content"]
    assert "[user] Question: Where was the director of Tek born?" in messages[1]["content"]
    bare = RDPOPair("just a prompt", "a", "b", 1.0)
    assert rdpo.critic_context(bare) == [{"role": "user", "content": "just a prompt"}]


def test_one_update_raises_the_chosen_over_rejected_margin(tiny_policy) -> None:
    import copy

    import torch

    reference = copy.deepcopy(tiny_policy)
    data = rdpo.encode_pairs(tiny_policy, reference, _pairs())
    rows = [0, 1]
    with torch.no_grad():
        before = rdpo.margin(tiny_policy, data, rows)
    assert torch.allclose(before, torch.zeros(2), atol=1e-4)  # the policy starts at its reference
    optimizer = torch.optim.AdamW(tiny_policy.model.parameters(), lr=1e-3, weight_decay=0.0)
    metrics = rdpo.update(rdpo.Args(), tiny_policy, optimizer, data, rows)
    with torch.no_grad():
        after = rdpo.margin(tiny_policy, data, rows)
    assert metrics["loss"] == pytest.approx(0.6931, abs=1e-3)  # -log σ(0) on the first step
    assert float(after.mean()) > float(before.mean()) + 1e-3
    with torch.no_grad():  # the reference stays frozen
        assert torch.allclose(rdpo.sequence_logprobs(reference, data.prompts, data.chosen), data.ref_chosen)


def test_main_trains_on_given_pairs_and_writes_a_run(tiny_dir: Path, tmp_path: Path) -> None:
    args = rdpo.Args(model=str(tiny_dir), out=str(tmp_path / "rdpo"), epochs=2, batch_size=1, lr=1e-3,
                     progress=False)  # fmt: skip
    result = rdpo.main(args, pairs=_pairs())
    assert result["pairs"] == 2
    records = [json.loads(line) for line in (tmp_path / "rdpo" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [0, 1, 2, 3] and [r["epoch"] for r in records] == [0, 0, 1, 1]
    assert records[-1]["margin"] > records[0]["margin"]  # the second epoch sees the first one's gain
    trained = load_policy(tmp_path / "rdpo" / "final")
    data = rdpo.encode_pairs(trained, load_policy(tiny_dir), _pairs())
    import torch

    with torch.no_grad():
        assert float(rdpo.margin(trained, data, [0, 1]).mean()) > 0


def test_main_collects_its_own_rollouts_and_survives_no_pairs(tiny_dir: Path, tmp_path: Path) -> None:
    args = rdpo.Args(
        model=str(tiny_dir),
        out=str(tmp_path / "rdpo"),
        env_kw=["n_passages=500"],
        prompts=1,
        group_size=2,
        max_new_tokens=4,
        max_turns=2,
        critic_tokens=4,
        progress=False,
    )
    result = rdpo.main(args)
    assert result["pairs"] == 0 and "first" not in result  # a random model never requests feedback
    assert (tmp_path / "rdpo" / "final" / "config.json").exists()


def test_bad_arguments_name_the_fix(tiny_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="batch_size >= 1"):
        rdpo.main(rdpo.Args(model=str(tiny_dir), out=str(tmp_path), batch_size=0), pairs=[])
