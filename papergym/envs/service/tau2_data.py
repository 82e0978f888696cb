"""The loader of a tau2-bench domain folder (``data/tau2/domains/<domain>/``), as tau2 ships it.

tau2 reads a domain's tasks from one task file and its splits from the split file beside it
(``split_<task file stem>.json``, e.g. ``split_tasks.json``). Folders as shipped differ: retail and airline
have ``tasks.json``; telecom may ship only ``tasks_small.json`` / ``tasks_full.json`` with a
``split_tasks.json`` naming the ids of its full set. `load_tau2_folder` takes all of them: the task file
is chosen by ``task_set``, and a split naming ids absent from that file is restricted to the ids present
(with a logged warning); a folder without a split file gets one ``base`` split of every task.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from papergym.envs.service.domains import get_domain
from papergym.envs.service.tasks import ServiceTask, task_from_tau2

logger = logging.getLogger(__name__)

Tau2TaskSet = Literal["default", "small", "full"]
TASK_FILES: dict[str, str] = {"default": "tasks.json", "small": "tasks_small.json", "full": "tasks_full.json"}
"""``task_set`` -> the task file tau2 reads for it."""


@dataclass(frozen=True)
class Tau2Folder:
    """The contents of a tau2 domain folder.

    Attributes:
        db: the initial database (table -> key -> record).
        tasks: task id -> task, in the task file's order.
        splits: split name -> task ids (``train``, ``test``, ``base``, ...), each restricted to ``tasks``;
            a split may be empty (e.g. telecom's ``base`` with the small task set).
        policy: the domain policy text.
    """

    db: dict[str, Any]
    tasks: dict[str, ServiceTask]
    splits: dict[str, list[str]]
    policy: str

    def nonempty_splits(self) -> tuple[str, ...]:
        """The splits holding at least one task, ``train`` and ``test`` first when they do."""
        names = [s for s in ("train", "test") if self.splits.get(s)]
        return tuple(names) or tuple(s for s, ids in self.splits.items() if ids)


def _read_json(path: Path) -> Any:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _task_file(path: Path, task_set: str) -> Path:
    if task_set not in TASK_FILES:
        raise ValueError(f"tau2_task_set={task_set!r}; choose one of {sorted(TASK_FILES)}")
    chosen = path / TASK_FILES[task_set]
    if not chosen.is_file():
        present = [k for k, name in TASK_FILES.items() if (path / name).is_file()]
        raise ValueError(
            f"tau2 folder {str(path)!r} has no {chosen.name} (tau2_task_set={task_set!r}); "
            f"task sets present: {present or 'none'}"
        )
    return chosen


def _splits(path: Path, task_file: Path, tasks: Mapping[str, ServiceTask]) -> dict[str, list[str]]:
    candidates = [path / f"split_{task_file.stem}.json", path / "split_tasks.json"]
    split_file = next((c for c in candidates if c.is_file()), None)
    if split_file is None:
        return {"base": list(tasks)}
    splits: dict[str, list[str]] = {}
    raw: Mapping[str, Sequence[Any]] = _read_json(split_file)
    for name, ids in raw.items():
        named = [str(i) for i in ids]
        splits[name] = [i for i in named if i in tasks]
        absent = len(named) - len(splits[name])
        if absent:
            logger.warning(
                "%s: split %r names %d ids absent from %s; keeping the %d present",
                split_file,
                name,
                absent,
                task_file.name,
                len(splits[name]),
            )
    return splits


def load_tau2_folder(folder: str | Path, domain: str, task_set: Tau2TaskSet | str = "default") -> Tau2Folder:
    """Read a tau2 domain folder: the database, the chosen task file, its splits and the policy.

    Args:
        folder: tau2's ``data/tau2/domains/<domain>/`` folder.
        domain: the domain name (``retail``, ``airline``, ``telecom``).
        task_set: ``"default"`` (``tasks.json``), ``"small"`` (``tasks_small.json``) or ``"full"``
            (``tasks_full.json``).

    The database and policy files are the domain's (`Domain.tau2_files`: ``db.json`` and ``policy.md``;
    telecom's ``db.toml``, ``user_db.toml`` and ``main_policy.md``).

    Raises:
        ValueError: a file is missing, or ``task_set`` is unknown.
    """
    path = Path(folder)
    spec = get_domain(domain)
    missing = [name for name in spec.tau2_files if not (path / name).is_file()]
    if missing:
        raise ValueError(
            f"tau2_data={str(folder)!r} lacks {missing}; pass tau2's data/tau2/domains/{domain}/ folder"
        )
    task_file = _task_file(path, str(task_set))
    records: Sequence[Mapping[str, Any]] = _read_json(task_file)
    tasks = {str(r["id"]): task_from_tau2(r, domain) for r in records}
    return Tau2Folder(
        db=spec.load_tau2_db(path),
        tasks=tasks,
        splits=_splits(path, task_file, tasks),
        policy=spec.load_tau2_policy(path),
    )
