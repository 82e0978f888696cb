from __future__ import annotations

import numpy as np
import pytest
import torch

from papergym.baselines.merge import (
    dare,
    task_arithmetic,
    task_vector,
    task_vector_cosines,
    ties_merge,
    trim,
)

BASE = {"w": torch.zeros(4), "b": torch.ones(2), "steps": torch.tensor([7])}


def _model(w: list[float], b: list[float]) -> dict[str, torch.Tensor]:
    return {"w": torch.tensor(w), "b": torch.tensor(b), "steps": torch.tensor([7])}


def test_task_vectors_and_task_arithmetic() -> None:
    a = task_vector(_model([1, 2, 0, 0], [1, 3]), BASE)
    b = task_vector(_model([0, -1, 3, 0], [2, 1]), BASE)
    assert set(a) == {"w", "b"}  # integer buffers are not task-vector entries
    merged = task_arithmetic(BASE, [a, b], lam=0.5)
    assert merged["w"].tolist() == [0.5, 0.5, 1.5, 0.0] and merged["b"].tolist() == [1.5, 2.0]
    assert merged["steps"].tolist() == [7]
    with pytest.raises(ValueError, match="names"):
        task_vector({"w": torch.zeros(4)}, BASE)
    with pytest.raises(ValueError, match="shape"):
        task_vector({**BASE, "w": torch.zeros(5)}, BASE)


def test_trim_keeps_the_largest_magnitudes() -> None:
    kept = trim({"w": torch.tensor([0.1, -5.0, 3.0, 0.2, -0.3])}, keep=0.4)["w"]
    assert kept.tolist() == [0.0, -5.0, 3.0, 0.0, 0.0]
    with pytest.raises(ValueError):
        trim({"w": torch.ones(2)}, keep=0.0)


def test_ties_elects_signs_and_averages_the_agreeing_entries() -> None:
    base = {"w": torch.zeros(3)}
    vectors = [{"w": torch.tensor([2.0, 1.0, -1.0])}, {"w": torch.tensor([4.0, -3.0, -1.0])}]
    # keep=1: no trimming. Entry 0: both +, mean 3. Entry 1: sum -2 -> sign -, only -3 agrees -> -3.
    # Entry 2: both -, mean -1.
    assert ties_merge(base, vectors, keep=1.0)["w"].tolist() == [3.0, -3.0, -1.0]
    # keep=1/3 keeps one entry per vector: [2, 0, 0] and [4, 0, 0] -> [3, 0, 0]
    assert ties_merge(base, vectors, keep=1 / 3)["w"].tolist() == [3.0, 0.0, 0.0]


def test_dare_drops_and_rescales_reproducibly() -> None:
    vector = {"w": torch.ones(10_000)}
    out = dare(vector, drop=0.2, seed=3)["w"]
    assert set(out.unique().tolist()) == {0.0, 1.25}
    assert abs((out == 0).float().mean().item() - 0.2) < 0.02
    assert abs(out.mean().item() - 1.0) < 0.03  # unbiased in expectation
    assert torch.equal(out, dare(vector, drop=0.2, seed=3)["w"])
    assert not torch.equal(out, dare(vector, drop=0.2, seed=4)["w"])
    with pytest.raises(ValueError):
        dare(vector, drop=1.0)


def test_cosines_exact_and_projected() -> None:
    g = torch.Generator().manual_seed(0)
    a = {"w": torch.randn(3000, generator=g), "b": torch.randn(500, generator=g)}
    b = {name: -t for name, t in a.items()}
    c = {"w": torch.randn(3000, generator=g), "b": torch.randn(500, generator=g)}
    exact = task_vector_cosines([a, b, c])
    assert exact[0, 0] == pytest.approx(1.0) and exact[0, 1] == pytest.approx(-1.0)
    assert abs(exact[0, 2]) < 0.1
    projected = task_vector_cosines([a, b, c], projection_dim=512, seed=1)
    assert np.allclose(np.diag(projected), 1.0) and projected[0, 1] == pytest.approx(-1.0)
    assert abs(projected[0, 2] - exact[0, 2]) < 0.15
