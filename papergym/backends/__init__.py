"""Every model in the loop, behind one-method Protocols (`papergym.backends.protocols`).

## The backend rule
- **One kwarg per role, one type.** Every env constructor takes its backends as the kwargs ``user``,
  ``judge``, ``critic``, ``world_model``, ``reader``, ``retriever``, ``tts``, ``asr`` (the IAPO hook:
  ``annotator``), each typed ``Role | str | ChatModel | None = None`` with ``Role`` the protocol of
  `papergym.backends.protocols`; never ``Any``.
- **None is the embedded default**, always: the scripted user, the oracle critic, the rule reader, the
  simulator's own world model, BM25, Piper, Whisper. None never means "off".
- **A feature that can be off has its own flag** (``use_judge: bool``), not a None backend.
- **A string names a registered implementation** (``retriever="bm25"``, ``tts="piper"``,
  ``judge="screen"``); names once accepted keep resolving.
- **A bare `ChatModel` becomes the role's model-backed class**: `ModelUser`, `ModelJudge`,
  `ModelCritic`, `ModelReader`, `ModelAnnotator` (the world model's is `CodeWorldModel`). Pass the class
  yourself to set its prompts.
- **One resolver.** Constructors call `resolve_backend` (``papergym.backends.resolve``); no env
  re-implements the None / name / ChatModel dispatch.

## Public names
``from papergym.backends import HFChatModel, OpenAIChatModel, CachedChatModel, ChatModelPolicy, ModelUser,
ModelJudge, ModelCritic, ModelReader, ModelAnnotator`` (and the protocols). They load lazily: importing this
package pulls in neither torch, transformers nor openai.
"""

from __future__ import annotations

from papergym.core.lazy import lazy_exports

_ROLES = ("ModelJudge", "ModelCritic", "ModelReader", "ModelUser", "ModelAnnotator")
_PROTOCOLS = (
    "Message",
    "ChatModel",
    "WorldModel",
    "UserSimulator",
    "TaskBoundUser",
    "DeviceUser",
    "Judge",
    "Critic",
    "Reader",
    "Annotator",
    "Retriever",
    "TTS",
    "ASR",
)
_EXPORTS = {
    "HFChatModel": "papergym.backends.hf",
    "OpenAIChatModel": "papergym.backends.openai_compat",
    "CachedChatModel": "papergym.backends.cache",
    "ChatModelPolicy": "papergym.backends.policy",
    "resolve_backend": "papergym.backends.resolve",
    **dict.fromkeys(_ROLES, "papergym.backends.model_roles"),
    **dict.fromkeys(_PROTOCOLS, "papergym.backends.protocols"),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
