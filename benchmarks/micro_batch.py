"""Micro-batching the trainers' updates: one padded pass over a batch vs length-sorted micro-batches.

`papergym.baselines.grpo` and `papergym.baselines.sft` accumulate gradients over ``micro_batch`` rows per
forward/backward pass (rows of similar length together; the update equals the whole batch's,
tests/baselines/test_micro_batch.py). This measures one update's wall time per setting on real contexts:
the oracle's demonstration contexts of two envs (their lengths vary the way rollouts' do), the default
tiny LM, the same batch for every setting, in one process; the ratios to ``micro_batch=0`` (one padded
pass) are the result.

    python benchmarks/micro_batch.py --write benchmarks/README.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import time
from typing import Any

from readme_section import write_section

from papergym.reproduce.wm_r1 import TEMPLATES as WM_R1_TEMPLATES

SETTINGS = (0, 4, 2, 1)
ENVS = {
    "VoiceService-v0": (
        "papergym/VoiceService-v0",
        ["channel=simulated", "prompt=compact", "format_penalty=0", "max_steps=16"],
    ),
    "MobileGUI-v0": ("papergym/MobileGUI-v0", ["templates=" + json.dumps(list(WM_R1_TEMPLATES))]),
}


def contexts(policy: Any, env: str, env_kw: list[str], episodes: int) -> list[Any]:
    """The privileged oracle's trainable contexts (`Segment`s) on ``env``."""
    from papergym.baselines import sft

    return sft.demonstration_contexts(policy, sft.Args(env=env, env_kw=env_kw, episodes=episodes, seed=0))


def time_updates(policy: Any, batch: list[Any], repeats: int) -> dict[str, dict[int, float]]:
    """Median seconds of one SFT step and one GRPO update (with a KL reference) per micro-batch size."""
    import copy

    import torch

    from papergym.baselines import grpo, sft

    rng = random.Random(0)
    rows = [
        (
            list(c.token_ids),
            list(c.loss_mask),
            [0] * len(c.token_ids),
            [rng.uniform(-1, 1)] * len(c.token_ids),
        )
        for c in batch
    ]
    reference = copy.deepcopy(policy.model).eval().requires_grad_(False)
    out: dict[str, dict[int, float]] = {"sft": {}, "grpo": {}}
    for size in SETTINGS:
        optimizer = torch.optim.SGD(policy.model.parameters(), lr=0.0)  # lr 0: the model stays the same
        args = grpo.Args(micro_batch=size, beta=0.04, norm="token")
        setup = grpo._setup(args)
        sft_times, grpo_times = [], []
        for _ in range(repeats):
            start = time.perf_counter()
            sft.update(
                policy, optimizer, batch, lr=0.0, warmup_steps=0, max_grad_norm=1.0, step=0, micro_batch=size
            )
            sft_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            grpo.update(args, setup, policy, optimizer, reference, rows)
            grpo_times.append(time.perf_counter() - start)
        out["sft"][size] = statistics.median(sft_times)
        out["grpo"][size] = statistics.median(grpo_times)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=8, help="contexts per update (speechgym's SFT batch)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--write", default=None, help="README to write the table into")
    args = parser.parse_args()

    import torch

    from papergym.baselines.policy import wrap_policy
    from papergym.baselines.tiny import build_tiny

    torch.set_num_threads(args.threads)
    model, tokenizer = build_tiny()
    policy = wrap_policy(model, tokenizer)
    lines = [
        "| env | contexts: tokens min / median / max | update | "
        + " | ".join(f"micro_batch={s}" if s else "one pass (0)" for s in SETTINGS)
        + " |",
        "|---|---|---|" + "---|" * len(SETTINGS),
    ]
    for name, (env, env_kw) in ENVS.items():
        pool = contexts(policy, env, env_kw, episodes=args.batch)
        batch = random.Random(1).sample(pool, min(args.batch, len(pool)))
        lengths = sorted(len(c.token_ids) for c in batch)
        times = time_updates(policy, batch, args.repeats)
        for update, row in times.items():
            cells = [f"{row[s]:.2f} s" + ("" if s == 0 else f" ({row[0] / row[s]:.1f}x)") for s in SETTINGS]
            span = f"{len(batch)}: {lengths[0]} / {int(statistics.median(lengths))} / {lengths[-1]}"
            lines.append(f"| {name} | {span} | {update} | " + " | ".join(cells) + " |")
    load = os.getloadavg()[0]
    body = "\n".join(lines) + (
        f"\n\nOne update's median wall time over {args.repeats} repeats (in brackets: the speed-up over one "
        f"padded pass), the default tiny LM (`build_tiny()`), {args.threads} torch thread(s), CPU float32; "
        "SFT: cross-entropy on the loss-masked tokens; GRPO: token-level clipped loss with a k3 KL to a "
        "reference copy (its no-grad pass included). The contexts are the privileged oracle's demonstrations "
        "(VoiceService-v0: `channel=simulated prompt=compact format_penalty=0 max_steps=16`, as `papergym "
        "reproduce speechgym`; MobileGUI-v0: the settings tasks of `papergym reproduce wm-r1`). "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, 1-min load average "
        f"{load:.1f} at the end. Command: `python benchmarks/micro_batch.py --threads {args.threads} "
        "--write benchmarks/README.md`."
    )
    print(body)
    if args.write:
        write_section(
            args.write, "micro_batch", "Micro-batching the updates (`benchmarks/micro_batch.py`)", body
        )


if __name__ == "__main__":
    main()
