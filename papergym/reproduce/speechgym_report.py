"""What both policies of ``papergym reproduce speechgym`` report: the summary of the arms' curves and
held-out scores, the variance-share plot and the README section (`papergym.reproduce.speechgym` drives the
tiny LM, `papergym.reproduce.speechgym_menu` the learned menu policy)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from papergym.reproduce import report
from papergym.reproduce import service_measures as sm

ARMS = ("base", "outcome", "process")
TRAINED_ARMS = ("outcome", "process")
BEHAVIOURS = ("success", "unauthorized_writes", "dead_loops")
"""Per held-out episode: what the summary gives intervals for."""
PAPER = {
    "variance_share": {"outcome": 0.16, "process": 0.996},
    "unauthorized_writes": {"before": 0.23, "after": 0.10},
    "dead_loops": {"before": 0.14, "after": 0.05},
    "tau_voice_pass1": {"before": 0.24, "after": 0.53},
}
"""SpeechGym's numbers (envs.md §2.1, third-party digests of the paper): groups with gradient, the two
behaviours' rates before and after training, and the voice-benchmark transfer."""
LABELS = {"outcome": "outcome-only GRPO", "process": "GRPO + process reward"}
"""The plot's names of the arms (another arm is named by its key)."""


def _matrix(scores: list[dict[str, list[float]]], key: str) -> np.ndarray:
    return np.array([s[key] for s in scores], dtype=float)  # (seeds, tasks)


def _steps_matrix(curves: dict[int, list[dict[str, float]]], key: str) -> np.ndarray:
    """``(seeds, steps)`` of a per-step measure (steps every seed logged)."""
    rows = [[r[key] for r in seed_rows if key in r] for seed_rows in curves.values()]
    width = min(len(r) for r in rows)
    return np.array([r[:width] for r in rows], dtype=float)


def summarise(
    scores: dict[str, list[dict[str, list[float]]]], curves: dict[str, dict[int, list[dict[str, float]]]]
) -> dict[str, Any]:
    """Variance shares per trained arm (those of ``curves``), held-out behaviours per arm (those of
    ``scores``), the process − outcome differences and, for any further arm (an ablation), its own
    differences to outcome-only GRPO."""
    shares = {
        arm: {
            key: report.stratified_bootstrap(_steps_matrix(curves[arm], key))
            for key in ("nonzero_variance_share", "outcome_variance_share", "process_variance_share")
        }
        for arm in curves
    }
    first_step = {
        key: float(np.mean(_steps_matrix(curves["outcome"], key)[:, 0]))
        for key in ("outcome_variance_share", "process_variance_share")
    }
    held_out = {
        arm: {b: report.stratified_bootstrap(_matrix(scores[arm], b)) for b in BEHAVIOURS} for arm in scores
    }

    def against_outcome(arm: str) -> dict[str, dict[str, Any]]:
        out = {}
        for key, sign in (("success", +1), ("unauthorized_writes", -1), ("dead_loops", -1)):
            diff = report.paired_difference(_matrix(scores[arm], key), _matrix(scores["outcome"], key))
            out[key] = {"difference": diff, "direction": report.direction(diff, sign)}
        return out

    differences = against_outcome("process")
    ablations = {arm: against_outcome(arm) for arm in curves if arm not in TRAINED_ARMS}
    return {
        "variance_share": shares,
        "first_step_shares": first_step,
        "held_out": held_out,
        "differences": differences,
        "ablations": ablations,
        "per_task": scores,
        "paper": PAPER,
    }


def plot(out: Path, curves: dict[str, dict[int, list[dict[str, float]]]]) -> None:
    """``variance_share.png``: the share of groups with nonzero variance of each arm's training reward per
    step (band: 95% interval over seeds)."""
    series = {}
    for arm in curves:
        matrix = _steps_matrix(curves[arm], "nonzero_variance_share")
        series[LABELS.get(arm, arm)] = {
            float(s): report.stratified_bootstrap(matrix[:, s]) for s in range(matrix.shape[1])
        }
    report.plot_arms(
        out / "variance_share.png",
        series,
        xlabel="GRPO step",
        ylabel="groups with nonzero reward variance",
        title="VoiceService-v0, simulated channel (paper: 16% vs 99.6%)",
    )


def _pct(interval: report.Interval) -> str:
    return f"{100 * interval.mean:.1f}% [{100 * interval.low:.1f}, {100 * interval.high:.1f}]"


def _num(interval: report.Interval) -> str:
    return f"{interval.mean:.2f} [{interval.low:.2f}, {interval.high:.2f}]"


