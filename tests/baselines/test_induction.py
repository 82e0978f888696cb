"""Induction pre-training: its synthetic copy examples (deterministic, loss only where the context decides
the token) and its trainer end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("transformers")

from papergym.baselines import induction


def _contains(doc: list[int], span: list[int]) -> bool:
    return any(doc[i : i + len(span)] == span for i in range(len(doc) - len(span) + 1))


def test_examples_are_seeded_and_every_trained_token_continues_a_span_of_the_document(tiny_policy) -> None:
    maker = induction.ExampleMaker(tiny_policy.tokenizer, min_length=48, max_length=96)
    special = set(tiny_policy.tokenizer.all_special_ids)
    for seed in range(60):
        ex = maker.make(seed)
        assert ex == maker.make(seed)
        assert len(ex.token_ids) == len(ex.loss_mask) == len(ex.forced_mask)
        doc_end = ex.token_ids.index(maker.newline)
        doc = ex.token_ids[:doc_end]
        assert len(doc) >= 24 and not special & set(ex.token_ids)
        assert not any(ex.loss_mask[: doc_end + 1])  # nothing in the document is trained
        lines = ex.token_ids[doc_end + 1 :]
        masks = ex.loss_mask[doc_end + 1 :]
        start = 0
        for i, t in enumerate(lines):
            if t == maker.newline:
                span = lines[start:i]
                assert _contains(doc, span), "a copy must repeat a span of the document"
                assert masks[start:i] == [0] + [1] * (len(span) - 1) and masks[i] == 0
                start = i + 1
    assert maker.make(0) != maker.make(1)
    repeats = [ex for ex in map(maker.make, range(40)) if ex.token_ids.count(maker.newline) == 2]
    assert 5 < len(repeats) < 35  # about half repeat the whole document
    with pytest.raises(ValueError, match="repeat_share"):
        induction.ExampleMaker(tiny_policy.tokenizer, min_length=48, max_length=96, repeat_share=1.5)
    tokens = maker.make(3).token_ids
    digit_share = sum(t in set(maker.digits.tolist()) for t in tokens) / len(tokens)
    assert digit_share > 0.2  # ids are what the envs' policies must copy


def test_bad_lengths_raise(tiny_policy) -> None:
    with pytest.raises(ValueError, match="min_length"):
        induction.ExampleMaker(tiny_policy.tokenizer, min_length=64, max_length=32)


def test_the_trainer_lowers_the_copy_loss_and_saves_a_loadable_model(tiny_dir: Path, tmp_path: Path) -> None:
    from papergym.baselines.policy import load_policy

    args = induction.Args(
        model=str(tiny_dir),
        out=str(tmp_path / "run"),
        steps=30,
        batch_size=8,
        max_length=96,
        lr=3e-3,
        warmup_steps=5,
        eval_examples=8,
        progress=False,
        checkpoint_every=0,
    )
    result = induction.main(args)
    log = (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()
    losses = [json.loads(line)["loss"] for line in log]
    assert len(losses) == 30
    assert sum(losses[-5:]) / 5 < sum(losses[:5]) / 5 - 0.5
    assert 0.0 <= result["copy_accuracy_before"] <= 1.0 and 0.0 <= result["copy_accuracy_after"] <= 1.0
    load_policy(tmp_path / "run" / "final")
