"""J-Zero's claim at CPU scale: structural judge labels vs. the judge's own (self-scored) labels.

Runs `papergym.baselines.jzero.JZeroLoop` for 10 iterations per seed, once with structural pair labels
(role asymmetry + subtask amplification, fixed by construction) and once with ``judge_labels=
"self_scored"`` (the same pairs relabelled by the judge's own scores), with the default Bradley–Terry
judge and the small trainable softmax policies (GRPO-trained; `papergym.baselines.jzero_policies`).
Per iteration it reports the hidden quality of the solver's answers to 16 held-out writing tasks and the
judge's agreement with the hidden quality (pairwise concordance of its scores with the hidden quality on a
fixed probe set of texts), mean ± standard deviation over seeds; row "init" is before any update. The
J-Zero summary says J-Zero keeps improving for 10 iterations while the self-reinforcing baseline degrades
after 2 (papers/training.md §1.1, §1.7); nothing here is tuned toward that.

Usage::

    python benchmarks/selfplay_quality.py [--seeds 3] [--iterations 10] [--write benchmarks/README.md]
        [--png benchmarks/selfplay_quality.png]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from papergym.baselines.jzero import JZeroConfig, JZeroLoop

BEGIN, END = "<!-- selfplay_quality:begin -->", "<!-- selfplay_quality:end -->"
LABELS = ("structural", "self_scored")


def measure(seeds: int, iterations: int) -> dict[str, np.ndarray]:
    """``label -> (seeds, iterations + 1, 3)``: hidden quality, judge agreement, kept tasks per iteration
    (index 0 is before training)."""
    out: dict[str, np.ndarray] = {}
    for label in LABELS:
        runs = []
        for seed in range(seeds):
            start = time.perf_counter()
            loop = JZeroLoop(JZeroConfig(judge_labels=label, seed=seed))
            quality, agreement = loop.evaluate()
            rows = [(quality, agreement, 0.0)]
            for _ in range(iterations):
                s = loop.iteration()
                rows.append((s.hidden_quality, s.judge_agreement, float(s.kept_tasks)))
            runs.append(rows)
            print(f"{label} seed {seed}: {time.perf_counter() - start:.0f} s", flush=True)
        out[label] = np.asarray(runs)
    return out


def table(results: dict[str, np.ndarray], seeds: int) -> str:
    cfg = JZeroConfig()
    lines = [
        "| iteration | hidden quality, structural | hidden quality, self-scored "
        "| judge agreement, structural | judge agreement, self-scored | tasks kept (struct. / self) |",
        "|---|---|---|---|---|---|",
    ]
    s, b = results["structural"], results["self_scored"]
    for k in range(s.shape[1]):

        def cell(a: np.ndarray, j: int, k: int = k) -> str:
            return f"{a[:, k, j].mean():.3f} ± {a[:, k, j].std():.3f}"

        kept = "–" if k == 0 else f"{s[:, k, 2].mean():.1f} / {b[:, k, 2].mean():.1f}"
        name = "init" if k == 0 else str(k)
        lines.append(f"| {name} | {cell(s, 0)} | {cell(b, 0)} | {cell(s, 1)} | {cell(b, 1)} | {kept} |")
    lines.append("")
    lines.append(
        f"{seeds} seeds (mean ± std over seeds). Per iteration: {cfg.briefs} briefs x {cfg.challenger_group} "
        f"challenger samples, G = {cfg.group_size} answers, band {cfg.band} on the soft p̂, judge trained "
        f"on every parseable round's pairs. Hidden quality: mean over {cfg.eval_tasks} held-out tasks x G "
        "answers. "
        f"Judge agreement: pairwise concordance with the hidden quality on {cfg.probes} probe texts per "
        "task. "
        "Tasks kept: rounds in the band per iteration (of "
        f"{cfg.briefs * cfg.challenger_group}). Plot: `selfplay_quality.png`."
    )
    return "\n".join(lines)


def plot(results: dict[str, np.ndarray], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for label, colour in zip(LABELS, ("tab:blue", "tab:red"), strict=True):
        a = results[label]
        x = np.arange(a.shape[1])
        for ax, j, title in ((axes[0], 0, "hidden quality of the solver"), (axes[1], 1, "judge agreement")):
            mean, std = a[:, :, j].mean(axis=0), a[:, :, j].std(axis=0)
            ax.plot(x, mean, marker="o", color=colour, label=label)
            ax.fill_between(x, mean - std, mean + std, color=colour, alpha=0.2)
            ax.set_title(title)
            ax.set_xlabel("iteration (0 = before training)")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def write(readme: Path, text: str) -> None:
    content = readme.read_text() if readme.exists() else ""
    block = f"{BEGIN}\n{text}\n{END}"
    if BEGIN in content and END in content:
        head, rest = content.split(BEGIN, 1)
        content = head + block + rest.split(END, 1)[1]
    else:
        section = "\n## Self-play quality, J-Zero (`benchmarks/selfplay_quality.py`)\n\n" + block + "\n"
        content = content.rstrip("\n") + "\n" + section
    readme.write_text(content)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--write", type=Path, default=None)
    parser.add_argument("--png", type=Path, default=None)
    args = parser.parse_args()
    results = measure(args.seeds, args.iterations)
    text = table(results, args.seeds)
    print(text)
    if args.write is not None:
        write(args.write, text)
    if args.png is not None:
        plot(results, args.png)


if __name__ == "__main__":
    main()
