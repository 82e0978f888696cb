from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest

import papergym  # noqa: F401  (registers the ids)

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from papergym.baselines import tiny  # noqa: E402


def test_tokenizer_is_trained_bpe_and_round_trips() -> None:
    tok = tiny.build_tokenizer()
    env = gym.make("papergym/SearchCritic-v0", n_passages=2000)
    observation, _ = env.reset(seed=0)
    ids = tok(observation, add_special_tokens=False)["input_ids"]
    assert tok.decode(ids) == observation
    assert len(ids) < len(observation.encode()) / 3  # merges learnt from env texts, not bytes
    weird = "naïve ünïcödé ✓ 🤖 \x00 tab\tend"
    assert tok.decode(tok(weird, add_special_tokens=False)["input_ids"]) == weird
    assert tok.convert_ids_to_tokens(tok("123", add_special_tokens=False)["input_ids"]) == ["1", "2", "3"]


def test_chat_template_renders_tools_and_parses_tool_calls() -> None:
    tok = tiny.build_tokenizer()
    tool = {"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Find X."},
        {"role": "assistant", "content": "", "tool_calls": [{"type": "function",
         "function": {"name": "search", "arguments": {"query": ["X"]}}}]},
        {"role": "tool", "name": "search", "content": "X is 3."},
    ]  # fmt: skip
    text = tok.apply_chat_template(messages, tools=[tool], tokenize=False, add_generation_prompt=True)
    assert text.startswith("<|im_start|>system\nBe brief.") and '"name": "search"' in text
    assert '<tool_call>{"name": "search", "arguments": {"query": ["X"]}}</tool_call>' in text
    assert "<|im_start|>tool\nX is 3.<|im_end|>" in text and text.endswith("<|im_start|>assistant\n")
    reply = '<tool_call>{"name": "search", "arguments": {"query": ["Y"]}}</tool_call><|im_end|>'
    parsed = tok.parse_response(reply, prefix="")
    assert parsed["tool_calls"][0]["function"] == {"name": "search", "arguments": {"query": ["Y"]}}
    trl_utils = pytest.importorskip("trl.chat_template_utils")
    assert trl_utils.supports_tool_calling(tok)
    assert trl_utils.is_chat_template_prefix_preserving(tok)


def test_build_tiny_is_seeded_privately_and_reloads(tmp_path: Path) -> None:
    state = torch.random.get_rng_state()
    model, _ = tiny.build_tiny(tmp_path / "a", hidden=32, layers=1, seed=3)
    assert torch.equal(state, torch.random.get_rng_state())  # the caller's RNG is untouched
    again, _ = tiny.build_tiny(hidden=32, layers=1, seed=3)
    other, _ = tiny.build_tiny(hidden=32, layers=1, seed=4)
    assert model.config.max_position_embeddings >= 4096
    first = dict(model.named_parameters())
    assert all(torch.equal(p, first[n]) for n, p in again.named_parameters())
    assert not all(torch.equal(p, first[n]) for n, p in other.named_parameters())
    loaded, loaded_tok = tiny.load_model(tmp_path / "a")
    assert all(torch.equal(p, first[n]) for n, p in loaded.named_parameters())
    assert loaded_tok.chat_template == tiny.CHAT_TEMPLATE
    with pytest.raises(ValueError, match="safetensors"):
        tiny.load_model(tmp_path)


def test_tokenizer_corpus_never_runs_a_speech_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """The corpus (so the tiny model) must not depend on the `audio` extra: no real-speech variant."""

    def no_engine(*args: object, **kwargs: object) -> None:
        raise AssertionError("a speech engine was loaded for the tokenizer corpus")

    monkeypatch.setattr("papergym.backends.speech._model", no_engine)
    texts = list(tiny.env_texts(["papergym/VoiceService-v0"], episodes=1))
    assert texts and all(t.startswith(tiny.IM_START) for t in texts)


def test_the_default_tokenizer_is_the_pinned_one_and_plays_no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tiny model's vocabulary does not move with env texts, new ids or missing extras."""

    def no_corpus(*args: object, **kwargs: object) -> None:
        raise AssertionError("the default tokenizer must not be retrained from env texts")

    monkeypatch.setattr(tiny, "env_texts", no_corpus)
    tok = tiny.build_tokenizer()
    pinned = tiny.PINNED_TOKENIZER.read_text(encoding="utf-8")
    assert tok.backend_tokenizer.get_vocab() == type(tok.backend_tokenizer).from_str(pinned).get_vocab()
    assert len(tok) == tiny.VOCAB_SIZE
    with pytest.raises(AssertionError, match="retrained"):
        tiny.build_tokenizer(vocab_size=1024)  # another size is trained on the corpus


def test_pin_tokenizer_writes_what_the_corpus_trains(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = ["<|im_start|>user\nhello world<|im_end|>\n"] * 20
    monkeypatch.setattr(tiny, "env_texts", lambda: iter(corpus))
    tiny._trained_tokenizer_json.cache_clear()
    try:
        path = tiny.pin_tokenizer(tmp_path / "tok.json")
        assert "hello" in path.read_text(encoding="utf-8")
    finally:
        tiny._trained_tokenizer_json.cache_clear()
