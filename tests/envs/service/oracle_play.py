"""What the service-domain tests share: task ids drawn per template, an oracle episode, template coverage."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from papergym.core import info_keys as K
from papergym.envs.service.service_env import ServiceAgentEnv

SPLITS = ("train", "test")


def task_ids_by_template(
    env: ServiceAgentEnv, templates: Sequence[Any], *, per_template: int, max_index: int = 2000
) -> dict[tuple[str, str], list[str]]:
    """Task ids by (template name, split): the first ``per_template`` of each among the first indices."""
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    for split in SPLITS:
        for index in range(max_index):
            task = env.generated_task(split, index)
            ids = found[(task.template, split)]
            if len(ids) < per_template:
                ids.append(task.id)
            if all(len(found[(t.name, split)]) >= per_template for t in templates):
                break
    return found


def play_oracle(
    env: ServiceAgentEnv, task_id: str, edit: Callable[[str], list[str]] | None = None
) -> tuple[float, dict[str, Any], list[str]]:
    """Run the oracle on ``task_id`` (its actions optionally rewritten by ``edit(action) -> list[str]``).

    Returns:
        The last reward, the last info and every action sent.
    """
    env.reset(options={"task_id": task_id})
    actions: list[str] = []
    while True:
        action = env.oracle_action()
        for a in edit(action) if edit is not None else [action]:
            actions.append(a)
            _, reward, terminated, truncated, info = env.step(a)
            if terminated or truncated:
                return reward, info, actions


def assert_templates_cover_both_splits(
    templates: Sequence[Any], task_ids: dict[tuple[str, str], list[str]]
) -> None:
    """At least 30 distinct templates, at least 10 using a value read early, each drawn in both splits."""
    assert len(templates) >= 30 and len({t.name for t in templates}) == len(templates)
    assert sum(t.delayed for t in templates) >= 10
    missing = [(t.name, s) for t in templates for s in SPLITS if not task_ids.get((t.name, s))]
    assert not missing, f"templates never drawn: {missing}"


def assert_oracle_solves(env: ServiceAgentEnv, task_ids: Sequence[str]) -> None:
    """The oracle scores 1.0 on every task, with every check passed and nothing left unevaluated."""
    for task_id in task_ids:
        reward, info, _ = play_oracle(env, task_id)
        assert reward == 1.0 and info[K.SUCCESS], (task_id, info)
        assert all(info[K.CHECKS].values()) and info[K.UNEVALUATED] == []
