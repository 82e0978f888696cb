"""Train a tiny LM as a GUI world model (WM-R1's learned world model, in miniature).

The data are MobileGUI-v0's own transitions, (screen, action) -> next screen, from oracle play with random
actions mixed in, on the train split and the default layout only
(`papergym.envs.mobile_gui.learned_wm.collect_transitions`). The model is a tiny Qwen2 with a BPE
tokenizer trained on those texts (`papergym.baselines.tiny`); it learns, by cross-entropy on the target
tokens only (as `papergym.baselines.sft`), to write the next screen as a diff of the current one
(`learned_wm.encode_diff`). `load_world_model` serves the result as a `WorldModel` for
``gym.make("papergym/WorldModelGUI-v0", world_model=...)``: no real simulator call during an episode.

Run it with ``main(Args(out="runs/wm", seed=0, steps=...))`` or ``papergym train world_model --out runs/wm``;
``out/final/`` holds the model, ``out/world_model.json`` the arguments and the next-screen accuracy when
``eval_transitions > 0``. Same seed and budget, same model (CPU, one thread).
"""

from __future__ import annotations

import dataclasses
import json
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from papergym.baselines import sft
from papergym.baselines.policy import PolicyModel, load_policy, wrap_policy
from papergym.baselines.rollout import Segment
from papergym.baselines.run import RunArgs, start_run
from papergym.baselines.tiny import IM_END, IM_START, build_tiny
from papergym.core.errors import require
from papergym.core.trajectory import member_seed
from papergym.envs.mobile_gui.learned_wm import (
    LearnedWorldModel,
    collect_transitions,
    next_screen_accuracy,
    training_pair,
)


@dataclass
class Args(RunArgs):
    """Training a tiny LM world model on the GUI simulator's transitions."""

    env: str = "papergym/MobileGUI-v0"
    """The simulator whose transitions are learned (its train split, default layout; the only one)."""
    out: str = "runs/world_model"
    """The run directory (metrics.jsonl, checkpoints/, final/, curves.png, world_model.json)."""
    episodes: int = 300
    """Train-split MobileGUI-v0 episodes played for transitions (default layout)."""
    random_rate: float = 0.3
    """The chance per step of a random action instead of the oracle's (inferred)."""
    keep_unchanged: float = 0.35
    """The share of "no change" transitions kept for training (inferred): they are a third of all, and
    left in full a small model learns to predict no change whatever the action."""
    steps: int = 500
    """Optimizer steps (the default takes ~5-10 minutes on 2 busy CPU cores)."""
    batch_size: int = 8
    """Transitions per step."""
    lr: float = 3e-3
    """AdamW learning rate (a from-scratch tiny model needs a large one)."""
    warmup_steps: int = 30
    """Linear learning-rate warm-up steps."""
    max_grad_norm: float = 1.0
    """Gradient clipping norm."""
    hidden: int = 128
    """The model's hidden size."""
    layers: int = 4
    """Transformer layers."""
    vocab_size: int = 2048
    """The BPE vocabulary, trained on the transitions' texts."""
    max_len: int = 1024
    """Transitions longer than this many tokens are left out of training."""
    eval_transitions: int = 0
    """Test-split transitions per layout (default, heldout) that measure next-screen accuracy after
    training (0: skip); from oracle-and-random play as the training data, on test tasks."""
    max_tokens: int = 512
    """The token budget of one prediction at evaluation (above the ~180-token mean diff)."""
    device: str = "cpu"
    """The torch device."""


def training_pairs(args: Args) -> list[tuple[list[Any], str]]:
    """The (prompt messages, target diff) pairs: train-split transitions, "no change" ones thinned."""
    if args.env != "papergym/MobileGUI-v0":
        raise ValueError(f"the world model learns papergym/MobileGUI-v0's transitions, not {args.env!r}")
    transitions = collect_transitions(episodes=args.episodes, seed=args.seed, random_rate=args.random_rate)
    thin = random.Random(member_seed(args.seed, 1))
    transitions = [t for t in transitions if t.screen != t.next_screen or thin.random() < args.keep_unchanged]
    return [training_pair(t) for t in transitions]


def fresh_model(args: Args, pairs: Sequence[tuple[list[Any], str]]) -> PolicyModel:
    """A tiny Qwen2 whose BPE tokenizer is trained on the pairs' chat texts (deterministic in the seed)."""
    texts = [
        f"{IM_START}user\n{m[-1]['content']}{IM_END}\n{IM_START}assistant\n{target}{IM_END}\n"
        for m, target in pairs
    ]
    model, tok = build_tiny(
        hidden=args.hidden,
        layers=args.layers,
        heads=4,
        kv_heads=2,
        context=args.max_len + 512,
        vocab_size=args.vocab_size,
        seed=args.seed,
        texts=texts,
    )
    model.to(args.device)
    return wrap_policy(model, tok)


