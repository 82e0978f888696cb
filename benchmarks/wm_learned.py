"""Next-screen accuracy of the learned GUI world model (WM-R1's learned world model, in miniature).

Trains a tiny LM on MobileGUI-v0's transitions (train split, default layout; oracle play with 30% random
actions) with `papergym.baselines.world_model`, then measures it on test-split transitions of the same
kind, on the default layout and on the held-out layout (`layout="heldout"`: moved buttons, renamed
labels, taller rows: the OOD split). ``exact``: the whole predicted screen equals the true next screen;
``line F1``: F1 of the screens' accessibility-text lines. The "no change" row predicts the current
screen again: the floor a model must beat.

Usage::

    python benchmarks/wm_learned.py [--steps 500] [--eval-transitions 60] [--write benchmarks/README.md]
    python benchmarks/wm_learned.py --from-run runs/wm_learned --write benchmarks/README.md  # no training
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from readme_section import write_section

from papergym.baselines.world_model import Args, main


def _row(name: str, d: dict, h: dict, prefix: str = "") -> str:
    cells = [d[f"{prefix}exact"], d[f"{prefix}line_f1"], h[f"{prefix}exact"], h[f"{prefix}line_f1"]]
    return f"| {name} | " + " | ".join(f"{c:.2f}" for c in cells) + " |"


def table(result: dict, args: dict) -> str:
    """The README section from a run's ``world_model.json`` (its ``args`` and ``result``)."""
    d, h = result["accuracy_default"], result["accuracy_heldout"]
    command = (
        f"python benchmarks/wm_learned.py --steps {args['steps']} --episodes {args['episodes']} "
        f"--eval-transitions {args['eval_transitions']} --seed {args['seed']}"
    )
    return "\n".join(
        [
            f"`{command}`: a {result['parameters']:,}-parameter tiny Qwen2, {result['examples']} training "
            f"transitions, {args['steps']} steps of {args['batch_size']}, training "
            f"{result['train_seconds']:.0f} s on {args['threads']} CPU thread(s) of a shared 2-core machine; "
            f"{int(d['n'])} test transitions per layout.",
            "",
            "| next screen | default exact | default line F1 | heldout exact | heldout line F1 |",
            "|---|---|---|---|---|",
            _row("learned (tiny LM)", d, h),
            _row("no change (floor)", d, h, "copy_"),
        ]
    )


def run() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--eval-transitions", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="runs/wm_learned")
    parser.add_argument("--write", default=None)
    parser.add_argument(
        "--from-run", default=None, help="a finished run directory: its world_model.json, no training"
    )
    args = parser.parse_args()
    if args.from_run is None:
        main(
            Args(
                out=args.out,
                seed=args.seed,
                episodes=args.episodes,
                steps=args.steps,
                batch_size=args.batch_size,
                eval_transitions=args.eval_transitions,
            )
        )
    saved = json.loads((Path(args.from_run or args.out) / "world_model.json").read_text(encoding="utf-8"))
    print(json.dumps(saved["result"], indent=2))
    text = table(saved["result"], saved["args"])
    print(text)
    if args.write:
        write_section(
            Path(args.write), "wm_learned", "Learned GUI world model (`benchmarks/wm_learned.py`)", text
        )


if __name__ == "__main__":
    run()