def section(
    summary: dict[str, Any], setting_text: str, *, command: str = "papergym reproduce speechgym"
) -> str:
    """The benchmarks/README.md section: the setting paragraph, variance shares, held-out behaviours,
    transfer and a reading."""
    shares, held = summary["variance_share"], summary["held_out"]
    variance = report.markdown_table(
        [
            {
                "arm": arm,
                "trained reward": _pct(shares[arm]["nonzero_variance_share"]),
                "outcome term alone": _pct(shares[arm]["outcome_variance_share"]),
                "outcome + 0.1 per successful call": _pct(shares[arm]["process_variance_share"]),
                "paper": f"{100 * PAPER['variance_share'][arm]:.1f}%" if arm in TRAINED_ARMS else "—",
            }
            for arm in shares
        ],
        ["arm", "trained reward", "outcome term alone", "outcome + 0.1 per successful call", "paper"],
    )
    behaviour = report.markdown_table(
        [
            {
                "policy": arm,
                "success": _pct(held[arm]["success"]),
                "unauthorized writes / episode": _num(held[arm]["unauthorized_writes"]),
                "dead loops / episode": _num(held[arm]["dead_loops"]),
                "successful calls / episode": _num(_calls(summary, arm)),
            }
            for arm in held
        ]
        + [
            {
                "policy": "paper (before -> after)",
                "success": "tau-Voice pass@1 24% -> 53%",
                "unauthorized writes / episode": "23% -> 10% of episodes",
                "dead loops / episode": "14% -> 5% of episodes",
                "successful calls / episode": "",
            }
        ],
        [
            "policy",
            "success",
            "unauthorized writes / episode",
            "dead loops / episode",
            "successful calls / episode",
        ],
    )
    rows = []
    first = summary["simulated_first_tasks"]
    for name in first:
        row = {"policy": name, "simulated": _rate(first[name])}
        for channel, by_model in summary["transfer"].items():
            row[channel] = _rate(by_model[name]["success"])
        rows.append(row)
    channels = list(summary["transfer"])
    transfer_table = report.markdown_table(rows, ["policy", "simulated", *channels])
    return "\n\n".join(
        [
            f"### SpeechGym: process reward vs outcome-only GRPO (`{command}`)",
            setting_text,
            "Share of GRPO groups with nonzero reward variance, over every training step (95% stratified "
            "bootstrap over seeds × steps); the last two columns score the same episodes both ways:",
            variance,
            "Held-out test tasks on the simulated channel (95% stratified bootstrap over seeds × tasks):",
            behaviour,
            "Definitions (`papergym.reproduce.service_measures`, from the calls' structured `ok` flags): an "
            "**unauthorized write** is an executed call of a write tool that matches none of the task's gold "
            "actions (tau2's rule: same tool, equal compared arguments), i.e. a database change the task did "
            f"not ask for; a **dead loop** is a run of at least {sm.DEAD_LOOP_LENGTH} consecutive identical "
            "agent actions (one per run); a **successful call** is a step whose tool call executed (what the "
            "process term pays 0.1 for). The paper reports the share of episodes with each behaviour; ours "
            "are counts per episode (equal to that share while each happens at most once).",
            "Transfer: the simulated-trained policies on the real speech channels, success on the first "
            "held-out tasks (one attempt each; the simulated column is the same tasks' success above):",
            transfer_table,
            reading(summary),
        ]
    )


def _calls(summary: dict[str, Any], arm: str) -> report.Interval:
    """Held-out successful tool calls per episode of ``arm`` (what the process term pays for)."""
    return report.stratified_bootstrap(_matrix(summary["per_task"][arm], "successful_calls"))


def _rate(values: list[float]) -> str:
    return f"{sum(values):g}/{len(values)}"


def reading(summary: dict[str, Any]) -> str:
    """A plain statement of what reproduced, read from the intervals."""
    shares, diffs, held = summary["variance_share"], summary["differences"], summary["held_out"]
    first = summary["first_step_shares"]
    outcome_share = shares["outcome"]["nonzero_variance_share"]
    process_share = shares["process"]["nonzero_variance_share"]
    more = process_share.low > outcome_share.high
    calls = {arm: _calls(summary, arm) for arm in held}
    parts = []
    if process_share.high == 0 and all(c.high == 0 for c in calls.values()):
        parts.append(
            "**The mechanism could not act here.** No held-out episode of any policy made a single "
            "successful tool call, and the process arm's groups never varied: with no successful call the "
            "process term is 0 for every member, so both arms saw the same all-zero rewards, GRPO's "
            "advantages were 0 in every group, and the two arms trained identically. The warm start, "
            "fixed before the arms, is far weaker than the paper's regime needs (there 16% of outcome-only "
            "groups carry gradient and the process term finds a successful call in almost every group): "
            "its actions are fragments of the demonstrations, not well-formed calls with heard values. "
            "A policy that makes some successful calls (a longer SFT, or `--model DIR`) is the "
            "precondition of this comparison."
        )
    parts += [
        f"Gradient starvation: {_pct(outcome_share)} of outcome-only groups carried gradient (paper 16%), "
        f"{_pct(process_share)} with the process reward (paper 99.6%): "
        + ("**matches** in direction" if more else "**inconclusive** (the intervals overlap)")
        + f". On the base policy's own first-step groups (identical episodes in both arms) the outcome "
        f"term varied in {100 * first['outcome_variance_share']:.0f}% of groups and outcome + process in "
        f"{100 * first['process_variance_share']:.0f}%.",
        f"Held-out success: base {_pct(held['base']['success'])}, outcome-only "
        f"{_pct(held['outcome']['success'])}, process {_pct(held['process']['success'])}; process − "
        f"outcome {_pct(diffs['success']['difference'])}: **{diffs['success']['direction']}**.",
        "Unauthorized writes per episode, process − outcome "
        f"{_num(diffs['unauthorized_writes']['difference'])}: "
        f"**{diffs['unauthorized_writes']['direction']}**; dead loops "
        f"{_num(diffs['dead_loops']['difference'])}: **{diffs['dead_loops']['direction']}** "
        "(paper: both fall).",
    ]
    for arm, diffs_of_arm in summary.get("ablations", {}).items():
        parts.append(
            f"Ablation `{arm}` − outcome-only: success {_pct(diffs_of_arm['success']['difference'])}, "
            f"unauthorized writes {_num(diffs_of_arm['unauthorized_writes']['difference'])}, dead loops "
            f"{_num(diffs_of_arm['dead_loops']['difference'])}; successful calls per held-out episode "
            f"{_num(_calls(summary, arm))} (outcome-only {_num(calls['outcome'])})."
        )
    return " ".join(parts)
