"""A count-based learned world model for the GUI env: the commonest next-screen diff of each (screen, action).

The cheapest learned world model that is not the simulator: `TransitionTable.fit` reads transitions the
simulator produced offline (`learned_wm.collect_transitions`: oracle play with random actions, train split)
and keeps, per (screen, described action), the commonest next-screen diff (`learned_wm.encode_diff`). It
then predicts from that table alone, with no simulator behind it (``WMState.real_steps`` never grows):

1. the exact (screen without bounds, described action) seen in training: its commonest diff;
2. else the same with every digit masked (another task's screen of the same shape: a different date,
   brightness or tap point): that key's commonest diff, whose in-place lines carry the training task's
   values (a copied date or percentage: the error of a model that memorised its data);
3. else no change (the commonest transition, and where an undertrained model settles).

It is imperfect the way a learned model is: right where its data were dense, wrong or stale elsewhere,
and its errors compound (the state is the predicted screen only). `TransitionTable.coverage` counts which
rule answered. Saved as JSON (`save` / `load`), so an env built from a string loads it:
``gym.make("papergym/WorldModelGUI-v0", world_model="table:PATH")``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from papergym.envs.mobile_gui.learned_wm import (
    KEEP_HEADER,
    KEEP_REST,
    Transition,
    apply_diff,
    describe_action,
    encode_diff,
    transition_prompt,
)
from papergym.envs.mobile_gui.world_models import WMState

_DIGITS = re.compile(r"\d+")
NO_CHANGE = f"{KEEP_HEADER}\n{KEEP_REST}"
"""The diff of an unchanged screen."""
FORMAT = "papergym.transition_table.v1"


def table_key(screen: Any, described: str, *, masked: bool) -> str:
    """The lookup key: the screen without bounds and the described action (`transition_prompt`'s text),
    every digit run replaced by ``#`` when ``masked``."""
    text = transition_prompt(screen, described)[-1]["content"]
    return _DIGITS.sub("#", text) if masked else text


class TransitionTable:
    """A `WorldModel` that looks up the commonest next-screen diff of (screen, action) (see the module).

    Args:
        exact: key (`table_key`, unmasked) -> diff.
        masked: key (`table_key`, masked) -> diff.
    """

    def __init__(self, exact: dict[str, str], masked: dict[str, str]) -> None:
        self.exact = dict(exact)
        self.masked = dict(masked)
        self.coverage: Counter[str] = Counter()
        """Predictions answered by each rule: ``exact``, ``masked``, ``miss`` (no change)."""

    @classmethod
    def fit(cls, transitions: Iterable[Transition]) -> TransitionTable:
        """The table of ``transitions``: per key, the commonest diff (ties: the first seen)."""
        counts: dict[bool, dict[str, Counter[str]]] = {False: {}, True: {}}
        for t in transitions:
            described = describe_action(t.action, t.screen)
            if described is None:
                continue
            diff = encode_diff(t.screen, t.next_screen)
            for masked in (False, True):
                counts[masked].setdefault(table_key(t.screen, described, masked=masked), Counter())[diff] += 1
        exact, masked = ({k: c.most_common(1)[0][0] for k, c in counts[m].items()} for m in (False, True))
        return cls(exact, masked)

    def predict(self, state: WMState, action: str, *, seed: int | None = None) -> WMState:
        del seed  # deterministic
        described = describe_action(action, state.screen)
        history = [*state.history, action]
        if described is None:  # as the simulator: an unparseable action (or finished) changes nothing
            return WMState(state.goal, state.screen, None, history, state.real_steps)
        diff = self.exact.get(table_key(state.screen, described, masked=False))
        rule = "exact"
        if diff is None:
            diff = self.masked.get(table_key(state.screen, described, masked=True))
            rule = "masked"
        if diff is None:
            diff, rule = NO_CHANGE, "miss"
        self.coverage[rule] += 1
        return WMState(state.goal, apply_diff(state.screen, diff), None, history, state.real_steps)

    def save(self, path: str | Path) -> Path:
        """Write the table as JSON; returns the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = {"format": FORMAT, "exact": self.exact, "masked": self.masked}
        path.write_text(json.dumps(payload, sort_keys=True), encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | Path) -> TransitionTable:
        """A table written by `save`.

        Raises:
            ValueError: the file is not a transition table.
        """
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(payload, dict) or payload.get("format") != FORMAT:
            raise ValueError(f"{path} is not a transition table ({FORMAT})")
        return cls(payload["exact"], payload["masked"])

    def __repr__(self) -> str:
        return f"TransitionTable(exact={len(self.exact)}, masked={len(self.masked)})"
