"""Slot finding, the calibrated confusion channel, the simulated channel, the HearingOracle and the
process reward: everything of the voice env that runs without speech engines."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import papergym  # noqa: F401  (registers the ids)
from papergym.core import info_keys as K
from papergym.core.trajectory import OraclePolicy, rollout
from papergym.envs.voice.confusion_table import TABLE
from papergym.envs.voice.hearing_oracle import HearingOracle, slot_errors
from papergym.envs.voice.slots import (
    SLOT_CLASSES,
    ConfusionChannel,
    char_edits,
    empty_stats,
    find_slots,
    nearest_level,
    normalize_heard,
    record,
    stats_from_pairs,
)
from papergym.wrappers import ProcessReward


def test_find_slots_classifies_each_kind_without_overlap() -> None:
    text = (
        "My email is ann_lee@x.com. Order #W1234567, user ann_lee_1234, item 1234567890, "
        "zip 94110, on 2024-05-01 for $12.50, code K7X2Q. My first name is Ann."
    )
    found = [(s.cls, s.value) for s in find_slots(text)]
    assert found == [
        ("email", "ann_lee@x.com"),
        ("order_id", "#W1234567"),
        ("user_id", "ann_lee_1234"),
        ("digits", "1234567890"),
        ("digits", "94110"),
        ("date", "2024-05-01"),
        ("amount", "$12.50"),
        ("code", "K7X2Q"),
        ("name", "Ann"),
    ]
    assert find_slots("Thank you, that is all.") == []


def test_char_edits_cover_both_strings() -> None:
    for said, heard in [("#W123", "W123"), ("a.b@c.com", "a b at c.com"), ("94110", "94 110 0"), ("x", "")]:
        pairs = char_edits(said, heard)
        assert "".join(a for a, _ in pairs) == said
        assert "".join(b for _, b in pairs) == heard


def test_normalisation_undoes_formatting_not_mishearing() -> None:
    assert normalize_heard("hash w 1,234,567") == "#W1234567"
    assert normalize_heard("Order number W1234567") == "Order #W1234567"
    assert normalize_heard("ann.lee at example.com") == "ann.lee@example.com"
    assert normalize_heard("ann lee at example.com") == "ann lee@example.com"  # a dropped dot stays wrong
    assert normalize_heard("I looked at it") == "I looked at it"


def test_record_and_confusion_channel_follow_the_counts() -> None:
    stats = empty_stats()
    record(stats, "12", "12")
    record(stats, "12", "17")
    assert stats["n"] == 2 and stats["wrong"] == 1 and stats["outcomes"]["2"] == {"7": 1}
    channel = ConfusionChannel({"digits": stats}, scale=2.0)
    assert channel.rate("digits") == 1.0 and channel.rate("email") == 0.0
    rng = np.random.default_rng(0)
    assert channel("my zip is 12 and 12", rng) == "my zip is 17 and 17"
    assert ConfusionChannel({"digits": stats}, scale=0.0)("my zip is 12", rng) == "my zip is 12"


def test_shipped_table_is_calibrated_and_noise_hurts() -> None:
    levels = {k: stats_from_pairs(v) for k, v in TABLE["levels"].items()}
    assert "clean" in levels and len(levels) >= 2
    for level in levels.values():
        assert set(level) == set(SLOT_CLASSES) and all(s["n"] >= 6 for s in level.values())
    wrong = {
        k: sum(s["wrong"] for s in v.values()) / sum(s["n"] for s in v.values()) for k, v in levels.items()
    }
    noisiest = min((k for k in levels if k != "clean"), key=float)
    assert wrong[noisiest] >= wrong["clean"]
    assert nearest_level(levels, None) == "clean" and nearest_level(levels, float(noisiest) - 1) == noisiest


def test_simulated_channel_oracle_succeeds_and_user_turns_pass_the_channel() -> None:
    env = gym.make("papergym/VoiceService-v0", channel="simulated")
    for seed in range(3):
        assert rollout(env, OraclePolicy(), seed=seed).success
    loud = gym.make("papergym/VoiceService-v0", channel="simulated", snr_db=10.0, confusion_scale=100.0)
    loud.reset(seed=0)
    obs, *_ = loud.step(loud.unwrapped.oracle_action())  # asks for identification
    said = loud.unwrapped._require().dialogue[-1]["content"]
    assert find_slots(said) and loud.unwrapped.heard[-1] == obs and obs != said


def test_hearing_oracle_is_perfect_on_the_text_channel_and_mishears_on_a_noisy_one() -> None:
    text = gym.make("papergym/VoiceService-v0", channel="text")
    for seed in range(4):
        traj = rollout(text, HearingOracle(), seed=seed)
        assert traj.success
        assert slot_errors(text.unwrapped._require().task, [s.info for s in traj.steps])[1] == 0
    noisy = gym.make("papergym/VoiceService-v0", channel="simulated", snr_db=10.0, confusion_scale=100.0)
    slots = wrong = errors = 0
    for seed in range(4):
        traj = rollout(noisy, HearingOracle(max_retries=1), seed=seed)
        n, w = slot_errors(noisy.unwrapped._require().task, [s.info for s in traj.steps])
        slots, wrong = slots + n, wrong + w
        errors += sum(r.startswith("Error") for s in traj.steps for r in s.info.get(K.TOOL_RESULTS, []))
    assert slots > 0 and wrong > 0 and errors > 0


def test_hearing_oracle_samples_by_its_seed_at_temperature() -> None:
    env = gym.make("papergym/VoiceService-v0", channel="text")
    greedy = {tuple(s.action for s in rollout(env, HearingOracle(), seed=3).steps) for _ in range(2)}
    assert len(greedy) == 1
    hot = {
        tuple(s.action for s in rollout(env, HearingOracle(temperature=2.0), seed=3, policy_seed=k).steps)
        for k in range(6)
    }
    assert len(hot) > 1


def test_process_reward_credits_each_successful_tool_call() -> None:
    env = ProcessReward(gym.make("papergym/VoiceService-v0", channel="text"), bonus=0.25)
    traj = rollout(env, OraclePolicy(), seed=0)
    calls = sum(1 for s in traj.steps if s.info.get(K.TOOL_RESULTS))
    assert calls > 0 and traj.success
    processes = [s.info[K.REWARD_COMPONENTS].get("process", 0.0) for s in traj.steps]
    assert sum(processes) == pytest.approx(0.25 * calls)
    assert sum(s.reward for s in traj.steps) == pytest.approx(1.0 + 0.25 * calls)
    env.reset(seed=0)
    bad = env.step('<tool_call>{"name": "get_order_details", "arguments": {"order_id": "#W0"}}</tool_call>')
    assert bad[4][K.TOOL_RESULTS][0].startswith("Error")
    assert "process" not in bad[4][K.REWARD_COMPONENTS] and bad[1] == 0.0
    capped = ProcessReward(gym.make("papergym/VoiceService-v0", channel="text"), max_calls=1)
    total = sum(
        s.info[K.REWARD_COMPONENTS].get("process", 0.0) for s in rollout(capped, OraclePolicy(), seed=0).steps
    )
    assert total == pytest.approx(0.1)


def test_bad_constructor_arguments_name_the_fix() -> None:
    with pytest.raises(ValueError, match="channel must be one of"):
        gym.make("papergym/VoiceService-v0", channel="radio")
    with pytest.raises(ValueError, match="unknown tts"):
        gym.make("papergym/VoiceService-v0", tts="festival")
    with pytest.raises(ValueError, match="rate_jitter"):
        gym.make("papergym/VoiceService-v0", rate_jitter=0.7)
    with pytest.raises(ValueError, match="voices"):
        gym.make("papergym/VoiceService-v0", voices=("alto",))
    with pytest.raises(TypeError, match="provenanse"):
        gym.make("papergym/VoiceService-v0", channel="simulated", provenanse=False)


@pytest.mark.parametrize("provenance", [True, False])
def test_service_arguments_pass_through_including_provenance(provenance: bool) -> None:
    env = gym.make("papergym/VoiceService-v0", channel="simulated", domain="airline", provenance=provenance)
    env.reset(seed=0)
    _, _, _, _, info = env.step(env.unwrapped.oracle_action())
    assert env.unwrapped.domain_name == "airline"
    assert (K.PROVENANCE in info) is provenance


def test_the_compact_prompt_passes_through_to_the_service_env() -> None:
    full = gym.make("papergym/VoiceService-v0", channel="simulated")
    compact = gym.make("papergym/VoiceService-v0", channel="simulated", prompt="compact")
    (long, _), (short, info) = full.reset(seed=3), compact.reset(seed=3)
    assert "<policy>" in long and "<policy>" not in short and len(short) < len(long) / 4
    assert short.rsplit("</tools>", 1)[1] == long.rsplit("</tools>", 1)[1]  # the same user turn, as heard
    assert info["tools"] and info["policy"]
