"""`papergym/VoiceService-v0`: the service tasks spoken and heard through a speech channel (SpeechGym)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np
from gymnasium import spaces

from papergym.backends.protocols import ASR, TTS
from papergym.backends.speech import add_noise, audio_problem, make_asr, make_tts
from papergym.core import info_keys as K
from papergym.core.spaces import SAMPLE_RATE, Waveform
from papergym.core.text_env import Turn
from papergym.envs.service.service_env import ServiceAgentEnv
from papergym.envs.service.user import STOP_TOKENS, stop_token
from papergym.envs.voice.slots import ConfusionChannel, nearest_level, stats_from_pairs

Channel = Literal["audio", "transcript", "simulated", "text"]
CHANNELS: tuple[str, ...] = ("audio", "transcript", "simulated", "text")
USER_AUDIO = "[the user speaks: audio]"
"""The text standing for a user turn in audio mode (the words are only in the waveform)."""
AGENT_AUDIO = "[agent audio]"
"""The transcript entry of an action that was a waveform."""
MAX_SPOKEN_CHARS = 240
"""Longer utterances are cut before synthesis (inferred: a spoken turn is short; bounds TTS cost)."""
_TOKENS = re.compile("|".join(re.escape(t) for t in STOP_TOKENS))
_EMPTY = np.zeros(0, np.float32)
_EMPTY.setflags(write=False)


@dataclass
class _Voice:
    """The channel's per-episode state (snapshotted with the service state)."""

    audio: np.ndarray = field(default_factory=lambda: _EMPTY)
    agent_audio: Any = None
    heard: list[str] = field(default_factory=list)


