"""Weight merging of domain experts: task vectors, task arithmetic, TIES, DARE, and their cosine matrix.

Definitions and defaults from papers/training.md §3.2 (MergeLM, as M2RL uses it [C: merge_llms.py]):
task vectors are relative to the starting checkpoint (the SFT model); λ = 1.0; TIES keeps the top 20% of
each task vector by magnitude; DARE drops 20% of entries at random and rescales the rest by 1/(1-p).
Everything works on state dicts (``name -> tensor``); only floating-point tensors are merged, others are
copied from the base.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import torch

StateDict = Mapping[str, torch.Tensor]


def _floating(base: StateDict) -> list[str]:
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
    merged = {name: sum(v[name] for v in vectors) for name in vectors[0]}
    return _apply(base, merged, lam)


def trim(vector: Mapping[str, torch.Tensor], keep: float) -> dict[str, torch.Tensor]:
    """Keep the ``keep`` fraction of each tensor's entries with the largest magnitude, zero the rest."""
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
