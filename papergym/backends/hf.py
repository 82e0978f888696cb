"""`HFChatModel`: a local transformers checkpoint as a `ChatModel`.

Only local directories with safetensors weights are loaded (``local_files_only=True``,
``use_safetensors=True``): papergym never downloads, and pickled weights can run code on load.
``trust_remote_code`` stays off unless the caller turns it on.

Generation is `papergym.backends.sampling.generate` (the loop the trainers' policy samples with too: left
padding, attention mask, KV cache) rather than ``model.generate``, because every row of a batch needs its
own seeded ``torch.Generator``: the same request then gives the same text whether it ran alone or inside a
batch (exactly so in float32; in bf16/fp16 a different batch shape can change the logits' last bits
and, rarely, a near-tied token), and nothing touches torch's global random state. Concurrent
`HFChatModel.chat` calls from several threads (several env instances asking at once) are combined
by a micro-batcher into one batched forward pass.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from papergym.backends.protocols import Message
from papergym.backends.sampling import generate, stop_token_ids
from papergym.backends.usage import Usage
from papergym.core.errors import BackendError, require

logger = logging.getLogger(__name__)


@dataclass
class _Request:
    """One chat request, as queued for the micro-batcher."""

    messages: Sequence[Message]
    seed: int | None
    max_tokens: int
    temperature: float
    done: bool = False
    result: str = ""
    error: BaseException | None = None
    prompt_ids: list[int] = field(default_factory=list)


class HFChatModel:
    """A local transformers causal LM behind the `ChatModel` protocol.

    Args:
        path: a local checkpoint directory (``save_pretrained`` output with ``*.safetensors``
            weights and a tokenizer with a chat template). Hub ids are not accepted.
        device: the torch device, e.g. ``"cpu"`` or ``"cuda:0"``.
        dtype: the weights' dtype (a ``torch.dtype`` or its name, e.g. ``"bfloat16"``, or
            ``"auto"`` for the checkpoint's); ``None`` means float32 on CPU and ``"auto"`` elsewhere.
        trust_remote_code: allow the checkpoint's own Python code (off by default: it runs on load).
        max_batch_size: the most requests combined into one batched forward pass.
        batch_window_s: how long the first of several concurrent `chat` calls waits for others
            to join its batch.
        chat_template: a Jinja chat template that replaces the tokenizer's (needed for base
            checkpoints that ship without one).

    Attributes:
        model_id: ``"hf:<resolved path>"``, the identity used by the replay cache.
        usage: the backend's counters (`papergym.backends.usage.Usage`).
        batches_run: how many batched generations ran (a measure of the micro-batcher).

    Raises:
        ValueError: the path is missing, not a directory, holds no safetensors weights, or the
            tokenizer has no chat template; or an argument is out of range.
        DependencyNotInstalled: torch or transformers is missing (the ``llm`` extra).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        device: str = "cpu",
        dtype: Any = None,
        trust_remote_code: bool = False,
        max_batch_size: int = 8,
        batch_window_s: float = 0.005,
        chat_template: str | None = None,
    ) -> None:
        torch = require("torch", "llm")
        transformers = require("transformers", "llm")
        if max_batch_size < 1:
            raise ValueError(f"max_batch_size must be >= 1, got {max_batch_size}")
        if batch_window_s < 0:
            raise ValueError(f"batch_window_s must be >= 0, got {batch_window_s}")
        root = _checkpoint_dir(path)
        self.device = torch.device(device)
        self.max_batch_size = int(max_batch_size)
        self.batch_window_s = float(batch_window_s)
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(
            str(root), local_files_only=True, trust_remote_code=trust_remote_code
        )
        if chat_template is not None:
            self.tokenizer.chat_template = chat_template
        if not getattr(self.tokenizer, "chat_template", None):
            raise ValueError(
                f"the tokenizer at {str(root)!r} has no chat template; pass chat_template= (a Jinja string)"
            )
        self.model = transformers.AutoModelForCausalLM.from_pretrained(
            str(root),
            local_files_only=True,
            use_safetensors=True,
            trust_remote_code=trust_remote_code,
            dtype=_resolve_dtype(torch, dtype, self.device),
        )
        self.model.to(self.device)
        self.model.eval()
        self._stop_ids = stop_token_ids(self.model, self.tokenizer)
        pad = self.tokenizer.pad_token_id
        self._pad_id = int(pad if pad is not None else min(self._stop_ids, default=0))
        self.context_length: int | None = getattr(self.model.config, "max_position_embeddings", None)
        self.model_id = f"hf:{root}"
        self.usage = Usage()
        self.batches_run = 0
        self._generate_lock = threading.Lock()
        self._cond = threading.Condition()
        self._pending: list[_Request] = []
        self._leading = False

    def __repr__(self) -> str:
        return f"HFChatModel({self.model_id!r}, device={str(self.device)!r})"

    # ------------------------------------------------------------------ public API
    def chat(
        self,
        messages: Sequence[Message],
        *,
        seed: int | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ) -> str:
        """The model's reply to ``messages`` (new tokens only, special tokens skipped).

        Args:
            messages: the conversation, ``{"role", "content"}`` dicts.
            seed: seeds this request's own sampler (no effect when greedy); ``None`` samples
                nondeterministically.
            max_tokens: the most new tokens (fewer when the context length runs out).
            temperature: softmax temperature; 0 means greedy decoding.

        Raises:
            BackendError: the prompt does not fit the context, or the forward pass failed.
        """
        request = _Request(list(messages), seed, *_check_sampling(max_tokens, temperature))
        with self._cond:
            self._pending.append(request)
            self._cond.notify_all()
        while True:
            with self._cond:
                while not request.done and self._leading:
                    self._cond.wait()
                if request.done:
                    break
                self._leading = True
            try:
                self._lead_one_batch()
            finally:
                with self._cond:
                    self._leading = False
                    self._cond.notify_all()
        if request.error is not None:
            raise request.error
        return request.result

    def chat_batch(
        self,
        messages_list: Sequence[Sequence[Message]],
        *,
        seeds: Sequence[int | None] | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ) -> list[str]:
        """Replies to several conversations, generated in batches of at most ``max_batch_size``.

        Row ``i`` gives the same text as ``chat(messages_list[i], seed=seeds[i], ...)``.

        Raises:
            ValueError: ``seeds`` does not have one entry per conversation.
            BackendError: as `chat`, for the first row that failed.
        """
        max_tokens, temperature = _check_sampling(max_tokens, temperature)
        seeds = [None] * len(messages_list) if seeds is None else list(seeds)
        if len(seeds) != len(messages_list):
            raise ValueError(f"got {len(seeds)} seeds for {len(messages_list)} conversations")
        requests = [
            _Request(list(m), s, max_tokens, temperature) for m, s in zip(messages_list, seeds, strict=True)
        ]
        for start in range(0, len(requests), self.max_batch_size):
            self._run_batch(requests[start : start + self.max_batch_size])
        for request in requests:
            if request.error is not None:
                raise request.error
        return [r.result for r in requests]

    # ------------------------------------------------------------------ micro-batcher
    def _lead_one_batch(self) -> None:
        """As the leader: wait up to the window for more requests, then run one batch."""
        deadline = time.monotonic() + self.batch_window_s
        with self._cond:
            while len(self._pending) < self.max_batch_size:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._cond.wait(remaining)
            batch = self._pending[: self.max_batch_size]
            del self._pending[: self.max_batch_size]
        try:
            self._run_batch(batch)
        except BaseException as exc:
            # the fault belongs to this batch's callers (the leader's own request may be in a later batch)
            for request in batch:
                if not request.done:
                    request.error, request.done = exc, True
            if not isinstance(exc, Exception):
                raise  # KeyboardInterrupt and friends still stop the leader's thread
        finally:
            with self._cond:
                self._cond.notify_all()

    def _run_batch(self, batch: list[_Request]) -> None:
        """Generate for every request of ``batch``; each gets its result or its own error."""
        ready = []
        for request in batch:
            try:
                request.prompt_ids = self._encode(request.messages)
                if not request.prompt_ids:
                    raise ValueError("the chat template made an empty prompt from these messages")
                if self.context_length is not None and len(request.prompt_ids) >= self.context_length:
                    raise BackendError(
                        f"the prompt has {len(request.prompt_ids)} tokens; the model's context is "
                        f"{self.context_length}",
                        retryable=False,
                    )
            except Exception as exc:  # a bad request fails alone, not its whole batch
                request.error, request.done = exc, True
            else:
                ready.append(request)
        if not ready:
            return
        with self._generate_lock:
            self.batches_run += 1
            try:
                outputs = self._generate(ready)
            except RuntimeError as exc:  # torch's faults (out of memory, device errors)
                raise BackendError(f"{self.model_id}: generation failed: {exc}", retryable=False) from exc
        for request, tokens in zip(ready, outputs, strict=True):
            request.result = self.tokenizer.decode(
                [t for t in tokens if t not in self._stop_ids], skip_special_tokens=True
            )
            request.done = True
        self.usage.add(
            model_calls=len(ready),
            prompt_tokens=sum(len(r.prompt_ids) for r in ready),
            completion_tokens=sum(len(t) for t in outputs),
        )

    # ------------------------------------------------------------------ generation
    def _encode(self, messages: Sequence[Message]) -> list[int]:
        text = self.tokenizer.apply_chat_template(
            [dict(m) for m in messages], add_generation_prompt=True, tokenize=False
        )
        # the template already holds any bos/special tokens it wants (as HF's own tokenize=True does)
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _generate(self, requests: list[_Request]) -> list[list[int]]:
        """The new tokens of each request (a stop token, if reached, is the last)."""
        return generate(
            self.model,
            [r.prompt_ids for r in requests],
            pad_id=self._pad_id,
            stop_ids=self._stop_ids,
            seeds=[r.seed for r in requests],
            max_new_tokens=[r.max_tokens for r in requests],
            temperature=[r.temperature for r in requests],
            context=self.context_length,
        ).tokens


