"""Induction pre-training: a fresh tiny LM learns to copy spans out of its context before any SFT.

Why: a real LM arrives at RL able to copy an order id or a user id from its prompt into a tool call (its
pretraining grew induction heads); the tiny LM built in code does not. SFT on a service env's
demonstrations alone does not teach it: on ``VoiceService-v0`` (simulated channel) the SFT-warmed tiny LM
predicts the demonstrations' action tokens well but their digits at near chance (benchmarks/README.md,
"Tiny-LM copying and induction pre-training"), so every multi-step episode breaks at the first id it
must repeat.

The data are synthetic and cheap: a random "document" of words (runs of 3-10 digits, like ids, or 1-3
random vocabulary tokens) followed by copies of a few of its spans, each on its own line, or (half the
examples) by the whole document again; the loss is on every copied token after a span's first (the first
one is a free choice, the rest follow from the context). Nothing of any env enters (no leak into any
reproduction's measure). Run it with ``papergym train induction --out runs/induction`` and SFT from
``runs/induction/final``.

Measured (benchmarks/README.md, "Tiny-LM copying and induction pre-training"): the defaults learn to copy
the synthetic documents (held-out copy accuracy 0.02 -> 0.52), but that does not transfer: SFT on
``VoiceService-v0`` from the induction model copies digits and argument values *worse* than SFT from a
fresh one at every checkpoint to 400 steps. It stays an option (``induction_steps``, default 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from papergym.baselines import sft
from papergym.baselines.policy import PolicyModel, load_policy, pad_right
from papergym.baselines.rollout import Segment
from papergym.baselines.run import RunDirArgs, start_run
from papergym.core.errors import require
from papergym.core.trajectory import member_seed

DIGIT_RUN = (3, 10)
"""Length range of a digit word (inferred: tau2's ids are 7 digits, flight numbers 3-4)."""
DIGIT_SHARE = 0.3
"""The chance a document word is a digit run (inferred)."""
SPAN_TOKENS = (4, 24)
"""Length range of a copied span, in tokens (inferred: an id with its key, a short phrase)."""
COPIES = (1, 4)
"""Copied spans per example (inferred)."""
REPEAT_SHARE = 0.5
"""The chance an example repeats its whole (half-length) document instead of copying spans (inferred:
the dense signal of the classic induction-head task, which a tiny LM picks up sooner)."""


@dataclass
class Args(RunDirArgs):
    """Induction pre-training of a fresh tiny LM (copy spans out of the context)."""

    model: str = "tiny"
    """"tiny" (a fresh tiny Qwen2 built in code) or a local checkpoint directory."""
    device: str = "cpu"
    """The torch device."""
    out: str = "runs/induction"
    """The run directory (metrics.jsonl, checkpoints/, final/, curves.png)."""
    steps: int = 3000
    """Optimizer steps (measured: the copy loss stays flat for ~2,000 steps of 32, then falls)."""
    batch_size: int = 32
    """Examples per step."""
    min_length: int = 16
    """Shortest document, in tokens."""
    max_length: int = 128
    """Longest document, in tokens (the copies come after it; 512 stayed flat for 1,100 steps)."""
    lr: float = 2e-3
    """AdamW learning rate (a from-scratch tiny model)."""
    warmup_steps: int = 50
    """Linear learning-rate warm-up steps."""
    max_grad_norm: float = 1.0
    """Gradient clipping norm."""
    repeat_share: float = REPEAT_SHARE
    """The share of examples that repeat their whole document (the rest copy a few spans)."""
    eval_examples: int = 64
    """Held-out examples (another seed stream) for the copy accuracy at the end (0: skip)."""


class ExampleMaker:
    """Random copy examples in ``policy``'s vocabulary; ``make(seed)`` is a pure function of the seed."""

    def __init__(
        self, tokenizer: Any, *, min_length: int, max_length: int, repeat_share: float = REPEAT_SHARE
    ) -> None:
        if not 8 <= min_length <= max_length:
            raise ValueError(f"need 8 <= min_length <= max_length, got {min_length}, {max_length}")
        self.digits = np.array([tokenizer.convert_tokens_to_ids(d) for d in "0123456789"])
        newline = tokenizer.encode("\n", add_special_tokens=False)
        if len(newline) != 1 or len(set(self.digits.tolist())) != 10:
            raise ValueError("the tokenizer must encode a newline and each digit as one token")
        self.newline = int(newline[0])
        # the document's words: any token but the specials and the line separator
        excluded = {*tokenizer.all_special_ids, self.newline}
        self.pool = np.array([i for i in range(len(tokenizer)) if i not in excluded])
        if not 0.0 <= repeat_share <= 1.0:
            raise ValueError(f"repeat_share must be in [0, 1], got {repeat_share}")
        self.min_length, self.max_length, self.repeat_share = min_length, max_length, repeat_share

    def make(self, seed: int) -> Segment:
        """One example: document, then each copy on a new line; loss on each copy after its first token."""
        rng = np.random.default_rng(seed)
        target = int(rng.integers(self.min_length, self.max_length + 1))
        repeat = rng.random() < self.repeat_share
        if repeat:
            target = max(self.min_length // 2, target // 2)
        doc: list[int] = []
        starts: list[int] = []  # word boundaries: spans start there, as an id or a key would
        while len(doc) < target:
            starts.append(len(doc))
            if rng.random() < DIGIT_SHARE:
                run_length = int(rng.integers(DIGIT_RUN[0], DIGIT_RUN[1] + 1))
                doc.extend(rng.choice(self.digits, run_length).tolist())
            else:
                doc.extend(rng.choice(self.pool, int(rng.integers(1, 4))).tolist())
        ids = [*doc, self.newline]
        mask = [0] * len(ids)
        spans = [doc] if repeat else []
        for _ in range(0 if repeat else int(rng.integers(COPIES[0], COPIES[1] + 1))):
            start = int(rng.choice(starts))
            spans.append(doc[start : start + int(rng.integers(SPAN_TOKENS[0], SPAN_TOKENS[1] + 1))])
        for span in spans:
            ids.extend([*span, self.newline])
            mask.extend([0, *[1] * (len(span) - 1), 0])
        return Segment(token_ids=ids, loss_mask=mask, forced_mask=[0] * len(ids), logprobs=[0.0] * len(ids))


def copy_accuracy(policy: PolicyModel, examples: list[Segment], *, batch: int = 16) -> float:
    """Teacher-forced greedy accuracy on the loss-masked (copied) tokens of ``examples``."""
    torch = require("torch", "llm")
    right = total = 0
    policy.model.eval()
    with torch.no_grad():
        for i in range(0, len(examples), batch):
            chunk = examples[i : i + batch]
            ids, attn = pad_right([c.token_ids for c in chunk], policy.pad_id, device=policy.device)
            mask, _ = pad_right([c.loss_mask for c in chunk], 0, device=policy.device)
            logits = policy.model(input_ids=ids, attention_mask=attn).logits[:, :-1]
            hit = (logits.argmax(-1) == ids[:, 1:]) & (mask[:, 1:] > 0)
            right += int(hit.sum())
            total += int(mask[:, 1:].sum())
    return right / max(1, total)


def main(args: Args) -> dict[str, Any]:
    """Train on fresh examples every step; save ``out/final``; returns the loss and held-out copy accuracy."""
    require("torch", "llm")  # the install hint before any work
    run = start_run(args, total_steps=args.steps, desc="induction")
    policy = load_policy(run.checkpoint_model_path or args.model, device=args.device)
    maker = ExampleMaker(
        policy.tokenizer,
        min_length=args.min_length,
        max_length=args.max_length,
        repeat_share=args.repeat_share,
    )
    held_out = [maker.make(member_seed(args.seed + 1, 10**8 + i)) for i in range(args.eval_examples)]
    result: dict[str, Any] = {}
    if held_out:
        result["copy_accuracy_before"] = copy_accuracy(policy, held_out)

    def batch_at(step: int) -> list[Segment]:
        first = step * args.batch_size  # fresh examples every step, the same ones on a resumed run
        return [maker.make(member_seed(args.seed, first + j)) for j in range(args.batch_size)]

    metrics = sft.fit(
        run,
        policy,
        batch_at,
        steps=args.steps,
        lr=args.lr,
        warmup_steps=args.warmup_steps,
        max_grad_norm=args.max_grad_norm,
    )
    result["loss"] = metrics["loss"]
    if held_out:
        result["copy_accuracy_after"] = copy_accuracy(policy, held_out)
    run.finish(policy.model, policy.tokenizer)
    result["out"] = str(run.out)
    return result
