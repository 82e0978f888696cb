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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from papergym.baselines.policy import pad_right, token_logprobs, wrap_policy
from papergym.baselines.run import Run, set_threads
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
class Args:
    """Training a tiny LM world model on the GUI simulator's transitions."""

    out: str = "runs/world_model"
    """The run directory (metrics.jsonl, final/, curves.png, world_model.json)."""
    seed: int = 0
    """The run seed: the episodes played, the weights' init and the batch order derive from it."""
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
    threads: int = 1
    """Torch CPU threads (0: torch's default; one is often fastest on a busy 2-core machine)."""
    device: str = "cpu"
    """The torch device."""
    progress: bool = True
    """Show a tqdm progress bar."""


def main(args: Args) -> dict[str, Any]:
    """Collect transitions, train, save ``out/final``; returns the metrics (and accuracies if asked)."""
    torch = require("torch", "llm")
    set_threads(args.threads)
    start = time.perf_counter()
    transitions = collect_transitions(episodes=args.episodes, seed=args.seed, random_rate=args.random_rate)
    thin = random.Random(member_seed(args.seed, 1))
    transitions = [t for t in transitions if t.screen != t.next_screen or thin.random() < args.keep_unchanged]
    pairs = [training_pair(t) for t in transitions]
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
    policy = wrap_policy(model, tok)
    examples: list[tuple[list[int], list[int]]] = []
    for messages, target in pairs:
        prompt = policy.encode_chat(messages)
        reply = policy.encode(target + IM_END)
        if len(prompt) + len(reply) <= args.max_len:
            examples.append((prompt + reply, [0] * len(prompt) + [1] * len(reply)))
    if not examples:
        raise ValueError(f"no transition fits max_len={args.max_len} tokens")
    examples.sort(key=lambda e: len(e[0]))  # batches of neighbours in length: little padding
    collected = time.perf_counter() - start
    run = Run(args.out, total_steps=args.steps, progress=args.progress, desc="world model")
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    model.train()
    loss_value = float("nan")
    for step in range(args.steps):
        rng = random.Random(member_seed(args.seed, 10**7 + step))  # a private generator per step
        first = rng.randrange(max(1, len(examples) - args.batch_size + 1))
        batch = examples[first : first + args.batch_size]
        ids, attn = pad_right([b[0] for b in batch], policy.pad_id, device=policy.device)  # (B, L)
        mask, _ = pad_right([b[1] for b in batch], 0, device=policy.device)  # (B, L)
        for group in optimizer.param_groups:
            group["lr"] = args.lr * min(1.0, (step + 1) / max(1, args.warmup_steps))
        logp = token_logprobs(model, ids, attn)  # (B, L)
        weights = mask.to(logp.dtype)
        loss = -(logp * weights).sum() / weights.sum().clamp(min=1.0)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
        optimizer.step()
        loss_value = float(loss.detach())
        run.log(step, {"loss": loss_value, "seconds": time.perf_counter() - start})
    model.eval()
    run.finish(model, tok)
    result: dict[str, Any] = {
        "loss": loss_value,
        "transitions": len(transitions),
        "examples": len(examples),
        "collect_seconds": collected,
        "train_seconds": time.perf_counter() - start - collected,
        "parameters": sum(p.numel() for p in model.parameters()),
    }
    if args.eval_transitions:
        wm = load_world_model(run.out, device=args.device, max_tokens=args.max_tokens)
        for layout in ("default", "heldout"):
            result[f"accuracy_{layout}"] = next_screen_accuracy(
                wm,
                measurement_transitions(args.eval_transitions, layout, args.seed, args.random_rate),
                seed=args.seed,
            )
        result["eval_seconds"] = time.perf_counter() - start - collected - result["train_seconds"]
    result["out"] = str(run.out)
    (run.out / "world_model.json").write_text(
        json.dumps({"args": dataclasses.asdict(args), "result": result}, indent=2), encoding="utf-8"
    )
    return result


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
