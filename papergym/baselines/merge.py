"""Weight merging of domain experts: task vectors, task arithmetic, TIES, DARE, and their cosine matrix.

Definitions and defaults from papers/training.md §3.2 (MergeLM, as M2RL uses it [C: merge_llms.py]):
task vectors are relative to the starting checkpoint (the SFT model); λ = 1.0; TIES keeps the top 20% of
each task vector by magnitude; DARE drops 20% of entries at random and rescales the rest by 1/(1-p).
Everything works on state dicts (``name -> tensor``); only floating-point tensors are merged, others are
copied from the base. `main` (``papergym train merge``) merges checkpoint directories and writes the
task vectors' cosine matrix.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

import numpy as np

from papergym.core.errors import require

if TYPE_CHECKING:  # torch is imported where it is used, so importing this module stays light
    import torch

StateDict = Mapping[str, "torch.Tensor"]


def _floating(base: StateDict) -> list[str]:
    torch = require("torch", "llm")
    return [name for name, t in base.items() if torch.is_floating_point(t)]


def task_vector(finetuned: StateDict, base: StateDict) -> dict[str, torch.Tensor]:
    """``τ = θ_finetuned − θ_base`` for every floating-point tensor.

    Raises:
        ValueError: the two state dicts differ in names or shapes.
    """
    if finetuned.keys() != base.keys():
        raise ValueError(f"state dicts differ in names: {sorted(set(finetuned) ^ set(base))[:5]}")
    out = {}
    for name in _floating(base):
        if finetuned[name].shape != base[name].shape:
            raise ValueError(f"{name}: shape {tuple(finetuned[name].shape)} vs {tuple(base[name].shape)}")
        out[name] = finetuned[name].detach().float() - base[name].detach().float()
    return out


def _apply(base: StateDict, merged: Mapping[str, torch.Tensor], lam: float) -> dict[str, torch.Tensor]:
    return {
        name: (t + lam * merged[name].to(t.dtype)) if name in merged else t.clone()
        for name, t in base.items()
    }


def task_arithmetic(
    base: StateDict, vectors: Sequence[Mapping[str, torch.Tensor]], *, lam: float = 1.0
) -> dict[str, torch.Tensor]:
    """``θ = θ_base + λ Σ_d τ_d``."""
    if not vectors:
        raise ValueError("task_arithmetic needs at least one task vector")
    merged = {name: sum((v[name] for v in vectors[1:]), vectors[0][name]) for name in vectors[0]}
    return _apply(base, merged, lam)


def trim(vector: Mapping[str, torch.Tensor], keep: float) -> dict[str, torch.Tensor]:
    """Keep the ``keep`` fraction of each tensor's entries with the largest magnitude, zero the rest."""
    torch = require("torch", "llm")
    if not 0.0 < keep <= 1.0:
        raise ValueError(f"keep must be in (0, 1], got {keep}")
    out = {}
    for name, t in vector.items():
        k = max(1, round(keep * t.numel()))
        threshold = t.abs().flatten().kthvalue(t.numel() - k + 1).values
        out[name] = torch.where(t.abs() >= threshold, t, torch.zeros_like(t))
    return out


def ties_merge(
    base: StateDict, vectors: Sequence[Mapping[str, torch.Tensor]], *, keep: float = 0.2, lam: float = 1.0
) -> dict[str, torch.Tensor]:
    """TIES: trim each task vector, elect a sign per entry from the sum of the trimmed vectors, and average
    only the entries that agree with it (zeros do not vote or count)."""
    torch = require("torch", "llm")
    if not vectors:
        raise ValueError("ties_merge needs at least one task vector")
    trimmed = [trim(v, keep) for v in vectors]
    merged = {}
    for name in trimmed[0]:
        stack = torch.stack([v[name] for v in trimmed])  # (D, *shape)
        sign = torch.sign(stack.sum(dim=0))  # (*shape)
        agree = (torch.sign(stack) == sign) & (stack != 0)  # (D, *shape)
        count = agree.sum(dim=0).clamp(min=1)
        merged[name] = (stack * agree).sum(dim=0) / count
    return _apply(base, merged, lam)


def dare(vector: Mapping[str, torch.Tensor], *, drop: float = 0.2, seed: int = 0) -> dict[str, torch.Tensor]:
    """DARE: drop each entry with probability ``drop`` and rescale the survivors by ``1 / (1 - drop)``.

    The mask of tensor ``i`` (in name order) comes from a generator seeded with ``seed + i``.
    """
    torch = require("torch", "llm")
    if not 0.0 <= drop < 1.0:
        raise ValueError(f"drop must be in [0, 1), got {drop}")
    out = {}
    for i, name in enumerate(sorted(vector)):
        t = vector[name]
        generator = torch.Generator().manual_seed(seed + i)
        keep = torch.rand(t.shape, generator=generator) >= drop
        out[name] = torch.where(keep, t / (1.0 - drop), torch.zeros_like(t))
    return out


