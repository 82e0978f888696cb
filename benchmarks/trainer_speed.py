"""GRPO training speed: papergym's `grpo.py` against TRL's ``GRPOTrainer``, same model and settings.

Both sides train the tiny model (`papergym.baselines.tiny.build_tiny`, saved once) on
``papergym/Reasoning-v0`` math prompts with the same group size, prompts per step, completion budget,
sampling (temperature 1, no top-p), learning rate, loss (token-level, no KL) and reward (the env's own
verdict on each completion), on the same number of torch threads, in one process one after the other.
The number reported is completions (samples) per second over the timed steps, after one warm-up step.

    python benchmarks/trainer_speed.py --steps 6 --write benchmarks/README.md
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

BEGIN, END = "<!-- trainer_speed:begin -->", "<!-- trainer_speed:end -->"
ENV_ID = "papergym/Reasoning-v0"
ENV_KW = {"domain": "math", "difficulty": 1}


def papergym_speed(model_dir: Path, out: Path, args: argparse.Namespace) -> list[float]:
    """Per-step samples/s of papergym's GRPO (the warm-up step dropped)."""
    from papergym.baselines import grpo
    from papergym.baselines.run import read_metrics

    config = grpo.Args(
        env=ENV_ID,
        env_kw=[f"{k}={v}" for k, v in ENV_KW.items()],
        model=str(model_dir),
        out=str(out),
        steps=args.steps + 1,
        prompts_per_step=args.prompts,
        group_size=args.group,
        max_new_tokens=args.tokens,
        temperature=1.0,
        lr=1e-5,
        variant="dapo",
        drop_zero_variance=False,
        eps_high=0.28,
        progress=False,
        threads=args.threads,
    )
    grpo.main(config)
    return [r["samples_per_s"] for r in read_metrics(out / "metrics.jsonl")][1:]


def trl_speed(model_dir: Path, out: Path, args: argparse.Namespace) -> list[float]:
    """Per-step samples/s of TRL's GRPOTrainer (the warm-up step dropped)."""
    import gymnasium as gym
    import torch
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    import papergym  # noqa: F401

    torch.set_num_threads(args.threads)
    n_prompts = args.prompts * (args.steps + 1)
    env = gym.make(ENV_ID, **ENV_KW)
    prompts, seeds = [], []
    for i in range(n_prompts):
        observation, _ = env.reset(seed=i)
        prompts.append([{"role": "user", "content": observation}])
        seeds.append(i)

    def reward(prompts, completions, seed, **_):  # the env's verdict, as papergym's rollout gets it
        scores = []
        for completion, s in zip(completions, seed, strict=True):
            text = completion[0]["content"] if isinstance(completion, list) else completion
            env.reset(seed=int(s))
            scores.append(float(env.step(text)[1]))
        return scores

    times: list[float] = []

    class Timer(TrainerCallback):
        def on_step_begin(self, *a, **k):
            self.start = time.perf_counter()

        def on_step_end(self, *a, **k):
            times.append(time.perf_counter() - self.start)

    config = GRPOConfig(
        output_dir=str(out),
        max_steps=args.steps + 1,
        per_device_train_batch_size=args.prompts * args.group,
        num_generations=args.group,
        max_completion_length=args.tokens,
        temperature=1.0,
        top_p=1.0,
        learning_rate=1e-5,
        beta=0.0,
        loss_type="dapo",
        epsilon=0.2,
        epsilon_high=0.28,
        use_vllm=False,
        use_cpu=True,
        bf16=False,
        fp16=False,
        report_to="none",
        save_strategy="no",
        logging_steps=1,
        seed=0,
        steps_per_generation=1,
        num_iterations=1,
        dataloader_num_workers=0,
        disable_tqdm=True,
    )
    trainer = GRPOTrainer(
        model=str(model_dir),
        reward_funcs=reward,
        args=config,
        train_dataset=Dataset.from_dict({"prompt": prompts, "seed": seeds}),
        callbacks=[Timer()],
    )
    trainer.train()
    samples = args.prompts * args.group
    return [samples / t for t in times][1:]


def table(ours: list[float], theirs: list[float], args: argparse.Namespace) -> str:
    mine, trl = statistics.median(ours), statistics.median(theirs)
    return "\n".join(
        [
            "| trainer | samples/s (median over steps) | steps timed |",
            "|---|---|---|",
            f"| papergym `grpo.py` | {mine:.1f} | {len(ours)} |",
            f"| TRL `GRPOTrainer` | {trl:.1f} | {len(theirs)} |",
            f"| ratio papergym / TRL | **{mine / trl:.2f}x** (goal >= 1.5x) | |",
            "",
            f"Settings (both sides): tiny model (`build_tiny()`, hidden 128, 4 layers, BPE vocab), {ENV_ID} "
            f"{ENV_KW}, {args.prompts} prompts x G={args.group} per step, <= {args.tokens} completion "
            "tokens, "
            f"temperature 1.0, lr 1e-5, token-level loss, clip 0.2/0.28, no KL, {args.threads} torch "
            f"thread(s), CPU, one warm-up step dropped. Command: `python benchmarks/trainer_speed.py "
            f"--steps {args.steps} --write benchmarks/README.md` (machine load: "
            f"{os.getloadavg()[0]:.1f} 1-min load average at the end).",
        ]
    )


def write(readme: Path, text: str) -> None:
    content = readme.read_text()
    block = f"{BEGIN}\n{text}\n{END}"
    if BEGIN in content and END in content:
        head, rest = content.split(BEGIN, 1)
        content = head + block + rest.split(END, 1)[1]
    else:
        content = content.rstrip("\n") + "\n\n## GRPO trainer speed (`benchmarks/trainer_speed.py`)\n\n"
        content += block + "\n"
    readme.write_text(content)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6, help="timed steps per trainer (plus one warm-up)")
    parser.add_argument("--prompts", type=int, default=4)
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--write", type=Path, default=None)
    args = parser.parse_args()
    from papergym.baselines.tiny import build_tiny

    with tempfile.TemporaryDirectory() as tmp:
        model_dir = Path(tmp) / "tiny"
        build_tiny(model_dir)
        ours = papergym_speed(model_dir, Path(tmp) / "papergym", args)
        theirs = trl_speed(model_dir, Path(tmp) / "trl", args)
    text = table(ours, theirs, args)
    print(text)
    if args.write:
        write(args.write, text)


if __name__ == "__main__":
    main()
