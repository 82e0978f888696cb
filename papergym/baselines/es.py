"""Evolution strategies on an LLM's full parameters (Qiu et al., "Evolution Strategies at Scale").

Each iteration draws ``population`` seeds. Member n is θ + σ·ε_n, where ε_n is regenerated from its seed
one tensor at a time and added in place (with ``seed_shift`` tensor i uses seed ``s_n + i``, so tensors of
equal shape get different noise); the member is scored by its mean env return under greedy decoding, and
the same noise is regenerated and subtracted again. Rewards are z-normalised and
``θ += α · (1/N) Σ_n z_n ε_n``, the noise regenerated once more from the seeds: no member's noise is ever
stored, so the memory above inference is one tensor's noise and one accumulator (papers/training.md §5.3,
[C: VsonicV/es-fine-tuning-paper]; the code applies no 1/σ factor, it is absorbed into α).

After training: the parameter drift ‖θ − θ_0‖ per layer, and the sparsification probe of the ES-vs-GRPO
study (training.md §5.1 / §5.4): zero the ``probe_zero_fraction`` (0.93) smallest-magnitude entries of the
update θ − θ_0 and re-evaluate. The final checkpoint is a plain HF directory, so ES → GRPO is
``papergym train grpo --model <out>/final``.

Restoring a member subtracts the same noise it added, which returns each weight to its value up to one
float rounding (as in Qiu et al.'s code); keeping an exact copy would double the memory ES saves.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from papergym.baselines.policy import PolicyModel, load_policy
from papergym.baselines.rollout import run_episodes
from papergym.baselines.run import PolicyRunArgs, make_envs, parse_kwargs, split_options, start_run
from papergym.core.errors import require

logger = logging.getLogger(__name__)


@dataclass
class Args(PolicyRunArgs):
    """Evolution strategies (defaults: Qiu et al., arXiv 2509.24372, unless marked inferred).

    With ``model="tiny"`` the fresh model is saved in ``out/init``, the θ_0 of the drift report. ES keeps
    only its newest checkpoint (each is a whole model).
    """

    out: str = "runs/es"
    """Where metrics, checkpoints and the final model go."""
    seed: int = 33
    """The run's seed; iteration t's member seeds derive from (seed, t) (Qiu et al.'s INITIAL_SEED 33)."""
    eval_tasks: int = 100
    """Held-out tasks (test split) for the before/after and probe evaluations (inferred); 0 skips them."""
    iterations: int = 500
    """ES iterations (Qiu et al.: 500)."""
    population: int = 30
    """Population size N (Qiu et al.: 30)."""
    sigma: float = 1e-3
    """Noise scale σ (Qiu et al.: 0.001)."""
    alpha: float = 5e-4
    """Learning rate α (Qiu et al.: 5e-4; no 1/σ factor)."""
    seed_shift: bool = True
    """Seed tensor i with s_n + i, so same-shape tensors get different noise (training.md §5.3 caveat)."""
    train_tasks: int = 200
    """Fixed training tasks scored by every member (train_size 200 of Hoy et al., training.md §5.3)."""
    max_new_tokens: int = 1024
    """Most new tokens per action (Qiu et al.: 1024)."""
    batch_size: int = 32
    """Training episodes played in lockstep, one batched forward pass per token (inferred)."""
    probe_zero_fraction: float = 0.93
    """Share of the update zeroed by the sparsification probe (ES-vs-GRPO study, training.md §5.1)."""
    probe_scope: Literal["global", "tensor"] = "global"
    """Rank update magnitudes over the whole model or within each tensor."""
    dtype: str | None = None
    """The weights' dtype (None: float32 on CPU)."""


# --------------------------------------------------------------------------------------------- noise
def iteration_seeds(seed: int, iteration: int, population: int) -> list[int]:
    """The member seeds of one iteration, in ``[0, 2**30)`` as in Qiu et al.'s code.

    >>> iteration_seeds(33, 0, 3) == iteration_seeds(33, 0, 3) != iteration_seeds(33, 1, 3)
    True
    """
    rng = np.random.default_rng([seed, iteration])
    return [int(s) for s in rng.integers(0, 2**30, population)]


def _noise(param: Any, seed: int) -> Any:
    torch = require("torch", "llm")
    generator = torch.Generator(device=param.device).manual_seed(seed)
    return torch.randn(param.shape, generator=generator, dtype=param.dtype, device=param.device)


def perturb(params: Sequence[Any], seed: int, scale: float, *, seed_shift: bool = True) -> None:
    """Add ``scale · ε(seed)`` to every tensor in place, one tensor's noise alive at a time.

    ``perturb(params, s, σ)`` makes a member; ``perturb(params, s, -σ)`` restores the parameters.
    """
    torch = require("torch", "llm")
    with torch.no_grad():
        for i, p in enumerate(params):
            p.add_(_noise(p, seed + i if seed_shift else seed), alpha=scale)


def z_normalise(rewards: Sequence[float], eps: float = 1e-8) -> np.ndarray:
    """``(R - mean) / (std + eps)`` (population std); all-equal rewards give zeros.

    >>> z_normalise([1.0, 1.0]).tolist(), z_normalise([0.0, 2.0]).round(6).tolist()
    ([0.0, 0.0], [-1.0, 1.0])
    """
    r = np.asarray(rewards, dtype=np.float64)
    return (r - r.mean()) / (r.std() + eps)


def es_update(
    params: Sequence[Any], seeds: Sequence[int], z: Sequence[float], alpha: float, *, seed_shift: bool = True
) -> float:
    """``θ += α · (1/N) Σ_n z_n ε_n`` in place, tensor by tensor; returns the update's L2 norm."""
    torch = require("torch", "llm")
    if len(seeds) != len(z):
        raise ValueError(f"got {len(seeds)} seeds for {len(z)} normalised rewards")
    squared = 0.0
    with torch.no_grad():
        for i, p in enumerate(params):
            step = torch.zeros_like(p)
            for s, zn in zip(seeds, z, strict=True):
                if zn != 0.0:
                    step.add_(_noise(p, s + i if seed_shift else s), alpha=float(zn))
            step.mul_(alpha / len(seeds))
            p.add_(step)
            squared += float(torch.linalg.vector_norm(step)) ** 2  # no float64 copy of the embeddings
    return squared**0.5


# --------------------------------------------------------------------------------------- evaluation
def evaluate(
    policy: PolicyModel,
    args: Args,
    seeds: Sequence[int],
    *,
    split: str,
    batch: int | None = None,
    when: str | None = None,
) -> tuple[float, float]:
    """Mean return and success rate of greedy episodes, one per seed, ``batch`` (default ``batch_size``)
    played in lockstep. With ``when`` (and ``args.eval_trace``) the episodes are written to
    ``out/eval_<when>.jsonl`` for `papergym view`, as the other trainers' evaluations are."""
    batch = args.batch_size if batch is None else batch
    envs = make_envs(args.env, parse_kwargs(args.env_kw), max(1, min(batch, len(seeds))))
    returns: list[float] = []
    successes: list[bool] = []
    played: list[Any] = []
    try:
        options = split_options(envs[0], split)
        for start in range(0, len(seeds), len(envs)):
            chunk = list(seeds[start : start + len(envs)])
            episodes = run_episodes(
                policy,
                envs[: len(chunk)],
                seeds=chunk,
                sample_seed=0,  # unused: greedy decoding draws nothing
                options=options,
                max_new_tokens=args.max_new_tokens,
                temperature=0.0,
            )
            returns.extend(e.trajectory.total_reward for e in episodes)
            successes.extend(e.trajectory.success for e in episodes)
            played.extend(e.trajectory for e in episodes)
    finally:
        for env in envs:
            env.close()
    if when is not None and args.eval_trace:
        from papergym.viewer.recording import write_episodes

        write_episodes(Path(args.out) / f"eval_{when}.jsonl", played, env_id=args.env)
    return float(np.mean(returns)), float(np.mean(successes))


# ----------------------------------------------------------------------------- drift and the probe
def _reference_tensors(path: Path, device: Any) -> Iterator[tuple[str, Any]]:
    """``(name, tensor)`` of a safetensors checkpoint, read one tensor at a time."""
    safetensors = require("safetensors", "llm")
    files = sorted(path.glob("*.safetensors"))
    if not files:
        raise ValueError(f"{str(path)!r} holds no *.safetensors weights to compare against")
    for file in files:
        with safetensors.safe_open(str(file), framework="pt", device="cpu") as handle:
            for name in handle.keys():  # noqa: SIM118 (safe_open is not a mapping)
                yield name, handle.get_tensor(name).to(device)


def _paired(model: Any, reference: Path) -> Iterator[tuple[str, Any, Any]]:
    """``(name, parameter, reference tensor)`` for every parameter, loading references lazily."""
    params = dict(model.named_parameters())
    seen = set()
    for name, ref in _reference_tensors(reference, next(iter(params.values())).device):
        if name in params:
            seen.add(name)
            yield name, params[name], ref
    missing = sorted(set(params) - seen)
    if missing:
        raise ValueError(f"the reference checkpoint {str(reference)!r} lacks {missing[:3]}")


def layer_of(name: str) -> str:
    """The layer a parameter belongs to: ``layers.N`` for transformer blocks, else its module.

    >>> layer_of("model.layers.3.mlp.up_proj.weight"), layer_of("model.embed_tokens.weight")
    ('layers.3', 'model.embed_tokens')
    """
    match = re.search(r"layers\.(\d+)\.", name)
    return f"layers.{match.group(1)}" if match else name.rsplit(".", 1)[0]


def parameter_drift(model: Any, reference: Path) -> dict[str, dict[str, float]]:
    """``‖θ − θ_0‖_2`` and ``‖θ − θ_0‖ / ‖θ_0‖`` per layer and in total (key ``"total"``)."""
    torch = require("torch", "llm")
    delta_sq: dict[str, float] = {}
    ref_sq: dict[str, float] = {}
    with torch.no_grad():
        for name, param, ref in _paired(model, reference):
            layer = layer_of(name)
            # float32 norms, one tensor at a time: a float64 copy of the embeddings would dwarf ES's state
            delta_sq[layer] = delta_sq.get(layer, 0.0) + float(torch.linalg.vector_norm(param - ref)) ** 2
            ref_sq[layer] = ref_sq.get(layer, 0.0) + float(torch.linalg.vector_norm(ref)) ** 2
    delta_sq["total"], ref_sq["total"] = sum(delta_sq.values()), sum(ref_sq.values())
    return {
        layer: {"l2": d**0.5, "relative": (d / ref_sq[layer]) ** 0.5 if ref_sq[layer] > 0 else 0.0}
        for layer, d in delta_sq.items()
    }


def sparsify_update(model: Any, reference: Path, zero_fraction: float, *, scope: str = "global") -> float:
    """Set θ = θ_0 + Δ with the ``zero_fraction`` smallest ``|Δ|`` entries of Δ = θ − θ_0 zeroed.

    Args:
        model: the trained model (modified in place).
        reference: the starting checkpoint θ_0.
        zero_fraction: the share of entries zeroed (0.93 in the ES-vs-GRPO probe).
        scope: ``"global"`` ranks magnitudes over the whole model, ``"tensor"`` within each tensor.

    Returns:
        The share of update entries actually zeroed (ties at the threshold are zeroed too).
    """
    torch = require("torch", "llm")
    if not 0.0 <= zero_fraction < 1.0:
        raise ValueError(f"zero_fraction must be in [0, 1), got {zero_fraction}")
    if scope not in ("global", "tensor"):
        raise ValueError(f"scope must be 'global' or 'tensor', got {scope!r}")
    threshold = None
    with torch.no_grad():
        if scope == "global":
            magnitudes = torch.cat(
                [(p - r).abs().flatten().float().cpu() for _, p, r in _paired(model, reference)]
            )
            k = round(zero_fraction * magnitudes.numel())
            threshold = float(magnitudes.kthvalue(k).values) if k > 0 else -1.0
            del magnitudes
        zeroed = total = 0
        for _, param, ref in _paired(model, reference):
            delta = param - ref
            if scope == "tensor":
                k = round(zero_fraction * delta.numel())
                threshold = float(delta.abs().flatten().float().kthvalue(k).values) if k > 0 else -1.0
            keep = delta.abs() > threshold
            param.copy_(torch.where(keep, param, ref))  # exactly θ where kept, θ_0 elsewhere
            zeroed += int((~keep).sum())
            total += delta.numel()
    return zeroed / max(total, 1)


def load_weights(model: Any, path: Path) -> None:
    """Copy a checkpoint's weights into ``model``'s parameters in place (one tensor at a time)."""
    torch = require("torch", "llm")
    with torch.no_grad():
        for _, param, ref in _paired(model, path):
            param.copy_(ref)


# ----------------------------------------------------------------------------------------- the run
def _initial_checkpoint(args: Args, out: Path) -> Path:
    if args.model != "tiny":
        return Path(args.model)
    path = out / "init"
    if not any(path.glob("*.safetensors")):
        from papergym.baselines import tiny

        fresh = load_policy("tiny")
        tiny.save(fresh.model, fresh.tokenizer, path)
    return path


_SAFETENSORS_DTYPES = {
    "float32": "F32", "float16": "F16", "bfloat16": "BF16", "float64": "F64",
    "int64": "I64", "int32": "I32", "int16": "I16", "int8": "I8", "uint8": "U8", "bool": "BOOL",
}  # fmt: skip


def write_safetensors(model: Any, file: Path) -> None:
    """Write ``model``'s state dict as one safetensors file, one tensor at a time.

    ``safetensors.torch.save_file`` (hence ``save_pretrained``) first turns every tensor into a bytes copy,
    holding a second copy of the model; ES exists to need no more than one. Tied tensors are written once.
    """
    torch = require("torch", "llm")
    tensors, seen, header, offset = [], set(), {}, 0
    for name, t in model.state_dict().items():
        key = (t.data_ptr(), t.dtype, tuple(t.shape))
        if key in seen:
            continue
        seen.add(key)
        size = t.numel() * t.element_size()
        dtype = _SAFETENSORS_DTYPES[str(t.dtype).removeprefix("torch.")]
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + size]}
        tensors.append(t)
        offset += size
    header["__metadata__"] = {"format": "pt"}
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    # a new file renamed into place: the weights being written may be memory-mapped from the old one
    partial = file.with_name(file.name + ".partial")
    with partial.open("wb") as f:
        f.write(len(raw).to_bytes(8, "little") + raw)
        for t in tensors:
            data = t.detach().cpu().contiguous().reshape(-1).view(torch.uint8)
            f.write(memoryview(data.numpy()))
    os.replace(partial, file)


