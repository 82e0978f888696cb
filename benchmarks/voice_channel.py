"""SpeechGym's measurements on `papergym/VoiceService-v0` (retail, generated tasks, scripted user).

1. Slot mishearing rate: the share of the scenario's slot values (the user's email, names, zip code,
   order ids that gold tool calls need) that reach a tool argument wrongly
   (`papergym.envs.voice.hearing_oracle.slot_errors`), for the `HearingOracle` at temperature 0, on
   the text channel, the real audio channel (Piper -> noise -> its own Whisper ASR) at a sweep of
   SNRs, and the calibrated simulated channel. Also its success rate and tool errors per episode.
2. Gradient starvation: the share of GRPO groups (G = 8, one task per group; member ``i`` resets with
   its own seed, so the channel noise differs, and plays with its own policy seed) whose rewards have
   nonzero variance, outcome-only vs with `ProcessReward` (+0.1 per successful call), for the
   HearingOracle over a sweep of its temperature.
3. Channel cost: real-time factor (processing seconds / audio seconds) of TTS and ASR per turn on
   the turns of oracle episodes, cold (caches cleared, engines already loaded) and with cache hits;
   engine load times.

Usage::

    python benchmarks/voice_channel.py [--tasks 40] [--audio-tasks 4] [--groups 25] [--audio-groups 0]
        [--snrs clean 10] [--write benchmarks/README.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from readme_section import write_section

import papergym  # noqa: F401  (registers the ids)
from papergym.backends import speech
from papergym.core.trajectory import OraclePolicy, member_seed, rollout
from papergym.envs.voice.hearing_oracle import HearingOracle, slot_errors
from papergym.wrappers import ProcessReward

ENV = "papergym/VoiceService-v0"


def _task_ids(n: int) -> list[str]:
    env = gym.make(ENV, channel="text")
    return [env.reset(seed=1000 + i, options={"split": "test"})[1]["task_id"] for i in range(n)]


def mishearing(channel: str, snr_db: float | None, task_ids: Sequence[str]) -> dict[str, float]:
    """Slot mishearing, success and tool errors of the greedy HearingOracle on ``task_ids``."""
    env = gym.make(ENV, channel=channel, snr_db=snr_db)
    slots = wrong = successes = errors = 0
    start = time.perf_counter()
    for i, task_id in enumerate(task_ids):
        traj = rollout(env, HearingOracle(), seed=i, options={"task_id": task_id})
        n, w = slot_errors(env.unwrapped._require().task, [s.info for s in traj.steps])
        slots, wrong, successes = slots + n, wrong + w, successes + int(traj.success)
        errors += sum(r.startswith("Error") for s in traj.steps for r in s.info.get("tool_results", []))
    return {
        "slots": slots,
        "rate": wrong / max(slots, 1),
        "success": successes / len(task_ids),
        "errors": errors / len(task_ids),
        "seconds": (time.perf_counter() - start) / len(task_ids),
    }


def group_variance(
    channel: str, snr_db: float | None, temperature: float, task_ids: Sequence[str], group_size: int = 8
) -> dict[str, float]:
    """Share of groups with nonzero reward variance, outcome-only and with the process reward."""
    outcome_var = process_var = 0
    success = []
    for g, task_id in enumerate(task_ids):
        outcome, shaped = [], []
        for i in range(group_size):
            env = ProcessReward(gym.make(ENV, channel=channel, snr_db=snr_db))
            seed = member_seed(g, i)
            traj = rollout(
                env, HearingOracle(temperature=temperature), seed=seed, options={"task_id": task_id}
            )
            shaped.append(sum(s.reward for s in traj.steps))
            outcome.append(sum(s.info["reward_components"].get("outcome", 0.0) for s in traj.steps))
            success.append(traj.success)
        outcome_var += int(np.var(outcome) > 0)
        process_var += int(np.var(shaped) > 0)
    return {
        "outcome": outcome_var / len(task_ids),
        "process": process_var / len(task_ids),
        "success": float(np.mean(success)),
    }


def _snr(snr: float | None) -> str:
    return "clean" if snr is None else f"{snr:g} dB"


def _rtf(fn: Callable[[], np.ndarray | str], seconds: float) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) / seconds


def channel_cost(n_episodes: int = 1) -> dict[str, Any]:
    """TTS and ASR real-time factors per turn (cold and cached) on the turns of oracle episodes."""
    env = gym.make(ENV, channel="text")
    texts: list[str] = []
    for seed in range(n_episodes):
        rollout(env, OraclePolicy(), seed=seed)
        texts += [m["content"] for m in env.unwrapped._require().dialogue]
    texts = [t for t in dict.fromkeys(texts) if t.strip() and "###" not in t]
    tts, asr = speech.PiperTTS(), speech.WhisperASR()
    start = time.perf_counter()
    tts.synthesize("Warm up.")
    load_tts = time.perf_counter() - start
    start = time.perf_counter()
    asr.transcribe(tts.synthesize("Warm up the recognizer."))
    load_asr = time.perf_counter() - start
    speech.clear_caches()
    rows: dict[str, list[float]] = {"tts_cold": [], "tts_cached": [], "asr_cold": [], "asr_cached": []}
    seconds = []
    for text in texts:
        start = time.perf_counter()
        audio = tts.synthesize(text)
        dur = audio.size / speech.SAMPLE_RATE
        rows["tts_cold"].append((time.perf_counter() - start) / dur)
        rows["tts_cached"].append(_rtf(lambda t=text: tts.synthesize(t), dur))
        rows["asr_cold"].append(_rtf(lambda a=audio: asr.transcribe(a), dur))
        rows["asr_cached"].append(_rtf(lambda a=audio: asr.transcribe(a), dur))
        seconds.append(dur)
    return {
        "turns": len(texts),
        "mean_seconds": float(np.mean(seconds)),
        "load_tts": load_tts,
        "load_asr": load_asr,
        **{k: (float(np.median(v)), float(np.percentile(v, 90))) for k, v in rows.items()},
    }


def run(
    tasks: int,
    audio_tasks: int,
    groups: int,
    audio_groups: int,
    snrs: Sequence[float | None],
    temperatures: Sequence[float],
) -> str:
    lines = [
        "Slot mishearing (HearingOracle, temperature 0; test tasks, the first N the same in every row):",
        "",
        "| channel | SNR | tasks | slot values | misheard | success | tool errors / episode | s / episode |",
        "|---|---|---|---|---|---|---|---|",
    ]
    cases: list[tuple[str, float | None, int]] = [("text", None, tasks)]
    cases += [("simulated", s, tasks) for s in snrs]
    cases += [("audio", s, audio_tasks) for s in snrs if audio_tasks]
    for channel, snr, n in cases:
        m = mishearing(channel, snr, _task_ids(n))
        lines.append(
            f"| {channel} | {_snr(snr)} | {n} | {m['slots']} | {100 * m['rate']:.1f}% "
            f"| {100 * m['success']:.0f}% | {m['errors']:.2f} | {m['seconds']:.1f} |"
        )
    lines += [
        "",
        "GRPO groups with nonzero reward variance (G = 8, HearingOracle; member i resets with its own seed, "
        "so channel noise differs, and samples with its own policy seed):",
        "",
        "| channel | SNR | groups | temperature | outcome only | + process reward | member success |",
        "|---|---|---|---|---|---|---|",
    ]
    for channel, n in (("simulated", groups), ("audio", audio_groups)):
        for snr in snrs[-1:] if n else ():
            for temperature in temperatures:
                v = group_variance(channel, snr, temperature, _task_ids(n))
                lines.append(
                    f"| {channel} | {_snr(snr)} | {n} | {temperature:g} "
                    f"| {100 * v['outcome']:.0f}% | {100 * v['process']:.0f}% | {100 * v['success']:.0f}% |"
                )
    c = channel_cost()
    lines += [
        "",
        f"Channel cost per turn ({c['turns']} distinct turns of oracle episodes, "
        f"mean {c['mean_seconds']:.1f} s of speech; RTF = processing time / audio duration, p50 / p90):",
        "",
        "| engine | RTF cold | RTF cached | target cold / cached |",
        "|---|---|---|---|",
        f"| Piper TTS (joe, noise off) | {c['tts_cold'][0]:.3f} / {c['tts_cold'][1]:.3f} "
        f"| {c['tts_cached'][0]:.5f} / {c['tts_cached'][1]:.5f} | <= 0.5 / <= 0.1 |",
        f"| faster-whisper tiny.en (int8, greedy, 1 thread) "
        f"| {c['asr_cold'][0]:.3f} / {c['asr_cold'][1]:.3f} "
        f"| {c['asr_cached'][0]:.5f} / {c['asr_cached'][1]:.5f} | <= 0.5 / <= 0.1 |",
        "",
        f"Engine load (once per process): Piper {c['load_tts']:.2f} s, Whisper {c['load_asr']:.2f} s. "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs shared with other jobs (x86_64).",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=40, help="tasks per text / simulated row")
    parser.add_argument("--audio-tasks", type=int, default=4, help="tasks per audio row (slow: real speech)")
    parser.add_argument("--groups", type=int, default=25, help="groups per simulated row")
    parser.add_argument("--audio-groups", type=int, default=0, help="groups per audio row (slow)")
    parser.add_argument(
        "--snrs", nargs="+", default=["clean", "10"], help="'clean' or dB; the last one for groups"
    )
    parser.add_argument("--temperatures", nargs="+", type=float, default=[0.0, 1.0, 2.0])
    parser.add_argument("--write", type=Path)
    args = parser.parse_args()
    snrs = [None if s == "clean" else float(s) for s in args.snrs]
    text = run(args.tasks, args.audio_tasks, args.groups, args.audio_groups, snrs, args.temperatures)
    if args.write:
        write_section(args.write, "voice_channel", "Voice channel (`benchmarks/voice_channel.py`)", text)
    print(text)


if __name__ == "__main__":
    main()
