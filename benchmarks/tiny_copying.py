"""Can a warm-started tiny LM copy values out of its context? Teacher-forced accuracy on held-out demos.

Every reproduction on a service env starts from the tiny LM SFT-warmed on demonstrations, and every one
of them found a base that never succeeds. This measures why: each model reads held-out test-split
demonstrations (the same policy that made its SFT data, here `HearingOracle` on ``VoiceService-v0``'s
simulated channel) and predicts every action token from the true prefix (teacher forcing, greedy). Three
accuracies: all action tokens; the **digit** tokens among them (ids, order numbers: values the action must
copy from what the user said or a tool returned); and **whole actions** (every token of the action right,
what a multi-step episode needs step after step). Nothing here trains: the models are given (``--model
NAME=DIR``); the README section says which commands made them.

Usage::

    python benchmarks/tiny_copying.py --model sft=runs/sft/final --model induction+sft=runs/isft/final \\
        [--episodes 24] [--write benchmarks/README.md --note "how the models were made"]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from readme_section import write_section

from papergym.baselines.policy import PolicyModel, load_policy
from papergym.baselines.rollout import Segment, demonstrations
from papergym.baselines.run import make_envs, parse_kwargs, split_options
from papergym.baselines.sft import acting, demonstrator

ENV = "papergym/VoiceService-v0"
ENV_KW = ["channel=simulated", "prompt=compact", "format_penalty=0", "max_steps=16"]
DEMONSTRATOR = "papergym.envs.voice.hearing_oracle:HearingOracle"
FIRST_SEED = 10_000
"""Test-split task seeds start here (any seed: the split keeps them apart from the SFT's training tasks)."""


def held_out_segments(policy: PolicyModel, episodes: int) -> list[Segment]:
    """The demonstrator's test-split episodes as token contexts (loss mask = its actions)."""
    env = make_envs(ENV, parse_kwargs(ENV_KW), 1)[0]
    options = split_options(env, "test")
    teacher = demonstrator(DEMONSTRATOR)
    assert teacher is not None
    segments: list[Segment] = []
    for seed in range(FIRST_SEED, FIRST_SEED + episodes):
        teacher.bind(env)  # type: ignore[attr-defined]
        teacher.reset(seed=seed)
        (episode,) = demonstrations(policy, [env], seeds=[seed], options=options, act=acting(teacher))
        segments.extend(s for s in episode.segments if any(s.loss_mask))
    env.close()
    return segments


def accuracies(policy: PolicyModel, segments: Sequence[Segment]) -> dict[str, Any]:
    """Teacher-forced greedy accuracy on action tokens, digit tokens and whole actions."""
    import torch

    digits = {policy.tokenizer.convert_tokens_to_ids(d) for d in "0123456789"}
    counts = {"tokens": [0, 0], "digits": [0, 0], "actions": [0, 0]}
    policy.model.eval()
    for seg in segments:
        with torch.no_grad():
            ids = torch.tensor([seg.token_ids], device=policy.device)
            predicted = policy.model(input_ids=ids).logits[0, :-1].argmax(-1).tolist()
        action_right: bool | None = None
        for i in range(1, len(seg.token_ids) + 1):
            trained = i < len(seg.token_ids) and seg.loss_mask[i]
            if trained:
                right = predicted[i - 1] == seg.token_ids[i]
                counts["tokens"][0] += right
                counts["tokens"][1] += 1
                if seg.token_ids[i] in digits:
                    counts["digits"][0] += right
                    counts["digits"][1] += 1
                action_right = right if action_right is None else action_right and right
            elif action_right is not None:  # an action just ended
                counts["actions"][0] += action_right
                counts["actions"][1] += 1
                action_right = None
    return {k: (right / max(1, n), n) for k, (right, n) in counts.items()}


def run() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", action="append", required=True, help="NAME=DIR, repeated")
    parser.add_argument("--episodes", type=int, default=24)
    parser.add_argument("--write", default=None)
    parser.add_argument("--note", default="", help="how the models were made (goes above the table)")
    args = parser.parse_args()
    rows = []
    segments: list[Segment] | None = None
    for spec in args.model:
        name, sep, path = spec.partition("=")
        if not sep:
            parser.error(f"--model takes NAME=DIR, got {spec!r}")
        policy = load_policy(path)
        if segments is None:  # one tokenizer for all: every tiny LM shares the pinned one
            segments = held_out_segments(policy, args.episodes)
        acc = accuracies(policy, segments)
        cells = " | ".join(f"{acc[k][0]:.3f}" for k in ("tokens", "digits", "actions"))
        rows.append(f"| {name} | {cells} |")
        counts = acc
    command = "python benchmarks/tiny_copying.py " + " ".join(f"--model {m}" for m in args.model)
    body = "\n".join(
        [
            *([args.note, ""] if args.note else []),
            f"`{command} --episodes {args.episodes}`: {args.episodes} held-out `{ENV}` test tasks "
            f"({', '.join(ENV_KW)}), `HearingOracle` demonstrations; {counts['tokens'][1]} action tokens, "
            f"{counts['digits'][1]} of them digits, {counts['actions'][1]} actions.",
            "",
            "| model | action tokens | digit tokens | whole actions |",
            "|---|---|---|---|",
            *rows,
        ]
    )
    print(body)
    if args.write:
        write_section(args.write, "tiny_copying", "Tiny-LM copying (`benchmarks/tiny_copying.py`)", body)


if __name__ == "__main__":
    run()
