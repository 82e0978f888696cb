"""The learned service menu policy: reading the conversation, well-formed calls with heard values, labels
that reproduce the demonstrator, behaviour cloning, same seed same run, and GRPO on both rewards."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

pytest.importorskip("torch")

from papergym.baselines import menu_grpo
from papergym.baselines import retail_menu as menu
from papergym.baselines.softmax_grpo import Sample, SoftmaxHeads
from papergym.core.tool_calls import parse_tool_calls
from papergym.envs.voice.hearing_oracle import HearingOracle

ARGS = menu_grpo.Args()


@pytest.fixture(scope="module")
def env():
    env = menu_grpo.make_env(ARGS.env, ARGS.env_kw)
    yield env
    env.close()


def _user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def _agent(text: str) -> dict[str, str]:
    return {"role": "assistant", "content": text}


def _tool(text: str) -> dict[str, str]:
    return {"role": "tool", "content": text}


def test_reading_follows_ids_results_failures_and_confirmation() -> None:
    lookup = '<tool_call>{"name": "find_user_id_by_email", "arguments": {"email": "a@b.com"}}</tool_call>'
    user = '{"user_id": "ann_1", "orders": ["#W1", "#W2"], "payment_methods": {}}'
    order = '{"order_id": "#W2", "status": "pending", "items": [{"name": "Lamp", "item_id": "9"}]}'
    talk = [_user("Hi, cancel my lamp order please."), _agent(menu.ASKS["ask_email"])]
    reading = menu.Reading.of([*talk, _user("My email is a at b.com.")])
    assert reading.request.startswith("Hi, cancel") and reading.facts == {"email": "a@b.com"}
    assert parse_tool_calls(reading.lookup()).calls[0].to_dict()["arguments"] == {"email": "a@b.com"}
    heard = reading.progress()
    failed = menu.Reading.of(
        [*talk, _user("My email is a at b.com."), _agent(lookup), _tool("Error: no user")]
    )
    assert failed.failed and failed.user_id is None and failed.progress() != heard
    assert not menu.Reading.of(
        [
            *talk,
            _user("My email is a at b.com."),
            _agent(lookup),
            _tool("Error: x"),
            _user("My email is a at b.com."),
        ]
    ).failed  # heard again: a fresh try
    get_user = '<tool_call>{"name": "get_user_details", "arguments": {"user_id": "ann_1"}}</tool_call>'
    done = menu.Reading.of(
        [
            *talk,
            _user("My email is a at b.com."),
            _agent(lookup),
            _tool("ann_1"),
            _agent(get_user),
            _tool(user),
        ]
    )
    assert done.user_id == "ann_1" and done.user is not None
    assert '"order_id": "#W1"' in done.lookup()  # nothing heard: the user's next unread order
    get_order = '<tool_call>{"name": "get_order_details", "arguments": {"order_id": "#W2"}}</tool_call>'
    read = menu.Reading.of([*talk, _agent(get_order), _tool(order)])
    assert read.target()["order_id"] == "#W2"  # the order holding the item the request names
    confirm = menu.render(read, {"act": menu.ACTS.index("confirm"), "write": 0, "reason": 0})
    assert confirm.endswith("Do you confirm (yes/no)?") and "#W2" in confirm
    assert menu.Reading.of([*talk, _agent(confirm), _user("Yes, please go ahead.")]).confirmed
    assert not menu.Reading.of([*talk, _agent(confirm), _user("No, please do not do that.")]).confirmed


def test_every_choice_says_a_well_formed_action(env) -> None:
    observation, _ = env.reset(seed=4, options=menu_grpo.TRAIN_OPTIONS)
    reading = menu.Reading.of(observation)
    for act in range(len(menu.ACTS)):
        for write in range(len(menu.WRITES)):
            text = menu.render(
                reading, {"act": act, "write": write, "reason": 1, "pay": 3, "items": 1, "field": 2}
            )
            parsed = parse_tool_calls(text)
            assert parsed.ok and text.strip()
            if menu.ACTS[act] in ("lookup", "write"):
                assert len(parsed.calls) == 1


def test_labels_reproduce_the_demonstrators_actions(env) -> None:
    oracle, labelled, calls = HearingOracle(), 0, 0
    for seed in range(12):
        oracle.bind(env)
        oracle.reset(seed=seed)
        observation, info = env.reset(seed=seed, options=menu_grpo.TRAIN_OPTIONS)
        done = False
        while not done:
            action = oracle(observation, info)
            reading = menu.Reading.of(observation)
            choice = menu.label(reading, action, None)
            if choice is not None:
                labelled += 1
                said = menu.render(reading, choice)
                if parse_tool_calls(action).calls:  # a labelled call is the demonstrator's call exactly
                    calls += 1
                    assert parse_tool_calls(said).calls == parse_tool_calls(action).calls
                decisions = menu.decisions_of(reading, choice)
                assert decisions[0] == ("act", menu.MenuPolicy.rows(reading)["act"], choice["act"])
            observation, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
    assert labelled > 50 and calls > 20


def test_same_seed_same_episode_and_the_policy_reads_only_observations(env) -> None:
    policy = menu.MenuPolicy()
    runs = []
    for _ in range(2):
        traj, sample, _ = menu_grpo.play(
            env, policy, np.random.default_rng(5), seed=11, options=menu_grpo.TRAIN_OPTIONS
        )
        runs.append(([s.action for s in traj.steps], sample.decisions))
    assert runs[0] == runs[1] and runs[0][1]
    with pytest.raises(ValueError, match="obs_mode='chat'"):
        text_env = menu_grpo.make_env(ARGS.env, [k for k in ARGS.env_kw if k != "obs_mode=chat"])
        menu_grpo.play(text_env, policy, np.random.default_rng(0), seed=1, options=menu_grpo.TRAIN_OPTIONS)


def test_behaviour_cloning_fits_the_demonstrations(env) -> None:
    demos = menu_grpo.demonstrations(env, menu.MenuPolicy, 6, seed=1)
    assert all(s.decisions for s in demos)
    heads = SoftmaxHeads(menu.HEADS)
    before = -heads._logp(demos)[0].sum().item()
    assert heads.imitate(demos, steps=0, lr=0.1) == 0.0
    heads.imitate(demos, steps=30, lr=0.1)
    assert -heads._logp(demos)[0].sum().item() < 0.5 * before
    assert heads.imitate([Sample("")], steps=5, lr=0.1) == 0.0  # nothing to imitate


def test_grpo_trains_on_the_reward_of_its_env(env) -> None:
    args = dataclasses.replace(ARGS, steps=2, tasks_per_step=2, group_size=4, demos=4, demo_steps=20)
    seen: dict[str, list[float]] = {}
    for wrapper in (None, "process_reward"):
        bonus: list[float] = []
        varied: list[bool] = []

        def on_step(step, metrics, trajs, bonus=bonus, varied=varied) -> None:
            assert set(metrics) == {"reward", "success", "loss"} and len(trajs) == 8
            bonus += [t.total_reward - float(t.success) for t in trajs]
            varied += [np.ptp([t.total_reward for t in trajs[g : g + 4]]) > 0 for g in (0, 4)]

        warm = menu_grpo.warm_policy(args).heads.logits
        policy = menu_grpo.train(dataclasses.replace(args, wrapper=wrapper), on_step=on_step)
        moved = any(not bool((policy.heads.logits[h] == warm[h]).all()) for h in warm)
        assert moved == any(varied)  # GRPO moves the logits exactly when a group's rewards vary
        seen[str(wrapper)] = bonus
    assert all(r == 0 for r in seen["None"])  # the outcome alone
    assert any(r > 0 for r in seen["process_reward"])  # + 0.1 per successful call


def test_an_identity_hook_trains_as_flat_credit_and_influence_credit_differs() -> None:
    import torch

    args = dataclasses.replace(
        ARGS,
        env="papergym/ServiceAgent-v0",
        env_kw=["domain=retail", "obs_mode=chat", "format_penalty=0"],
        steps=2,
        tasks_per_step=8,
        group_size=4,
        demos=40,  # a base that succeeds in ~1 of 7 text-channel episodes: some of 16 groups vary
    )
    warm = menu_grpo.warm_policy(args).heads.logits
    flat = menu_grpo.train(args).heads.logits
    same = menu_grpo.train(dataclasses.replace(args, advantage_hook=f"{__name__}:IdentityHook")).heads.logits
    iapo = menu_grpo.train(dataclasses.replace(args, advantage_hook="influence")).heads.logits
    assert any(not torch.equal(flat[h], warm[h]) for h in flat)  # some group varied: GRPO moved
    assert all(torch.allclose(flat[h], same[h], atol=1e-6) for h in flat)  # per-turn form, same loss
    assert any(not torch.allclose(flat[h], iapo[h], atol=1e-6) for h in flat)
    with pytest.raises(ValueError, match="name the hook"):
        menu_grpo.train(dataclasses.replace(args, advantage_hook_kw=["noise=0.2"]))


class IdentityHook:
    """Every turn gets its episode's advantage (flat credit, in the per-turn form)."""

    def __call__(self, traj, advantage, *, action_lengths, group=None, batch=None):
        return [advantage] * len(action_lengths)