def _save(policy: PolicyModel, path: Path, state: dict[str, Any]) -> None:
    path.mkdir(parents=True, exist_ok=True)
    policy.model.config.save_pretrained(path)
    policy.model.generation_config.save_pretrained(path)
    write_safetensors(policy.model, path / "model.safetensors")
    policy.tokenizer.save_pretrained(path)
    (path / "trainer_state.json.partial").write_text(json.dumps(state, indent=1))
    os.replace(path / "trainer_state.json.partial", path / "trainer_state.json")


def score_population(
    policy: PolicyModel, params: Sequence[Any], seeds: Sequence[int], args: Args
) -> tuple[list[float], list[float]]:
    """Each member's mean return and success rate on the training tasks (θ + σ·ε_n, restored after)."""
    rewards, successes = [], []
    for s in seeds:
        perturb(params, s, args.sigma, seed_shift=args.seed_shift)
        try:
            reward, success = evaluate(policy, args, range(args.train_tasks), split="train")
        finally:
            perturb(params, s, -args.sigma, seed_shift=args.seed_shift)
        rewards.append(reward)
        successes.append(success)
    return rewards, successes


def probe(policy: PolicyModel, args: Args, initial: Path, final: Path) -> dict[str, Any]:
    """The drift report, and with held-out tasks the after and sparsification-probe evaluations (the final
    weights are loaded back afterwards)."""
    report: dict[str, Any] = {"drift": parameter_drift(policy.model, initial)}
    if args.eval_tasks:
        held_out = range(args.eval_tasks)
        report["eval_return_after"], report["eval_success_after"] = evaluate(
            policy, args, held_out, split="test", batch=args.eval_batch, when="after"
        )
        report["probe_zeroed_fraction"] = sparsify_update(
            policy.model, initial, args.probe_zero_fraction, scope=args.probe_scope
        )
        report["eval_return_probe"], report["eval_success_probe"] = evaluate(
            policy, args, held_out, split="test", batch=args.eval_batch, when="probe"
        )
        load_weights(policy.model, final)
    return report


