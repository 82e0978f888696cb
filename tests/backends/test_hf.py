"""HFChatModel on a tiny Qwen2 built in code."""

from __future__ import annotations

import json
import shutil
import sys
import threading
from pathlib import Path

import pytest

from papergym.backends.protocols import ChatModel
from papergym.core.errors import BackendError, DependencyNotInstalled

pytest.importorskip("transformers")
pytest.importorskip("torch")

from papergym.backends.hf import HFChatModel

PROMPTS = [[{"role": "user", "content": "hi" * k}] for k in (1, 3, 7, 12)] + [
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 2 + 2?"}]
]


@pytest.fixture(scope="module")
def model(tiny_checkpoint: Path) -> HFChatModel:
    return HFChatModel(tiny_checkpoint)


def test_is_a_chat_model_with_identity(model: HFChatModel, tiny_checkpoint: Path) -> None:
    assert isinstance(model, ChatModel)
    assert model.model_id == f"hf:{tiny_checkpoint.resolve()}"
    assert set(model.usage.as_dict()) == {
        "model_calls",
        "prompt_tokens",
        "completion_tokens",
        "cache_hits",
        "retries",
        "failures",
    }


def test_greedy_is_deterministic_and_ignores_the_seed(model: HFChatModel) -> None:
    first = model.chat(PROMPTS[0], max_tokens=12)
    assert first  # a real decode, not an empty string
    assert model.chat(PROMPTS[0], max_tokens=12) == first
    assert model.chat(PROMPTS[0], max_tokens=12, seed=123) == first


def test_sampling_follows_the_seed(model: HFChatModel) -> None:
    a = model.chat(PROMPTS[1], seed=7, max_tokens=16, temperature=1.5)
    assert model.chat(PROMPTS[1], seed=7, max_tokens=16, temperature=1.5) == a
    others = {model.chat(PROMPTS[1], seed=s, max_tokens=16, temperature=1.5) for s in (8, 9, 10)}
    assert a not in others and len(others) == 3


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_a_batch_gives_what_each_request_gives_alone(model: HFChatModel, temperature: float) -> None:
    seeds = [11, 12, 13, None if temperature == 0 else 14, 15]
    alone = [
        model.chat(p, seed=s, max_tokens=10, temperature=temperature)
        for p, s in zip(PROMPTS, seeds, strict=True)
    ]
    assert model.chat_batch(PROMPTS, seeds=seeds, max_tokens=10, temperature=temperature) == alone


def test_concurrent_calls_share_batched_forward_passes(tiny_checkpoint: Path) -> None:
    model = HFChatModel(tiny_checkpoint, batch_window_s=0.2, max_batch_size=8)
    seeds = [21, 22, 23, 24, 25]
    expected = model.chat_batch(PROMPTS, seeds=seeds, max_tokens=8, temperature=1.0)
    before = model.batches_run
    results: list[str | None] = [None] * len(PROMPTS)
    barrier = threading.Barrier(len(PROMPTS))

    def worker(i: int) -> None:
        barrier.wait(timeout=10)
        results[i] = model.chat(PROMPTS[i], seed=seeds[i], max_tokens=8, temperature=1.0)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(PROMPTS))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in threads)
    assert results == expected
    assert model.batches_run - before < len(PROMPTS)  # combined (one batch when all arrive in the window)
    assert model.usage.model_calls == 2 * len(PROMPTS)


def test_batches_are_capped_at_max_batch_size(tiny_checkpoint: Path) -> None:
    model = HFChatModel(tiny_checkpoint, max_batch_size=2)
    model.chat_batch(PROMPTS, max_tokens=2)
    assert model.batches_run == 3


def test_max_tokens_is_respected_and_usage_counted(model: HFChatModel) -> None:
    before = model.usage.as_dict()
    model.chat(PROMPTS[2], seed=1, max_tokens=5, temperature=1.0)
    delta = model.usage.since(before)
    assert delta["model_calls"] == 1
    assert 1 <= delta["completion_tokens"] <= 5
    assert delta["prompt_tokens"] == len(model._encode(PROMPTS[2]))
    assert model.chat(PROMPTS[2], max_tokens=0) == ""


