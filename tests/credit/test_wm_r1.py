"""WM-R1's group reward on hand-computed groups."""

from __future__ import annotations

import pytest

from papergym.core import info_keys as K
from papergym.core.trajectory import Step, Trajectory
from papergym.credit.wm_r1 import WMR1Reward


def _traj(
    success: bool,
    length: int,
    n_wm: int,
    invalid: bool = False,
    true_success: bool = False,
    budget: int = 15,
) -> Trajectory:
    steps = [
        Step("o", "imagine", 0.0, {K.IMAGINED: True, K.N_WM: k + 1, K.STEP_BUDGET: budget})
        for k in range(n_wm)
    ]
    for k in range(length):
        info = {K.IMAGINED: False, K.N_WM: n_wm, K.INVALID_ACTION: invalid and k == 0, K.STEP_BUDGET: budget}
        steps.append(Step("o", "act", 0.0, info))
    steps[-1].info[K.TRUE_SUCCESS] = true_success  # type: ignore[index]
    return Trajectory("t/test/L1/0", 0, steps, success=success)


def test_hand_computed_group() -> None:
    # p = 0.5; L_ref = 5, L_budget = 10; N_ref = 2, N_budget = 3.5 (max_steps 15, n_wm_max 5).
    group = [_traj(True, 4, 1), _traj(True, 6, 3), _traj(False, 15, 0), _traj(False, 10, 5, invalid=True)]
    rewards = WMR1Reward(max_steps=15, n_wm_max=5)(group)
    # A: R_L = 0.8, R_WM = 0.5 + 0.5 * 2.5 / 3.5; B: R_L = 0.7, R_WM = 0.5 + 0.5 * 0.5 / 3.5
    # C: R_L = -0.1, R_WM = -1.0; D: R_L = -0.1, R_WM = -0.1, format 0.5 * -0.5
    expected = [
        1 + 0.5 * 0.8 + 0.1 * (0.5 + 0.5 * 2.5 / 3.5),
        1 + 0.5 * 0.7 + 0.1 * (0.5 + 0.5 * 0.5 / 3.5),
        0.5 * -0.1 + 0.1 * -1.0,
        0.5 * -0.1 + 0.1 * -0.1 - 0.25,
    ]
    assert rewards == pytest.approx(expected)
    assert rewards[0] == pytest.approx(1.4857142857)


def test_all_failed_uses_the_caps_and_all_won_with_no_calls_stays_finite() -> None:
    failed = WMR1Reward(max_steps=20, n_wm_max=5)([_traj(False, 20, 5), _traj(False, 10, 0)])
    # p = 0: budgets are the caps (20, 5). lambda = 0 and -0.5 (R_L = -0.1, -0.55); mu = 0 and -1.
    assert failed == pytest.approx([0.5 * -0.1 + 0.1 * -0.1, 0.5 * -0.55 + 0.1 * -1.0])
    won = WMR1Reward()([_traj(True, 3, 0), _traj(True, 5, 0)])
    # L_budget = 4: lambda = -0.25, 0.25; N_budget = 0 -> 1: mu = -1 for both (R_WM = 1.0).
    assert won == pytest.approx([1 + 0.5 * 0.625 + 0.1 * 1.0, 1 + 0.5 * 0.375 + 0.1 * 1.0])


def test_true_success_labels_are_never_read() -> None:
    group = [_traj(True, 4, 1, true_success=False), _traj(False, 8, 2, true_success=True)]
    flipped = [_traj(True, 4, 1, true_success=True), _traj(False, 8, 2, true_success=False)]
    assert WMR1Reward()(group) == WMR1Reward()(flipped)
    assert WMR1Reward()([]) == []


def test_the_step_cap_is_the_tasks_budget_from_the_env() -> None:
    group = [_traj(False, 20, 5, budget=20), _traj(False, 10, 0, budget=20)]
    # the same numbers as a fixed cap of 20 (the all-failed case above), read from info["step_budget"]
    assert WMR1Reward()(group) == pytest.approx(WMR1Reward(max_steps=20)(group))
    assert WMR1Reward()(group) != pytest.approx(WMR1Reward(max_steps=15)(group))
    with pytest.raises(ValueError, match="step budgets"):
        WMR1Reward()([_traj(False, 3, 0, budget=12), _traj(False, 3, 0, budget=14)])


def test_the_budget_of_a_real_world_model_gui_episode_is_used() -> None:
    import gymnasium as gym

    import papergym  # noqa: F401
    from papergym.core.trajectory import OraclePolicy, rollout

    env = gym.make("papergym/WorldModelGUI-v0")
    won = rollout(env, OraclePolicy(), seed=0, options={"template": "SystemWifiTurnOn"})
    budget = won.steps[-1].info[K.STEP_BUDGET]
    lost = Trajectory(won.task_id, 0, won.steps[:1], success=False)
    assert WMR1Reward().step_cap([won, lost]) == budget != 15