def task_vector_cosines(
    vectors: Sequence[Mapping[str, torch.Tensor]], *, projection_dim: int | None = None, seed: int = 0
) -> np.ndarray:
    """The ``(D, D)`` cosine matrix of flattened task vectors.

    Args:
        vectors: D task vectors with the same names.
        projection_dim: if set, each vector is first sketched to this many dimensions by a seeded
            random-sign hashing projection (inner products are preserved in expectation; memory stays
            O(projection_dim) however large the model), the random-projection option of M2RL's analysis.
        seed: the projection's seed (the same for every vector, so they share one projection).
    """
    torch = require("torch", "llm")
    names = sorted(vectors[0])
    flat = []
    for v in vectors:
        if projection_dim is None:
            flat.append(torch.cat([v[n].flatten().double() for n in names]))
            continue
        sketch = torch.zeros(projection_dim, dtype=torch.float64)
        for i, n in enumerate(names):
            generator = torch.Generator().manual_seed(seed * 1_000_003 + i)
            bucket = torch.randint(projection_dim, (v[n].numel(),), generator=generator)
            sign = torch.randint(2, (v[n].numel(),), generator=generator).double() * 2 - 1
            sketch.index_add_(0, bucket, sign * v[n].flatten().double())
        flat.append(sketch)
    matrix = torch.stack(flat)  # (D, P)
    unit = matrix / matrix.norm(dim=1, keepdim=True).clamp(min=1e-12)
    return (unit @ unit.T).numpy()


# ------------------------------------------------------------------------------ the merge command
MergeMethod = Literal["task_arithmetic", "ties", "dare_task_arithmetic", "dare_ties"]


@dataclass
class Args:
    """Merge domain experts into one checkpoint (defaults: MergeLM as M2RL runs it, training.md §3.2)."""

    base: str = ""
    """The starting checkpoint the experts were trained from (M2RL: the SFT model); task vectors are
    relative to it."""
    experts: list[str] = field(default_factory=list)
    """The experts' checkpoint directories (same architecture as ``base``)."""
    out: str = "runs/merge"
    """Where the merged checkpoint (``out/merged``) and ``cosines.json`` go."""
    method: MergeMethod = "task_arithmetic"
    """The merging operator; the ``dare_`` ones apply DARE to each task vector first."""
    lam: float = 1.0
    """The scaling coefficient λ (MergeLM default 1.0)."""
    keep: float = 0.2
    """TIES: the share of each task vector kept by magnitude (MergeLM's usual 20%)."""
    drop: float = 0.2
    """DARE: the drop probability p (M2RL: weight_mask_rate 0.2)."""
    seed: int = 0
    """DARE's mask seed (expert d uses ``seed + 1000 * d``) and the projection's seed."""
    projection_dim: int | None = None
    """Sketch task vectors to this many dimensions before the cosine matrix (None: exact)."""


def read_state(path: str | Path) -> dict[str, torch.Tensor]:
    """Every tensor of a local safetensors checkpoint directory (sharded or not)."""
    load_file = require("safetensors.torch", "llm").load_file

    files = sorted(Path(path).glob("*.safetensors"))
    if not files:
        raise ValueError(f"{str(path)!r} holds no *.safetensors weights (pass a save_pretrained directory)")
    state: dict[str, torch.Tensor] = {}
    for file in files:
        state.update(load_file(str(file)))
    return state


def write_checkpoint(state: Mapping[str, torch.Tensor], like: str | Path, out: str | Path) -> Path:
    """Save ``state`` as ``out/model.safetensors`` with ``like``'s config and tokenizer files."""
    from safetensors.torch import save_file

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for file in Path(like).iterdir():
        if file.is_file() and not file.name.endswith((".safetensors", ".safetensors.index.json")):
            shutil.copy2(file, out / file.name)
    save_file({k: v.contiguous() for k, v in state.items()}, str(out / "model.safetensors"), {"format": "pt"})
    return out


def merge_states(base: StateDict, experts: Sequence[StateDict], args: Args) -> dict[str, torch.Tensor]:
    """Apply ``args.method`` to the experts' task vectors relative to ``base``."""
    vectors = [task_vector(e, base) for e in experts]
    if args.method.startswith("dare_"):
        vectors = [dare(v, drop=args.drop, seed=args.seed + 1000 * d) for d, v in enumerate(vectors)]
    if args.method.endswith("ties"):
        return ties_merge(base, vectors, keep=args.keep, lam=args.lam)
    if args.method.endswith("task_arithmetic"):
        return task_arithmetic(base, vectors, lam=args.lam)
    raise ValueError(f"unknown method {args.method!r}; choose one of {get_args(MergeMethod)}")


def main(args: Args) -> dict[str, Any]:
    """Merge ``args.experts`` into ``out/merged`` and write their task-vector cosine matrix.

    Evaluate the result like any checkpoint, e.g. ``papergym passk ENV --policy hf:OUT/merged``.
    """
    if not args.base or not args.experts:
        raise ValueError("merge needs --base (the starting checkpoint) and at least one --experts path")
    base = read_state(args.base)
    experts = [read_state(path) for path in args.experts]
    merged = merge_states(base, experts, args)
    out = Path(args.out)
    path = write_checkpoint(merged, args.base, out / "merged")
    cosines = task_vector_cosines(
        [task_vector(e, base) for e in experts], projection_dim=args.projection_dim, seed=args.seed
    )
    summary = {
        "method": args.method,
        "experts": list(args.experts),
        "merged_checkpoint": str(path),
        "cosines": cosines.round(6).tolist(),
    }
    (out / "cosines.json").write_text(json.dumps(summary, indent=1))
    return summary