def test_generation_stops_at_any_configured_eos(tiny_checkpoint: Path, tmp_path: Path) -> None:
    from papergym.backends.hf import _Request

    model = HFChatModel(tiny_checkpoint)
    request = _Request(PROMPTS[0], None, 1, 0.0, prompt_ids=model._encode(PROMPTS[0]))
    [[greedy_first]] = model._generate([request])
    # list the greedy first token as a second eos (instruct models list several): the reply is empty
    copy = Path(shutil.copytree(tiny_checkpoint, tmp_path / "ckpt"))
    config = json.loads((copy / "generation_config.json").read_text())
    config["eos_token_id"] = [model.tokenizer.eos_token_id, greedy_first]
    (copy / "generation_config.json").write_text(json.dumps(config))
    stopped = HFChatModel(copy)
    before = stopped.usage.as_dict()
    assert stopped.chat(PROMPTS[0], max_tokens=8) == ""
    assert stopped.usage.since(before)["completion_tokens"] == 1


def test_a_prompt_longer_than_the_context_is_a_backend_error(model: HFChatModel) -> None:
    with pytest.raises(BackendError) as info:
        model.chat([{"role": "user", "content": "x" * 3000}], max_tokens=4)
    assert not info.value.retryable
    assert "context" in str(info.value)
    with pytest.raises(BackendError):  # a batch with one bad row reports it; the other rows still ran
        model.chat_batch([PROMPTS[0], [{"role": "user", "content": "x" * 3000}]], max_tokens=2)


def test_refuses_missing_paths_files_and_hub_ids(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="local checkpoints only"):
        HFChatModel(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="local checkpoints only"):
        HFChatModel("Qwen/Qwen2.5-0.5B-Instruct")  # never treated as a hub id
    (tmp_path / "weights.safetensors").write_bytes(b"")
    with pytest.raises(ValueError, match="directory"):
        HFChatModel(tmp_path / "weights.safetensors")


def test_refuses_a_checkpoint_without_safetensors(tiny_checkpoint: Path, tmp_path: Path) -> None:
    pickled = tmp_path / "pickled"
    shutil.copytree(tiny_checkpoint, pickled)
    for weights in pickled.glob("*.safetensors"):
        weights.rename(pickled / "pytorch_model.bin")
    with pytest.raises(ValueError, match="safetensors"):
        HFChatModel(pickled)


def test_a_tokenizer_without_chat_template_needs_one(tmp_path: Path) -> None:
    from tests.backends.tiny_lm import CHAT_TEMPLATE, build_tiny_checkpoint

    path = build_tiny_checkpoint(tmp_path / "base", chat_template=None)
    with pytest.raises(ValueError, match="chat_template"):
        HFChatModel(path)
    assert isinstance(HFChatModel(path, chat_template=CHAT_TEMPLATE).chat(PROMPTS[0], max_tokens=2), str)


def test_bad_arguments(tiny_checkpoint: Path, model: HFChatModel) -> None:
    with pytest.raises(ValueError, match="max_batch_size"):
        HFChatModel(tiny_checkpoint, max_batch_size=0)
    with pytest.raises(ValueError, match="dtype"):
        HFChatModel(tiny_checkpoint, dtype="float77")
    with pytest.raises(ValueError, match="temperature"):
        model.chat(PROMPTS[0], temperature=-1)
    with pytest.raises(ValueError, match="seeds"):
        model.chat_batch(PROMPTS, seeds=[1])


def test_a_missing_transformers_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, tiny_checkpoint: Path
) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)  # makes `import transformers` fail
    with pytest.raises(DependencyNotInstalled, match=r"papergym\[llm\]"):
        HFChatModel(tiny_checkpoint)