class VoiceServiceEnv(ServiceAgentEnv):
    """The service env (tau2-bench tasks, tools and evaluation, unmodified) with a speech channel.

    ## Description
    SpeechGym's setting: the same customer-service tasks as ``papergym/ServiceAgent-v0``, but the user
    and the agent talk through speech. Each user message is synthesized (Piper by default), optionally
    varied (speaking rate, voice) and noised at a chosen SNR, all seeded from the env's generator; the
    agent either gets the waveform (``channel="audio"``), its real ASR transcript (``"transcript"``,
    faster-whisper tiny.en by default) or a text-level confusion channel calibrated on the real one
    (``"simulated"``, for fast CPU training). The agent's replies travel back the same way, so the user
    simulator may mishear the agent too. Tools and tool results stay text. ``"text"`` is the clean
    channel (the service env itself), for comparisons.

    ## Observation
    ``"transcript"``, ``"simulated"``, ``"text"``: as ServiceAgent-v0 (str, or a chat tuple), user turns
    as heard. ``"audio"``: a Dict with ``audio`` (`Waveform`: the user's latest turn, 16 kHz mono
    float32; empty on tool-result steps) and ``text`` (system text and tool results; a user turn shows
    only the marker ``[the user speaks: audio]`` and any stop token: the words are never text).

    ## Action
    Text as ServiceAgent-v0 (a message, which is spoken, or a tool call). In audio mode also
    ``{"audio": waveform}``: speech the agent produced (16 kHz mono float32 in [-1, 1], at most
    ``max_audio_seconds``), which the user hears through ASR. Bad audio (NaN, inf, empty, wrong dtype,
    shape or length) gets feedback and the ``format`` penalty, never an exception.

    ## Reward
    Unchanged from ServiceAgent-v0: the ``outcome`` term (tau2's checks) and ``format``. SpeechGym's
    per-turn process reward is the wrapper `papergym.wrappers.ProcessReward`.

    ## Episode End
    As ServiceAgent-v0 (stop tokens, ``max_errors`` tool errors, ``max_steps``, user backend faults).

    ## Arguments
    - ``channel``: ``"audio"`` (default), ``"transcript"``, ``"simulated"`` or ``"text"``.
    - ``tts`` / ``asr``: None (the embedded Piper / Whisper, extra ``audio``), an engine name (``"piper"`` /
      ``"whisper"``; ``"espeak"`` / ``"pocketsphinx"``, extra ``audio-light``) or an object with
      ``synthesize`` / ``transcribe``.
    - ``snr_db``: white noise added to every spoken turn at this SNR (None: clean). The simulated
      channel uses the calibration level nearest to it.
    - ``rate_jitter``: speaking rate drawn per turn from 1 +- this (steps of 0.05; 0 = fixed).
    - ``voices``: voices drawn per turn (engine names, e.g. espeak's ``"en-us+f3"``; None = default).
    - ``hear_agent``: the user hears the agent through the channel (default True).
    - ``confusion_scale``: multiplies the simulated channel's calibrated error rates.
    - ``max_audio_seconds``: the `Waveform` limit of observations and audio actions.
    - ``**service_kwargs``: the service env's arguments, passed on unchanged: ``domain``, ``tau2_data``,
      ``user``, ``use_judge``, ``judge``, ``enforce_policy``, ``max_steps``, ``max_errors``, ``obs_mode``,
      ``render_mode``, ``format_penalty``, ``provenance``, ``prompt`` (``"compact"`` for small-context
      models such as the tiny LM of ``papergym reproduce speechgym``).

    ``deterministic`` is False when an engine is not sample-exact (espeak): the same seed and actions
    then need not replay identically across processes. Piper (noise off) and Whisper (temperature 0)
    are exact.

    ## Paper
    SpeechGym (arXiv 2608.26432; papers/envs.md §2), on tau2-bench (§2.2).

    ## Version History
    - v0: retail, airline, telecom (the user's device tools run inside the user simulator; only its
      words are spoken); channels audio, transcript, simulated, text.

    >>> import gymnasium as gym, papergym
    >>> env = gym.make("papergym/VoiceService-v0", channel="simulated")
    >>> obs, info = env.reset(seed=0)
    >>> done = False
    >>> while not done:
    ...     obs, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
    ...     done = terminated or truncated
    >>> reward, info["success"]
    (1.0, True)
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        *,
        channel: Channel = "audio",
        tts: TTS | str | None = None,
        asr: ASR | str | None = None,
        snr_db: float | None = None,
        rate_jitter: float = 0.0,
        voices: tuple[str, ...] | None = None,
        hear_agent: bool = True,
        confusion_scale: float = 1.0,
        max_audio_seconds: float = 30.0,
        **service_kwargs: Any,
    ) -> None:
        super().__init__(**service_kwargs)
        if channel not in CHANNELS:
            raise ValueError(f"channel must be one of {CHANNELS}, got {channel!r}")
        if not 0.0 <= rate_jitter < 0.5:
            raise ValueError(f"rate_jitter must be in [0, 0.5), got {rate_jitter}")
        self.channel = channel
        self.tts = make_tts(tts)
        self.asr = make_asr(asr)
        self.snr_db = None if snr_db is None else float(snr_db)
        self.rate_jitter = float(rate_jitter)
        self.voices = tuple(voices) if voices else None
        if self.voices and set(self.voices) - set(getattr(self.tts, "voices", self.voices)):
            raise ValueError(f"{self.tts!r} has the voices {self.tts.voices}, not all of {self.voices}")
        self.hear_agent = bool(hear_agent)
        self.max_audio_samples = round(float(max_audio_seconds) * SAMPLE_RATE)
        self.confusion: ConfusionChannel | None = None
        if channel == "simulated":
            from papergym.envs.voice.confusion_table import TABLE

            level = nearest_level(TABLE["levels"], self.snr_db)
            stats = stats_from_pairs(TABLE["levels"][level])
            self.confusion = ConfusionChannel(stats, scale=confusion_scale)
        speaks = channel in ("audio", "transcript")
        self.deterministic = not speaks or bool(
            getattr(self.tts, "exact", False) and getattr(self.asr, "exact", False)
        )
        if channel == "audio":
            self.observation_space = spaces.Dict(
                {"audio": Waveform(max_audio_seconds), "text": self.observation_space}
            )
        self._v = _Voice()

    # ------------------------------------------------------------------ the channel
    def _speak(self, text: str) -> np.ndarray:
        """The waveform of ``text`` as this episode's speaker says it (rate, voice and noise seeded)."""
        rng = self.np_random
        rate = 1.0
        if self.rate_jitter > 0:
            steps = round(self.rate_jitter / 0.05)
            rate = 1.0 + 0.05 * int(rng.integers(-steps, steps + 1))
        voice = self.voices[int(rng.integers(len(self.voices)))] if self.voices else None
        spoken = text[:MAX_SPOKEN_CHARS]
        audio = self.tts.synthesize(spoken, rate=rate, voice=voice) if spoken.strip() else _EMPTY
        if self.snr_db is not None and audio.size:
            audio = add_noise(audio, self.snr_db, rng)
        return np.asarray(audio[: self.max_audio_samples], np.float32)

    def _through(self, text: str) -> str:
        """``text`` as the listener perceives it (transcript / simulated / text channels)."""
        if self.channel == "text":
            return text
        if self.channel == "simulated":
            return self.confusion(text, self.np_random)  # type: ignore[misc]
        return self.asr.transcribe(self._speak(text))

    def hear(self, audio: np.ndarray) -> str:
        """The env's ASR applied to ``audio`` (what a listener using the env's engine hears)."""
        return self.asr.transcribe(np.asarray(audio, np.float32))

    def _user_reply(self) -> str | Turn:
        s = self._require()
        last = s.dialogue[-1] if s.dialogue else None
        if (
            self.hear_agent
            and last is not None
            and last["role"] == "assistant"
            and self._v.agent_audio is None
        ):
            s.dialogue[-1] = {"role": "assistant", "content": self._heard_agent(last["content"])}
        self._v.agent_audio = None
        reply = super()._user_reply()
        if isinstance(reply, Turn):
            return reply
        token = stop_token(reply)
        words = _TOKENS.sub(" ", reply).strip()
        if self.channel == "audio":
            self._v.audio = self._speak(words)
            heard = USER_AUDIO if words else ""
        else:
            heard = self._through(words) if words else ""
        self._v.heard.append(heard)
        return f"{heard} {token}".strip() if token else heard

    def _heard_agent(self, text: str) -> str:
        words = _TOKENS.sub(" ", text).strip()
        return self._through(words) if self.channel != "audio" else self.hear(self._speak(words))

    # ------------------------------------------------------------------ actions
    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        if self._episode is not None and not self._episode.done:
            self._v.audio = _EMPTY
            self._v.agent_audio = None
            if self.channel == "audio" and isinstance(action, Mapping):
                self._v.agent_audio = action.get("audio", _MISSING)
                return super().step(AGENT_AUDIO)
        return super().step(action)

    def _act(self, action: str) -> Turn:
        pending = self._v.agent_audio
        if pending is not None and getattr(self._require(), "failure", None) is not None:
            self._v.agent_audio = pending = None  # the user failed at reset: the service env truncates
        if pending is None:
            return super()._act(action)
        if pending is _MISSING:
            problem = 'An audio action is a dict {"audio": waveform}.'
        else:
            problem = audio_problem(pending, self.max_audio_samples)
        if problem is not None:
            self._v.agent_audio = None
            return self._invalid(f"Invalid audio: {problem}", **{K.PARSED_ACTION: None})
        heard = self.hear(pending)
        s = self._require()
        s.dialogue.append({"role": "assistant", "content": heard})
        s.events.append({"kind": "agent", "text": heard})
        turn = self._message_reply()
        if not (turn.terminated or turn.truncated) and self._episode_steps() + 1 >= self.max_steps:
            return self._step_limit(turn)
        return turn

    def _message_reply(self) -> Turn:
        """The user's answer to a message already in the dialogue (an audio action)."""
        return self._answer()

    def _step_limit(self, turn: Turn) -> Turn:
        from papergym.envs.service.evaluation import Outcome

        self._require().outcome = Outcome(0.0)
        return Turn(
            turn.text + "\n[The step limit is reached.]",
            {**turn.reward_components, "outcome": 0.0},
            truncated=True,
            info={**turn.info, **self._final_info()},
            role=turn.role,
        )

    # ------------------------------------------------------------------ observations and state
    def _start(self, task: Any) -> Turn:
        self._v = _Voice()
        return super()._start(task)

    def _observe(self, text: str) -> Any:
        obs = super()._observe(text)
        if self.channel != "audio":
            return obs
        return {"audio": self._v.audio.copy(), "text": obs}  # fresh data every call (cache stays intact)

    def _state(self) -> Any:
        return (super()._state(), self._v)

    def _load_state(self, state: Any) -> None:
        service, voice = state
        super()._load_state(service)
        self._v = voice

    def procedure(self) -> tuple[Any, ...]:
        """The task's procedure (the oracle's plan): what `HearingOracle` knows besides what it hears."""
        return self._plan()

    @property
    def heard(self) -> tuple[str, ...]:
        """What the agent was given of each user turn this episode (transcripts; markers in audio mode)."""
        return tuple(self._v.heard)

    @property
    def contract_budget(self) -> dict[str, int] | None:
        """Smaller test and demo sizes for channels that run real TTS / ASR.

        Read by tests/test_contract.py and by ``papergym demo`` (``demo_episodes``).
        """
        if self.channel in ("audio", "transcript"):
            sizes = {"tasks": 1, "examples": 2, "resets": 8, "seeds": 2, "digest_seeds": 1}
            return {**sizes, "demo_episodes": 5}
        return None


_MISSING = object()


CONTRACT_VARIANTS: list[dict[str, Any]] = [
    {"channel": "simulated"},
    {"channel": "simulated", "domain": "airline"},
    {"channel": "simulated", "domain": "telecom"},
    {"channel": "transcript"},
    {"channel": "audio"},
]
"""The channels and service domains the contract tests cover (real speech on retail only, with
`contract_budget` sizes: every turn costs real TTS and ASR)."""
