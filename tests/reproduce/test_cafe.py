"""``papergym reproduce cafe``: arms that differ only in CAFE's mechanism, the hallucination measure, the
smoke run end to end and ``--model DIR``."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("tyro")
pytest.importorskip("bm25s")

from papergym.baselines import grpo, rdpo
from papergym.cli import main as cli
from papergym.core.trajectory import OraclePolicy, rollout
from papergym.envs.search.search_critic_env import SearchCriticEnv
from papergym.reproduce import cafe, driver
from papergym.reproduce.cafe_eval import record
from tests.reproduce.model_dir import run_on_a_model_dir


def _args(tmp_path: Path, **overrides) -> cafe.Args:
    args = driver.resolve_args(cafe, cafe.Args(smoke=True, out=str(tmp_path)), "cafe")
    return dataclasses.replace(args, **overrides)


def test_arms_differ_only_in_the_mechanism_and_chain_their_rounds(tmp_path: Path) -> None:
    configs = cafe.arm_configs(_args(tmp_path, rounds=2), "BASE", seed=1)
    cafe.check_rounds(configs, 2)
    assert [type(s) for s in configs["cafe"]] == [grpo.Args, rdpo.Args, grpo.Args, rdpo.Args]
    assert [type(s) for s in configs["grpo_fb"]] == [grpo.Args, grpo.Args]
    assert {c[0].model for c in configs.values()} == {"BASE"}
    assert configs["cafe"][2].model == str(Path(configs["cafe"][1].out) / "final")  # RDPO feeds round 2
    assert configs["grpo_fb"][0].policy_roles == ["critic"]  # the policy is its own critic
    assert "feedback_budget=0" in configs["grpo_nofb"][0].env_kw
    assert configs["cafe"][0].group_reward == "feedback_request"
    assert configs["cafe"][0].advantage_hook == "feedback_shaping"
    assert configs["grpo_fb"][0].seed != configs["grpo_fb"][1].seed  # a round draws new tasks


def test_one_sided_ablations_freeze_the_other_role(tmp_path: Path) -> None:
    configs = cafe.arm_configs(_args(tmp_path, rounds=2), "BASE", seed=0)
    agent_only, critic_only = configs["agent_only"], configs["critic_only"]
    assert [type(s) for s in agent_only] == [grpo.Args, grpo.Args]  # no RDPO: the critic never moves
    assert {tuple(s.policy_roles) for s in agent_only} == {("critic=BASE",)}
    assert agent_only[1].model == str(Path(agent_only[0].out) / "final")  # the agent learns
    assert [type(s) for s in critic_only] == [grpo.Args, rdpo.Args, grpo.Args, rdpo.Args]
    assert [s.model for s in critic_only if isinstance(s, grpo.Args)] == ["BASE", "BASE"]
    assert {s.updates_per_batch for s in critic_only if isinstance(s, grpo.Args)} == {0}  # frozen agent
    assert critic_only[1].model == "BASE" and critic_only[2].policy_roles == [
        f"critic={Path(critic_only[1].out) / 'final'}"
    ]  # round 2 samples with the RDPO-updated critic
    assert critic_only[3].model == str(Path(critic_only[1].out) / "final")
    assert cafe.evaluated_pair("agent_only", "LAST", "BASE") == ("LAST", "BASE")
    assert cafe.evaluated_pair("critic_only", "LAST", "BASE") == ("BASE", "LAST")
    assert cafe.evaluated_pair("cafe", "LAST", "BASE") == ("LAST", "LAST")


CHANGES = [
    ("grpo_nofb", 0, {"lr": 3e-4}),
    ("cafe", 2, {"beta": 0.0}),
    ("grpo_fb", 1, {"temperature": 0.7}),
    ("agent_only", 1, {"updates_per_batch": 0}),
    ("critic_only", 1, {"epochs": 5}),
]


@pytest.mark.parametrize(("arm", "stage", "change"), CHANGES)
def test_check_rounds_catches_a_change_beyond_the_mechanism(tmp_path: Path, arm, stage, change) -> None:
    configs = cafe.arm_configs(_args(tmp_path, rounds=2), "BASE", seed=0)
    configs[arm][stage] = dataclasses.replace(configs[arm][stage], **change)
    with pytest.raises(AssertionError, match="differs"):
        cafe.check_rounds(configs, 2)


class _Answers(OraclePolicy):
    """The oracle's searches, then ``answer`` (None: the oracle's own answer)."""

    def __init__(self, answer: str | None) -> None:
        super().__init__()
        self.answer = answer

    def __call__(self, observation, info):  # type: ignore[no-untyped-def]
        action = super().__call__(observation, info)
        if self.answer is not None and "<answer>" in action:
            return f"<answer>{self.answer}</answer>"
        return action


def test_hallucination_is_a_wrong_answer_found_in_no_retrieved_passage() -> None:
    env = SearchCriticEnv(n_passages=500, question_types=("compositional",))

    def play(answer: str | None, max_steps: int = 40):  # type: ignore[no-untyped-def]
        return record(rollout(env, _Answers(answer), seed=0, max_steps=max_steps))

    right, made_up = play(None), play("Quorvax Emberline")
    traj = rollout(env, OraclePolicy(), seed=0, max_steps=40)
    title = traj.steps[0].info["tool_results"][0].split("Title: ")[1].split(")")[0]
    copied = play(title)  # a wrong answer copied from a retrieved passage
    silent = play(None, max_steps=1)  # no answer before the turn limit: an abstention
    assert (right.em, right.success, right.hallucinated) == (1.0, 1.0, 0.0)
    assert (made_up.em, made_up.answered, made_up.hallucinated) == (0.0, 1.0, 1.0)
    assert (copied.em, copied.hallucinated) == (0.0, 0.0)
    assert (silent.answered, silent.success, silent.hallucinated) == (0.0, 0.0, 0.0)  # not 1 − success


def test_smoke_run_writes_results_table_pngs_and_readme_section(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# benchmarks\n\nkept as is\n")
    out = tmp_path / "run"
    assert cli(["reproduce", "cafe", "--smoke", "--out", str(out), "--write", str(readme)]) == 0
    record_ = json.loads((out / "results.json").read_text())
    assert record_["provenance"]["args"]["smoke"] is True
    assert set(record_["curves"]) == set(cafe.ARMS) and set(record_["curves"]["cafe"]) == {"0", "1"}
    point = record_["curves"]["cafe"]["0"][0]
    assert {"success", "request_rate", "request_skip_gap", "reward"} <= set(point)
    summary = record_["summary"]
    assert set(summary["metrics"]) == {*cafe.ARMS, "base", "sft_critic"}
    assert set(summary["claims"]) >= {"em_cafe_minus_grpo_fb", "em_last_critic_minus_sft_critic"}
    assert summary["recovery"]["repairs"] >= 0 and len(summary["rdpo"]["0"]) == 1  # one RDPO per round
    assert (out / "training_success.png").stat().st_size > 0 and (out / "request_rate.png").stat().st_size > 0
    text = readme.read_text()
    assert text.startswith("# benchmarks\n\nkept as is\n") and "<!-- reproduce:cafe:begin -->" in text
    table = (out / "table.md").read_text()
    (out / "table.md").unlink()
    assert cli(["reproduce", "cafe", "--render", str(out / "results.json")]) == 0
    assert (out / "table.md").read_text() == table


def test_model_dir_is_used_as_is_for_agent_and_critic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # what is checked is that the checkpoint is used as is (no SFT, no recovery), not how well it answers
    out, record_, _ = run_on_a_model_dir(
        "cafe", tmp_path, monkeypatch, env_id="papergym/SearchCritic-v0", answer_steps=4
    )
    assert record_["summary"]["recovery"]["repairs"] == 0 and not (out / "recovery-sft").exists()
    assert (out / "seed0" / "cafe" / "round0-grpo" / "final").exists()


def test_hopper_arms_differ_only_in_the_mechanism(tmp_path: Path) -> None:
    from papergym.reproduce import cafe_hopper

    configs = cafe_hopper.arm_configs(_args(tmp_path, policy="hopper", hopper_steps=7), seed=3)
    driver.check_arms(configs, cafe_hopper.REFERENCE, cafe_hopper.MECHANISM)
    assert "feedback_budget=0" in configs["grpo_nofb"].env_kw
    assert (configs["cafe"].group_reward, configs["cafe"].advantage_hook) == (
        "feedback_request",
        "feedback_shaping",
    )
    assert configs["grpo_fb"].group_reward is None and configs["grpo_fb"].advantage_hook is None
    assert configs["cafe_no_gamma"].group_reward_kw == ["gamma=0"] and configs["cafe"].group_reward_kw == []
    assert {(c.seed, c.steps) for c in configs.values()} == {(3, 7)}
    configs["cafe"] = dataclasses.replace(configs["cafe"], lr=0.5)
    with pytest.raises(AssertionError, match="differs from"):
        driver.check_arms(configs, cafe_hopper.REFERENCE, cafe_hopper.MECHANISM)


def _hopper_smoke(tmp_path: Path, *flags: str, readme: str = "# benchmarks\n") -> tuple[dict, str]:
    """A ``--smoke --policy hopper`` run with ``flags``, written into a README holding ``readme``: its
    results.json and the README after it."""
    path = tmp_path / "README.md"
    path.write_text(readme)
    out = tmp_path / "run"
    argv = [
        "reproduce",
        "cafe",
        "--smoke",
        "--policy",
        "hopper",
        *flags,
        "--out",
        str(out),
        "--write",
        str(path),
    ]
    assert cli(argv) == 0
    return json.loads((out / "results.json").read_text()), path.read_text()


def test_hopper_smoke_run_writes_its_own_readme_section(tmp_path: Path) -> None:
    from papergym.reproduce import cafe_hopper

    lm_section = "<!-- reproduce:cafe:begin -->\nLM run\n<!-- reproduce:cafe:end -->"
    record_, text = _hopper_smoke(tmp_path, readme=f"# benchmarks\n\n{lm_section}\n")
    summary = record_["summary"]
    assert summary["policy"] == "hopper" and set(summary["metrics"]) == {"base", *cafe_hopper.ARMS}
    assert len(record_["curves"]["cafe"]["1"]) == 2  # seeds 0 and 1, two steps each
    assert not list(tmp_path.glob("sft-*"))  # no warm start
    assert lm_section in text  # the LM section kept
    assert "<!-- reproduce:cafe-hopper:begin -->" in text and "learned search policy" in text
    assert (tmp_path / "cafe_hopper_training_success.png").stat().st_size > 0
    with pytest.raises(ValueError, match="written by its run"):
        cafe.section(summary)


def test_learned_critic_arms_differ_only_in_the_mechanism(tmp_path: Path) -> None:
    from papergym.reproduce import cafe_critic

    configs = cafe_critic.arm_configs(_args(tmp_path, policy="hopper", hopper_rdpo_every=5), seed=2)
    driver.check_arms(configs, cafe_critic.REFERENCE, cafe_critic.MECHANISM)
    assert configs["agent_only"].rdpo_every == 0 and configs["coevolve"].rdpo_every == 5
    assert not configs["critic_only"].update_agent and configs["cafe"].group_reward == "feedback_request"
    assert "feedback_budget=0" in configs["grpo_nofb"].env_kw
    configs["coevolve"] = dataclasses.replace(configs["coevolve"], critic_demos=99)
    with pytest.raises(AssertionError, match="differs from"):
        driver.check_arms(configs, cafe_critic.REFERENCE, cafe_critic.MECHANISM)


def test_learned_critic_smoke_run_writes_its_own_readme_section(tmp_path: Path) -> None:
    from papergym.reproduce import cafe_critic

    record_, text = _hopper_smoke(tmp_path, "--hopper-critic", "learned")
    summary = record_["summary"]
    assert summary["policy"] == "hopper-learned-critic" and set(summary["metrics"]) == {
        "base",
        *cafe_critic.ARMS,
    }
    assert set(summary["rdpo_rounds"]) == set(cafe_critic.RDPO_ARMS)
    assert all(len(rounds) == 2 for rounds in summary["rdpo_rounds"].values())  # RDPO after each of 2 steps
    assert "em_cafe_last_critic_minus_sft_critic" in summary["claims"]
    curve = record_["curves"]["coevolve"]["0"]
    assert {"success", "request_rate", "call_skip_gap"} <= set(curve[0])
    assert "<!-- reproduce:cafe-critic:begin -->" in text and "critic side" in text
    assert (tmp_path / "cafe_critic_training_success.png").stat().st_size > 0
    with pytest.raises(ValueError, match="written by its run"):
        cafe.section(summary)


def test_a_shared_rows_critic_writes_its_own_section(tmp_path: Path) -> None:
    _, text = _hopper_smoke(tmp_path, "--hopper-critic", "learned", "--hopper-critic-rows", "shared")
    assert "<!-- reproduce:cafe-critic-shared:begin -->" in text and "`read` rows, shared" in text
    assert "<!-- reproduce:cafe-critic:begin -->" not in text
    assert "(cafe_critic_shared_training_success.png)" in text  # the section shows its own plot
    assert (tmp_path / "cafe_critic_shared_training_success.png").stat().st_size > 0


def test_learned_critic_runs_give_the_same_results_in_two_workers(tmp_path: Path) -> None:
    records = {}
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        argv = ["--smoke", "--policy", "hopper", "--hopper-critic", "learned", "--out", str(out)]
        driver.main("cafe", [*argv, "--workers", str(workers)])
        records[workers] = json.loads((out / "results.json").read_text())
    assert records[1]["summary"] == records[2]["summary"] and records[1]["curves"] == records[2]["curves"]


@pytest.mark.parametrize(("overrides", "message"), [
    ({"policy": "hopper", "model": "some/dir"}, "takes no --model"),
    ({"policy": "lstm"}, "must be 'lm' or 'hopper'"),
    ({"policy": "hopper", "hopper_critic": "human"}, "must be 'oracle' or 'learned'"),
    ({"workers": 2}, "applies to --policy hopper"),
    ({"policy": "hopper", "hopper_critic_rows": "both"}, "critic-rows must be one of"),
])  # fmt: skip
def test_bad_hopper_arguments_are_refused(tmp_path: Path, overrides, message) -> None:
    with pytest.raises(ValueError, match=message):
        cafe.run(_args(tmp_path, **overrides))
