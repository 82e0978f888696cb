"""A tiny Qwen2 causal LM and a byte-level tokenizer, built in code (no hub, no download).

The weights are random; ``initializer_range`` is raised and the embeddings untied so that greedy
decoding does not collapse onto the last prompt token, which makes determinism checks meaningful.
"""

from __future__ import annotations

from pathlib import Path

SPECIALS = ("<|pad|>", "<|bos|>", "<|eos|>", "<|user|>", "<|assistant|>", "<|system|>")
CHAT_TEMPLATE = (
    "{% for m in messages %}{{ '<|' + m['role'] + '|>' + m['content'] + '<|eos|>' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>' }}{% endif %}"
)


def byte_tokenizer(*, chat_template: str | None = CHAT_TEMPLATE):  # -> PreTrainedTokenizerFast
    """A pure byte-level BPE tokenizer (no merges) with a few special tokens and a chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {s: i for i, s in enumerate(SPECIALS)}
    for ch in sorted(pre_tokenizers.ByteLevel.alphabet()):
        vocab[ch] = len(vocab)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.TemplateProcessing(single="<|bos|> $A", special_tokens=[("<|bos|>", 1)])
    tok.add_special_tokens(list(SPECIALS))
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<|bos|>",
        eos_token="<|eos|>",
        pad_token="<|pad|>",
        additional_special_tokens=list(SPECIALS[3:]),
        padding_side="left",
    )
    if chat_template is not None:
        fast.chat_template = chat_template
    return fast


def build_tiny_checkpoint(
    path: Path,
    *,
    hidden: int = 64,
    layers: int = 2,
    ctx: int = 2048,
    chat_template: str | None = CHAT_TEMPLATE,
) -> Path:
    """Save a random tiny Qwen2 (safetensors) and its tokenizer to ``path``; returns ``path``."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    tok = byte_tokenizer(chat_template=chat_template)
    config = Qwen2Config(
        vocab_size=len(tok),
        hidden_size=hidden,
        intermediate_size=3 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=ctx,
        tie_word_embeddings=False,
        initializer_range=0.3,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    with torch.random.fork_rng():  # the weights are seeded without touching the caller's RNG state
        torch.manual_seed(0)
        model = Qwen2ForCausalLM(config)
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path
