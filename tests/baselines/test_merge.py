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


def _experts(tmp_path, n: int = 2):  # type: ignore[no-untyped-def]
    pytest.importorskip("transformers")
    from transformers import AutoModelForCausalLM

    from tests.backends.tiny_lm import build_tiny_checkpoint

    base = build_tiny_checkpoint(tmp_path / "base", hidden=32, layers=1)
    paths = []
    for d in range(n):
        model = AutoModelForCausalLM.from_pretrained(base)
        generator = torch.Generator().manual_seed(d)
        with torch.no_grad():
            for p in model.parameters():
                p.add_(0.01 * torch.randn(p.shape, generator=generator))
        model.save_pretrained(tmp_path / f"expert{d}")
        paths.append(str(tmp_path / f"expert{d}"))
    return base, paths


@pytest.mark.parametrize("method", ["task_arithmetic", "ties", "dare_task_arithmetic", "dare_ties"])
def test_merge_command_writes_a_loadable_merged_checkpoint(tmp_path, method: str) -> None:
    from transformers import AutoModelForCausalLM

    from papergym.baselines import merge

    base, experts = _experts(tmp_path)
    args = merge.Args(base=str(base), experts=experts, out=str(tmp_path / "out"), method=method, lam=0.5)
    summary = merge.main(args)
    merged = AutoModelForCausalLM.from_pretrained(summary["merged_checkpoint"]).state_dict()
    base_state, expert_states = merge.read_state(base), [merge.read_state(p) for p in experts]
    expected = merge.merge_states(base_state, expert_states, args)
    assert all(torch.equal(merged[k], expected[k]) for k in base_state)
    vectors = [task_vector(e, base_state) for e in expert_states]
    if method == "task_arithmetic":  # θ_0 + λ(τ_1 + τ_2), checked by hand on one tensor
        name = "model.embed_tokens.weight"
        by_hand = base_state[name] + 0.5 * (vectors[0][name] + vectors[1][name])
        assert torch.allclose(merged[name], by_hand)
    cos = np.array(summary["cosines"])
    assert cos.shape == (2, 2) and np.allclose(np.diag(cos), 1.0)
    assert np.allclose(cos, task_vector_cosines(vectors), atol=1e-6)
    assert (tmp_path / "out" / "merged" / "config.json").exists()
    assert (tmp_path / "out" / "merged" / "tokenizer.json").exists()


def test_merge_command_rejects_missing_inputs(tmp_path) -> None:
    from papergym.baselines import merge

    with pytest.raises(ValueError, match="--base"):
        merge.main(merge.Args(base="", experts=[]))
    with pytest.raises(ValueError, match="safetensors"):
        merge.read_state(tmp_path)


def test_papergym_train_merge_dispatches_to_the_merge_command(tmp_path) -> None:
    pytest.importorskip("tyro")
    from papergym.cli import main

    base, experts = _experts(tmp_path)
    out = tmp_path / "cli"
    assert main(
        ["train", "merge", "--base", str(base), "--experts", *experts, "--out", str(out), "--method", "ties"]
    ) in (0, None)
    summary = __import__("json").loads((out / "cosines.json").read_text())
    assert summary["method"] == "ties" and (out / "merged" / "model.safetensors").exists()