def tokenized_examples(
    policy: PolicyModel, pairs: Sequence[tuple[list[Any], str]], max_len: int
) -> list[Segment]:
    """Each pair as one context with the loss on the target's tokens, those of at most ``max_len`` tokens,
    sorted by length (a batch of neighbours has little padding)."""
    examples: list[Segment] = []
    for messages, target in pairs:
        prompt = policy.encode_chat(messages)
        reply = policy.encode(target + IM_END)
        if len(prompt) + len(reply) <= max_len:
            examples.append(Segment(prompt + reply, [0] * len(prompt) + [1] * len(reply)))
    if not examples:
        raise ValueError(f"no transition fits max_len={max_len} tokens")
    return sorted(examples, key=lambda e: len(e.token_ids))


def batch_at(examples: Sequence[Segment], step: int, args: Args) -> Sequence[Segment]:
    """The step's batch: ``batch_size`` length-neighbours from a position drawn by the step's own seed."""
    rng = random.Random(member_seed(args.seed, 10**7 + step))
    first = rng.randrange(max(1, len(examples) - args.batch_size + 1))
    return examples[first : first + args.batch_size]


def main(args: Args) -> dict[str, Any]:
    """Collect transitions, train, save ``out/final``; returns the metrics (and accuracies if asked)."""
    require("torch", "llm")  # the install hint before any work
    start = time.perf_counter()
    run = start_run(args, total_steps=args.steps, desc="world model")
    pairs = training_pairs(args)
    resumed = run.checkpoint_model_path
    policy = load_policy(resumed, device=args.device) if resumed else fresh_model(args, pairs)
    examples = tokenized_examples(policy, pairs, args.max_len)
    collected = time.perf_counter() - start
    metrics = sft.fit(
        run,
        policy,
        lambda step: batch_at(examples, step, args),
        steps=args.steps,
        lr=args.lr,
        warmup_steps=args.warmup_steps,
        max_grad_norm=args.max_grad_norm,
    )
    policy.model.eval()
    run.finish(policy.model, policy.tokenizer)
    result: dict[str, Any] = {
        "loss": metrics["loss"],
        "transitions": len(pairs),
        "examples": len(examples),
        "collect_seconds": collected,
        "train_seconds": time.perf_counter() - start - collected,
        "parameters": sum(p.numel() for p in policy.model.parameters()),
    }
    if args.eval_transitions:
        result |= evaluate(run.out, args)
        result["eval_seconds"] = time.perf_counter() - start - collected - result["train_seconds"]
    result["out"] = str(run.out)
    (run.out / "world_model.json").write_text(
        json.dumps({"args": dataclasses.asdict(args), "result": result}, indent=2), encoding="utf-8"
    )
    return result


def evaluate(out: Path, args: Args) -> dict[str, Any]:
    """Next-screen accuracy of the run's final model on ``eval_transitions`` test transitions per layout."""
    wm = load_world_model(out, device=args.device, max_tokens=args.max_tokens)
    return {
        f"accuracy_{layout}": next_screen_accuracy(
            wm,
            measurement_transitions(args.eval_transitions, layout, args.seed, args.random_rate),
            seed=args.seed,
        )
        for layout in ("default", "heldout")
    }


def measurement_transitions(n: int, layout: str, seed: int, random_rate: float = 0.3) -> list[Any]:
    """``n`` test-split transitions on ``layout`` (the first ``n`` of oracle-and-random play from seed
    ``10**6 + seed``, one episode per ~6 transitions)."""
    out = collect_transitions(
        episodes=max(1, -(-n // 6)), seed=10**6 + seed, split="test", layout=layout, random_rate=random_rate
    )
    return out[:n]


def load_world_model(path: str | Path, *, device: str = "cpu", max_tokens: int = 768) -> LearnedWorldModel:
    """The `LearnedWorldModel` of a run directory written by `main` (its ``final/``) or of a checkpoint
    directory; for ``gym.make("papergym/WorldModelGUI-v0", world_model=load_world_model(path))``."""
    from papergym.backends.hf import HFChatModel

    root = Path(path)
    if (root / "final").is_dir():
        root = root / "final"
    return LearnedWorldModel(HFChatModel(root, device=device), max_tokens=max_tokens)