def main(args: Args) -> dict[str, Any]:
    """Run ES; returns the final metrics (also in ``out/summary.json``); draws ``out/curves.png``."""
    if args.population < 2 or args.iterations < 0 or args.sigma <= 0 or args.train_tasks < 1:
        raise ValueError("need population >= 2, iterations >= 0, sigma > 0 and train_tasks >= 1")
    run = start_run(args, total_steps=args.iterations, desc="es", keep_last=1)
    initial = _initial_checkpoint(args, run.out)
    policy = load_policy(run.checkpoint_model_path or initial, device=args.device, dtype=args.dtype)
    policy.model.requires_grad_(False)  # ES never backpropagates
    params = [p for _, p in policy.model.named_parameters()]
    summary: dict[str, Any] = {"args": asdict(args), "initial_checkpoint": str(initial), "out": str(run.out)}
    if args.eval_tasks and run.start_step == 0:  # on the test split where the env has one
        summary["eval_return_before"], summary["eval_success_before"] = evaluate(
            policy, args, range(args.eval_tasks), split="test", batch=args.eval_batch, when="before"
        )
    for iteration in range(run.start_step, args.iterations):
        seeds = iteration_seeds(args.seed, iteration, args.population)
        rewards, successes = score_population(policy, params, seeds, args)
        norm = es_update(params, seeds, z_normalise(rewards).tolist(), args.alpha, seed_shift=args.seed_shift)
        metrics = {
            "reward_mean": float(np.mean(rewards)),
            "reward_max": float(np.max(rewards)),
            "reward_std": float(np.std(rewards)),
            "success_mean": float(np.mean(successes)),
            "update_norm": norm,
        }
        run.log(iteration, metrics)
        done = iteration + 1
        run.checkpoint(done, write_model=lambda path, done=done: _save(policy, path, {"iteration": done}))
    final = run.out / "final"
    _save(policy, final, {"iteration": args.iterations})
    summary["final_checkpoint"] = str(final)
    summary.update(probe(policy, args, initial, final))
    run.finish(keys=["reward_mean", "reward_max", "success_mean", "update_norm"])
    (run.out / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary
