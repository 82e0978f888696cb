from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from papergym.baselines import es  # noqa: E402
from tests.backends.tiny_lm import build_tiny_checkpoint  # noqa: E402
from tests.baselines.toy_env import register_toy  # noqa: E402


def _params() -> list[torch.Tensor]:
    return [torch.zeros(3, 4), torch.zeros(3, 4), torch.ones(5)]


def test_perturb_and_restore_regenerate_the_same_noise() -> None:
    params = _params()
    es.perturb(params, 7, 0.1)
    assert all(p.abs().sum() > 0 for p in params[:2])
    # with the seed shift, two tensors of equal shape get different noise; without it, the same
    assert not torch.equal(params[0], params[1])
    es.perturb(params, 7, -0.1)
    assert all(torch.allclose(p, q, atol=1e-7) for p, q in zip(params, _params(), strict=True))
    same = _params()
    es.perturb(same, 7, 0.1, seed_shift=False)
    assert torch.equal(same[0], same[1])


def test_update_is_the_z_weighted_mean_of_the_members_noise() -> None:
    params = _params()
    seeds, z = [3, 11, 19], [1.0, -0.5, -0.5]
    norm = es.es_update(params, seeds, z, alpha=0.2)
    for i, p in enumerate(params):
        expected = sum(zn * es._noise(p, s + i) for s, zn in zip(seeds, z, strict=True)) * 0.2 / 3
        assert torch.allclose(p - _params()[i], expected, atol=1e-6)
    total = math.sqrt(sum(float((p - q).pow(2).sum()) for p, q in zip(params, _params(), strict=True)))
    assert norm == pytest.approx(total, rel=1e-5)
    with pytest.raises(ValueError):
        es.es_update(params, seeds, [1.0], alpha=0.2)


def test_sparsify_and_drift(tmp_path: Path) -> None:
    ckpt = build_tiny_checkpoint(tmp_path / "init", hidden=32, layers=2)
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(ckpt)
    params = [p for _, p in model.named_parameters()]
    es.perturb(params, 5, 0.01)
    drift = es.parameter_drift(model, ckpt)
    assert {"layers.0", "layers.1", "total"} <= set(drift)
    assert drift["total"]["l2"] > 0 and 0 < drift["layers.0"]["relative"] < 1
    layer_sq = sum(v["l2"] ** 2 for k, v in drift.items() if k != "total")
    assert drift["total"]["l2"] == pytest.approx(layer_sq**0.5, rel=1e-9)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    zeroed = es.sparsify_update(model, ckpt, 0.93)
    assert zeroed == pytest.approx(0.93, abs=1e-4)
    kept = 0
    init = AutoModelForCausalLM.from_pretrained(ckpt).state_dict()
    for name, p in model.named_parameters():
        moved = p != init[name]
        kept += int(moved.sum())
        # what survives is exactly the original update
        assert torch.equal(p[moved], before[name][moved])
    assert kept / sum(p.numel() for p in params) == pytest.approx(1 - zeroed, abs=1e-3)
    es.load_weights(model, ckpt)
    assert es.parameter_drift(model, ckpt)["total"]["l2"] == 0.0


def _args(tmp_path: Path, ckpt: Path, **kw: object) -> es.Args:
    base = dict(
        env=register_toy(),
        model=str(ckpt),
        out=str(tmp_path / "run"),
        iterations=2,
        population=4,
        sigma=0.05,
        alpha=0.02,
        train_tasks=2,
        eval_tasks=2,
        max_new_tokens=6,
        batch_size=4,
        checkpoint_every=1,
    )
    base.update(kw)
    return es.Args(**base)  # type: ignore[arg-type]


def test_es_runs_two_iterations_and_changes_the_parameters(tmp_path: Path) -> None:
    ckpt = build_tiny_checkpoint(tmp_path / "init", hidden=32, layers=2)
    summary = es.main(_args(tmp_path, ckpt))
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [0, 1]
    assert all(math.isfinite(r["reward_mean"]) and r["reward_std"] > 0 for r in rows)
    assert all(r["update_norm"] > 0 for r in rows)
    assert summary["drift"]["total"]["l2"] > 0
    assert 0.92 <= summary["probe_zeroed_fraction"] < 0.94
    # the final checkpoint is a plain HF directory (ES -> GRPO starts from it) and holds the trained weights
    final = Path(summary["final_checkpoint"])
    assert es.parameter_drift(__import__("transformers").AutoModelForCausalLM.from_pretrained(final), ckpt)[
        "total"
    ]["l2"] == pytest.approx(summary["drift"]["total"]["l2"])


def test_resume_continues_where_a_run_stopped(tmp_path: Path) -> None:
    ckpt = build_tiny_checkpoint(tmp_path / "init", hidden=32, layers=2)
    full = es.main(_args(tmp_path, ckpt, eval_tasks=0))
    # a run that stopped after iteration 1 (its checkpoint says so), then resumed
    es.main(_args(tmp_path, ckpt, eval_tasks=0, iterations=1, out=str(tmp_path / "cut")))
    resumed = es.main(_args(tmp_path, ckpt, eval_tasks=0, out=str(tmp_path / "cut"), resume=True))
    rows = (tmp_path / "cut" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(r)["step"] for r in rows] == [0, 1]
    assert resumed["drift"]["total"]["l2"] == pytest.approx(full["drift"]["total"]["l2"], rel=1e-6)


def test_grpo_starts_from_the_es_checkpoint(tmp_path: Path) -> None:
    from papergym.baselines import grpo

    ckpt = build_tiny_checkpoint(tmp_path / "init", hidden=32, layers=2)
    summary = es.main(_args(tmp_path, ckpt, iterations=1, eval_tasks=0))
    final = summary["final_checkpoint"]
    grpo.main(
        grpo.Args(
            env=register_toy(),
            model=final,
            out=str(tmp_path / "grpo"),
            steps=1,
            prompts_per_step=1,
            group_size=2,
            max_new_tokens=4,
            progress=False,
        )
    )
    from safetensors.torch import load_file

    es_weights = load_file(str(Path(final) / "model.safetensors"))
    grpo_weights = load_file(str(tmp_path / "grpo" / "final" / "model.safetensors"))
    init = load_file(str(ckpt / "model.safetensors"))
    # GRPO continued from the ES weights (not from the initial ones) and moved them
    assert any(not torch.equal(es_weights[k], init[k]) for k in init)
    assert any(not torch.equal(grpo_weights[k], es_weights[k]) for k in es_weights)
    drift_from_es = sum(float((grpo_weights[k] - es_weights[k]).norm()) for k in es_weights)
    drift_from_init = sum(float((grpo_weights[k] - init[k]).norm()) for k in init)
    assert drift_from_es < drift_from_init


def test_streamed_checkpoint_of_a_tied_model_reloads_exactly(tiny_dir: Path, tmp_path: Path) -> None:
    from papergym.baselines.policy import load_policy

    policy = load_policy(tiny_dir)
    assert policy.model.config.tie_word_embeddings
    params = [p for _, p in policy.model.named_parameters()]
    es.perturb(params, 3, 0.01)
    es._save(policy, tmp_path / "ckpt", {"iteration": 1})
    again = load_policy(tmp_path / "ckpt")
    mine, theirs = policy.model.state_dict(), again.model.state_dict()
    assert mine.keys() == theirs.keys()
    assert all(torch.equal(mine[k], theirs[k]) for k in mine)
    # the tied head is stored once and still tied after loading
    assert again.model.lm_head.weight.data_ptr() == again.model.model.embed_tokens.weight.data_ptr()


def test_es_evaluations_write_viewable_traces(tmp_path: Path) -> None:
    ckpt = build_tiny_checkpoint(tmp_path / "init", hidden=32, layers=2)
    es.main(_args(tmp_path, ckpt, iterations=1))
    from papergym.viewer import load_run

    for when in ("before", "after", "probe"):
        records = load_run(tmp_path / "run" / f"eval_{when}.jsonl")
        assert len(records) == 2 and all(r["env"] == register_toy() and r["trace"] for r in records)
    pytest.importorskip("jinja2")
    from papergym.viewer import render_report

    assert "<html" in render_report(tmp_path / "run" / "eval_after.jsonl").lower()
