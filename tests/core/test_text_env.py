from __future__ import annotations

import pickle
import warnings

import gymnasium as gym
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import check_env

from papergym.core import info_keys as K
from papergym.core.trajectory import OraclePolicy, rollout
from tests.conftest import CounterEnv


def test_reset_returns_task_info_and_first_text(counter_env: CounterEnv) -> None:
    obs, info = counter_env.reset(seed=1)
    assert obs.startswith("Reach ")
    assert info[K.TASK_ID].startswith("counter/train/L")
    assert info[K.SPLIT] == "train"
    assert counter_env.success_check() is False


def test_options_select_split_difficulty_and_task(counter_env: CounterEnv) -> None:
    _, info = counter_env.reset(seed=1, options={"split": "test", "difficulty": 3})
    assert info[K.SPLIT] == "test" and info[K.DIFFICULTY] == 3
    task_id = info[K.TASK_ID]
    _, again = counter_env.reset(seed=99, options={"task_id": task_id})
    assert again[K.TASK_ID] == task_id
    with pytest.raises(ValueError, match="unknown reset option"):
        counter_env.reset(options={"taskid": task_id})


def test_step_reward_is_the_sum_of_components_and_success_at_end(counter_env: CounterEnv) -> None:
    trajectory = rollout(counter_env, OraclePolicy(), seed=3)
    assert trajectory.success and trajectory.terminated
    last = trajectory.steps[-1]
    assert last.reward == sum(last.info[K.REWARD_COMPONENTS].values()) == 1.0
    assert last.info[K.SUCCESS] is True
    assert all(K.SUCCESS not in s.info for s in trajectory.steps[:-1])


@pytest.mark.parametrize("action", [None, 3, b"+1", ["+1"]])
def test_non_string_action_is_invalid_not_an_exception(counter_env: CounterEnv, action: object) -> None:
    counter_env.reset(seed=0)
    obs, reward, terminated, truncated, info = counter_env.step(action)
    assert info[K.INVALID_ACTION] is True
    assert reward == -counter_env.format_penalty
    assert "string" in obs and not terminated and not truncated


def test_too_long_action_is_invalid() -> None:
    env = CounterEnv(max_action_length=16)
    env.reset(seed=0)
    obs, _, _, _, info = env.step("+1" * 100)
    assert info[K.INVALID_ACTION] and "limit is 16" in obs


def test_step_before_reset_and_after_end_raise() -> None:
    env = CounterEnv()
    with pytest.raises(ResetNeeded):
        env.step("+1")
    env.reset(seed=0)
    env.step("done")
    with pytest.raises(ResetNeeded):
        env.step("+1")


def test_chat_mode_shows_the_whole_conversation() -> None:
    env = CounterEnv(obs_mode="chat")
    obs, _ = env.reset(seed=2)
    assert [m["role"] for m in obs] == ["user"]
    obs, *_ = env.step("+1")
    assert [m["role"] for m in obs] == ["user", "assistant", "user"]
    assert obs[1]["content"] == "+1" and obs[2]["content"] == "value=1"
    assert obs in env.observation_space


def test_long_environment_text_is_cut_with_a_marker() -> None:
    env = CounterEnv(max_observation_length=100)
    env.reset(seed=0)
    text = env._cap("y" * 500)
    assert len(text) <= 100 and text.endswith("characters cut]")


def test_snapshot_restore_forks_the_full_state(counter_env: CounterEnv) -> None:
    counter_env.reset(seed=4)
    counter_env.step("+1")
    snap = counter_env.snapshot()
    branch_a = [counter_env.step("+2")[0] for _ in range(2)]
    counter_env.restore(snap)
    assert counter_env.value == 1
    assert [counter_env.step("+2")[0] for _ in range(2)] == branch_a
    counter_env.restore(snap)  # a snapshot stays reusable
    assert counter_env.value == 1


def test_render_ansi_and_timings_outside_info() -> None:
    env = CounterEnv(render_mode="ansi")
    env.reset(seed=0)
    _, _, _, _, info = env.step("+1")
    text = env.render()
    assert "[assistant] +1" in text and "[user] value=1" in text
    assert env.timings.steps == 1 and env.timings.resets == 1 and env.timings.last_step_s > 0
    assert not any("time" in key for key in info)


def test_bad_constructor_args_raise_value_error() -> None:
    with pytest.raises(ValueError, match="obs_mode"):
        CounterEnv(obs_mode="tokens")
    with pytest.raises(ValueError, match="render_mode"):
        CounterEnv(render_mode="human")
    with pytest.raises(ValueError, match="format_penalty"):
        CounterEnv(format_penalty=-1)


def test_env_pickles_mid_episode(counter_env: CounterEnv) -> None:
    counter_env.reset(seed=5)
    counter_env.step("+1")
    clone = pickle.loads(pickle.dumps(counter_env))
    assert clone.step("+1")[0] == counter_env.step("+1")[0]


def test_check_env_passes_on_the_base_class(counter_env: CounterEnv) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(counter_env, skip_render_check=True)  # unregistered: no spec to re-make with
    assert isinstance(counter_env.action_space.sample(), str)
    assert isinstance(counter_env, gym.Env)


def test_context_resetting_envs_show_only_the_current_context() -> None:
    class ResettingCounter(CounterEnv):
        resets_context = True

        def _system_prompt(self, task: object) -> str:
            return "Count."

    env = ResettingCounter(obs_mode="chat", render_mode="ansi")
    obs, info = env.reset(seed=2)
    assert [m["role"] for m in obs] == ["system", "user"] and info[K.CONTEXT_RESET] is False
    env.step("+1")
    obs, _, _, _, info = env.step("+1")
    assert obs == ({"role": "system", "content": "Count."}, {"role": "user", "content": "value=2"})
    assert info[K.CONTEXT_RESET] is True
    assert "[assistant] +1" in env.render()  # the transcript is still kept for rendering
    assert K.CONTEXT_RESET not in CounterEnv().reset(seed=0)[1]
