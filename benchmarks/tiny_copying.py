"""Can a warm-started tiny LM copy values out of its context? Teacher-forced accuracy on held-out demos.

Every reproduction on a service env starts from the tiny LM SFT-warmed on demonstrations, and every one
of them found a base that never succeeds. This measures why: each model reads held-out test-split
demonstrations (the same policy that made its SFT data, here `HearingOracle` on ``VoiceService-v0``'s
simulated channel) and predicts every action token from the true prefix (teacher forcing, greedy). Four
accuracies: all action tokens; the **digit** tokens among them (ids, order numbers: values the action must
copy from what the user said or a tool returned); the tokens inside a tool call's quoted **argument
values** (names, emails, ids: the digits and the letters the call must copy); and **whole actions**
(every token of the action right, what a multi-step episode needs step after step). Nothing here
trains: the models are given (``--model NAME=DIR``); the README section says which commands made them.

Any env with text actions works the same way (``--env``, ``--env-kw``, ``--demonstrator``; ``oracle``: the
env's privileged ``oracle_action()``), e.g. MemoryQA-v0, whose memories must copy values off the page.

Usage::

    python benchmarks/tiny_copying.py --model sft=runs/sft/final --model induction+sft=runs/isft/final \\
        [--episodes 24] [--write benchmarks/README.md --note "how the models were made"]
    python benchmarks/tiny_copying.py --model sft=DIR --env papergym/MemoryQA-v0 --demonstrator oracle \\
        --env-kw "pages=[3, 3]" difficulty=1 kind=annual_report max_episode_steps=8
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence

from readme_section import write_section

from papergym.baselines.policy import PolicyModel, load_policy
from papergym.baselines.rollout import Episode, demonstrations
from papergym.baselines.run import make_envs, parse_kwargs, split_options
from papergym.baselines.sft import acting, demonstrator

ENV = "papergym/VoiceService-v0"
ENV_KW = ["channel=simulated", "prompt=compact", "format_penalty=0", "max_steps=16"]
DEMONSTRATOR = "papergym.envs.voice.hearing_oracle:HearingOracle"
FIRST_SEED = 10_000
"""Test-split task seeds start here (any seed: the split keeps them apart from the SFT's training tasks)."""


def held_out_episodes(
    policy: PolicyModel,
    episodes: int,
    *,
    env_id: str = ENV,
    env_kw: Sequence[str] = ENV_KW,
    demonstrator_spec: str | None = DEMONSTRATOR,
) -> list[Episode]:
    """The demonstrator's test-split episodes in token space (``episode.spans``: where its actions lie);
    ``demonstrator_spec`` None: the env's privileged oracle."""
    env = make_envs(env_id, parse_kwargs(list(env_kw)), 1)[0]
    options = split_options(env, "test")
    teacher = demonstrator(demonstrator_spec)
    out: list[Episode] = []
    for seed in range(FIRST_SEED, FIRST_SEED + episodes):
        if teacher is not None:
            teacher.bind(env)  # type: ignore[attr-defined]
            teacher.reset(seed=seed)
        act = acting(teacher) if teacher is not None else None
        out.extend(demonstrations(policy, [env], seeds=[seed], options=options, act=act))
    env.close()
    return out


_IN_VALUE = re.compile(r'"arguments":\s*\{.*:\s*"[^"]*$', re.DOTALL)
"""A tool-call prefix that ends inside a quoted argument value (the next token belongs to the value)."""
CATEGORIES = ("tokens", "digits", "values", "actions")


def accuracies(policy: PolicyModel, episodes: Sequence[Episode]) -> dict[str, tuple[float, int]]:
    """Teacher-forced greedy accuracy on action tokens, digit tokens, argument-value tokens and whole
    actions: ``{category: (accuracy, count)}``."""
    import torch

    digits = {policy.tokenizer.convert_tokens_to_ids(d) for d in "0123456789"}
    counts = {k: [0, 0] for k in CATEGORIES}
    policy.model.eval()
    for episode in episodes:
        predicted = []
        for seg in episode.segments:
            with torch.no_grad():
                ids = torch.tensor([seg.token_ids], device=policy.device)
                predicted.append(policy.model(input_ids=ids).logits[0].argmax(-1).tolist())
        for span in episode.spans:
            seg, start, end = episode.segments[span.segment], span.start, span.end
            if start == 0:
                continue  # nothing predicts a context's first token
            action_right = True
            for i in range(start, end):
                right = predicted[span.segment][i - 1] == seg.token_ids[i]
                action_right = action_right and right
                in_value = bool(_IN_VALUE.search(policy.tokenizer.decode(seg.token_ids[start:i])))
                for category, member in (
                    ("tokens", True),
                    ("digits", seg.token_ids[i] in digits),
                    ("values", in_value),
                ):
                    if member:
                        counts[category][0] += right
                        counts[category][1] += 1
            counts["actions"][0] += action_right
            counts["actions"][1] += 1
    return {k: (right / max(1, n), n) for k, (right, n) in counts.items()}


def run() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", action="append", required=True, help="NAME=DIR, repeated")
    parser.add_argument("--episodes", type=int, default=24)
    parser.add_argument("--env", default=ENV)
    parser.add_argument("--env-kw", nargs="*", default=ENV_KW, help="key=value, as `papergym train`")
    parser.add_argument(
        "--demonstrator", default=DEMONSTRATOR, help="module:Class, or 'oracle' (the env's oracle_action)"
    )
    parser.add_argument("--write", default=None)
    parser.add_argument("--note", default="", help="how the models were made (goes above the table)")
    args = parser.parse_args()
    teacher = None if args.demonstrator == "oracle" else args.demonstrator
    rows = []
    held_out: list[Episode] | None = None
    for spec in args.model:
        name, sep, path = spec.partition("=")
        if not sep:
            parser.error(f"--model takes NAME=DIR, got {spec!r}")
        policy = load_policy(path)
        if held_out is None:  # one tokenizer for all: every tiny LM shares the pinned one
            held_out = held_out_episodes(
                policy, args.episodes, env_id=args.env, env_kw=args.env_kw, demonstrator_spec=teacher
            )
        acc = accuracies(policy, held_out)
        cells = " | ".join(f"{acc[k][0]:.3f}" for k in CATEGORIES)
        rows.append(f"| {name} | {cells} |")
        counts = acc
    command = "python benchmarks/tiny_copying.py " + " ".join(f"--model {m}" for m in args.model)
    if args.env != ENV or list(args.env_kw) != ENV_KW or args.demonstrator != DEMONSTRATOR:
        kw = " ".join(f'"{k}"' if " " in k else k for k in args.env_kw)
        command += f" --env {args.env} --demonstrator {args.demonstrator} --env-kw {kw}"
    source = "the env's oracle" if teacher is None else f"`{teacher.rpartition(':')[2]}`"
    body = "\n".join(
        [
            *([args.note, ""] if args.note else []),
            f"`{command} --episodes {args.episodes}`: {args.episodes} held-out `{args.env}` test tasks "
            f"({', '.join(args.env_kw)}), {source} demonstrations; {counts['tokens'][1]} action tokens, "
            f"{counts['digits'][1]} of them digits, {counts['values'][1]} inside tool-call argument values, "
            f"{counts['actions'][1]} actions.",
            "",
            "| model | action tokens | digit tokens | argument values | whole actions |",
            "|---|---|---|---|---|",
            *rows,
        ]
    )
    print(body)
    if args.write:
        write_section(args.write, "tiny_copying", "Tiny-LM copying (`benchmarks/tiny_copying.py`)", body)


if __name__ == "__main__":
    run()