def _check_sampling(max_tokens: int, temperature: float) -> tuple[int, float]:
    if max_tokens < 0:
        raise ValueError(f"max_tokens must be >= 0, got {max_tokens}")
    if not temperature >= 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    return int(max_tokens), float(temperature)


def _checkpoint_dir(path: str | Path) -> Path:
    root = Path(path).expanduser()
    if not root.exists():
        raise ValueError(
            f"no checkpoint directory at {str(path)!r}: HFChatModel loads local checkpoints only "
            "(papergym never downloads; save a model with save_pretrained and pass its directory)"
        )
    if not root.is_dir():
        raise ValueError(f"{str(path)!r} is a file; pass the checkpoint's directory")
    if not any(root.glob("*.safetensors")):
        raise ValueError(
            f"{str(path)!r} holds no *.safetensors weights; HFChatModel refuses pickled weights (they "
            "can run code on load): re-save the model with save_pretrained(..., safe_serialization=True)"
        )
    return root.resolve()


def _resolve_dtype(torch: Any, dtype: Any, device: Any) -> Any:
    if dtype is None:
        return torch.float32 if device.type == "cpu" else "auto"
    if isinstance(dtype, str) and dtype != "auto":
        resolved = getattr(torch, dtype, None)
        if not isinstance(resolved, torch.dtype):
            raise ValueError(f"unknown dtype {dtype!r}; use e.g. 'float32', 'bfloat16' or 'auto'")
        return resolved
    return dtype
