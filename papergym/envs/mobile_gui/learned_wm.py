"""A learned world model for the GUI env: a language model trained on the simulator's transitions.

WM-R1 (papers/envs.md §1.2-1.3) trains its policy inside a learned world model, which is wrong in the
ways a learned model is. This module holds what such a model needs besides its weights (no torch here):

- the data: `collect_transitions` plays MobileGUI-v0 (the oracle, with random actions mixed in at
  ``random_rate``) and records each (screen, action) -> next screen transition;
- the text format, compact because a CPU-trained tiny model pays for every token: `transition_prompt`
  (the current screen as accessibility text without the pixel bounds, which are 60% of its tokens, then
  the described action) and `encode_diff` / `apply_diff`, the target: the next screen as a diff of the
  current one: ``=`` or the new header, then one line per element, ``=id`` where the element is
  unchanged, its line without bounds where it changed in place (same id, same bounds: a toggle, a
  typed text, a title), its full line with bounds where it is new or moved, and ``=*`` for an
  unchanged rest. Two thirds of the lines survive a step, so the diff is short, and "no change" (the
  commonest outcome, and where an undertrained model settles) costs two lines;
- the backend: `LearnedWorldModel` serves any `ChatModel` that writes such diffs (a tiny LM trained by
  `papergym.baselines.world_model`, loaded with its ``load_world_model``) as a `WorldModel`;
- the measure: `next_screen_accuracy`, exact match of the whole screen and per-line F1.

A tap's or long press's point is described with the element at that point on the current (predicted)
screen, ``tap [wifi] (540,610)``: plain geometry on the screen the model was given, as WM-R1 turns
actions into descriptions for its world model (inferred format).
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from papergym.backends.protocols import ChatModel
from papergym.core import info_keys as K
from papergym.envs.mobile_gui.actions import ActionError, parse_action
from papergym.envs.mobile_gui.oracle import OracleError
from papergym.envs.mobile_gui.render_text import element_line, render_text
from papergym.envs.mobile_gui.views import Element, Screen
from papergym.envs.mobile_gui.world_models import WMState

WM_SYSTEM = "Predict the next screen of the phone after the action, as a diff of the current screen."
"""The system turn of every prompt (inferred; short, as the model is tiny)."""
APPS = ("Settings", "Clock", "Contacts", "Messages", "Calendar", "Markor", "Joplin", "Tasks", "Expenses")
"""Apps that random play opens (a subset of the launcher's; inferred)."""
WORDS = ("hello", "Groceries", "42", "2026-10-15", "Team sync", "Ada", "notes.md")
"""Texts that random play types (inferred)."""


@dataclass(frozen=True)
class Transition:
    """One step of the simulator: the screen, the action sent, and the screen that followed."""

    screen: Screen
    action: str
    next_screen: Screen
    template: str


def describe_action(action: str, screen: Screen) -> str | None:
    """The action as the model reads it (None for an unparseable action or ``finished``).

    >>> from papergym.envs.mobile_gui.views import Element, Screen
    >>> s = Screen("Settings", "Settings", (Element("wifi", "Switch", "Wi-Fi", (0, 230, 1080, 380), True),))
    >>> describe_action("Action: tap(start_box='(540,300)')", s), describe_action("press_back()", s)
    ('tap [wifi] (540,300)', 'press_back')
    """
    try:
        a = parse_action(action)
    except ActionError:
        return None
    if a.kind == "finished":
        return None
    if a.kind in ("tap", "long_press"):
        if a.element_id is not None:
            return f"{a.kind} [{a.element_id}]"
        x, y = a.point or (0, 0)
        hit = screen.at(x, y)
        return f"{a.kind} [{hit.id if hit is not None else '-'}] ({x},{y})"
    if a.kind == "scroll":
        return f"scroll {a.direction}"
    if a.kind in ("type", "open_app"):
        return f"{a.kind} {a.text!r}"
    return a.kind


def short_line(e: Element) -> str:
    """An element's accessibility-text line without its bounds: ``[id] Class "text" flags``."""
    line = element_line(e)
    x0, y0, x1, y1 = e.bounds
    cut = line.rfind(f" ({x0},{y0},{x1},{y1})")
    return line[:cut] + line[cut + len(f" ({x0},{y0},{x1},{y1})") :]


def _header(screen: Screen) -> str:
    return render_text(Screen(screen.app, screen.title, ()))


def transition_prompt(screen: Screen, described: str) -> list[dict[str, str]]:
    """The chat messages of one prediction: the current screen (no bounds), then the described action
    (last, next to the reply: a tiny model reads what is near better)."""
    lines = [_header(screen), *(short_line(e) for e in screen.elements), f"Action: {described}"]
    return [{"role": "system", "content": WM_SYSTEM}, {"role": "user", "content": "\n".join(lines)}]


KEEP_HEADER, KEEP_REST = "=", "=*"
"""Diff lines: the header is unchanged; the rest of the old screen follows unchanged (see `encode_diff`)."""


def encode_diff(screen: Screen, next_screen: Screen) -> str:
    """The next screen as a diff of ``screen``.

    The first line is ``=`` when the app and title stay, else the new header. Then, per element of the
    next screen: ``=id`` (unchanged), its line without bounds (changed in place), or its full line (new
    or moved); and as soon as the remaining elements are exactly the old screen's after the last old
    element named so far, ``=*`` ends the diff. An unchanged screen is ``=`` and ``=*``: a model that
    learns nothing else predicts "no change" cheaply.
    """
    index = {e.id: k for k, e in enumerate(screen.elements)}
    old = screen.elements
    new = next_screen.elements
    same_head = (screen.app, screen.title) == (next_screen.app, next_screen.title)
    lines = [KEEP_HEADER if same_head else _header(next_screen)]
    after = 0  # the old elements from here on are what "=*" keeps
    for i, e in enumerate(new):
        if new[i:] == old[after:]:
            lines.append(KEEP_REST)
            return "\n".join(lines)
        k = index.get(e.id)
        if k is not None and old[k] == e:
            lines.append(f"={e.id}")
        elif k is not None and old[k].bounds == e.bounds:
            lines.append(short_line(e))
        else:
            lines.append(element_line(e))
        if k is not None:
            after = k + 1
    return "\n".join(lines)


_HEADER = re.compile(r"^App: (.*?) \| Screen: (.*)$")
_LINE = re.compile(
    r'^\[(?P<id>[^\]]+)\] (?P<cls>\S+) "(?P<text>.*?)"(?: hint="(?P<hint>[^"]*)")?'
    r"(?: \((?P<b>-?\d+),(?P<c>-?\d+),(?P<d>-?\d+),(?P<e>-?\d+)\))?(?P<flags>(?: \w+)*)$"
)


def parse_element_line(line: str, old: Screen | None = None) -> Element | None:
    """An `Element` from one accessibility-text line (`element_line`'s format), or None. A line without
    bounds (`short_line`) takes those of the element with its id on ``old``, and is None without one.

    >>> e = parse_element_line('[wifi] Switch "Wi-Fi" (0,230,1080,380) clickable checked')
    >>> e.id, e.bounds, e.clickable, e.checked
    ('wifi', (0, 230, 1080, 380), True, True)
    >>> parse_element_line('[wifi] Switch "Wi-Fi" clickable unchecked', old=Screen("", "", (e,))).bounds
    (0, 230, 1080, 380)
    """
    m = _LINE.match(line.strip())
    if m is None:
        return None
    if m["b"] is not None:
        bounds = (int(m["b"]), int(m["c"]), int(m["d"]), int(m["e"]))
    else:
        before = old.find(m["id"]) if old is not None else None
        if before is None:
            return None
        bounds = before.bounds
    flags = set(m["flags"].split())
    checked = True if "checked" in flags else (False if "unchecked" in flags else None)
    return Element(
        m["id"],
        m["cls"],
        m["text"].replace("\\n", "\n"),
        bounds,
        clickable="clickable" in flags,
        editable="editable" in flags,
        scrollable="scrollable" in flags,
        checked=checked,
        focused="focused" in flags,
        hint=m["hint"] or "",
    )


def apply_diff(screen: Screen, diff: str) -> Screen:
    """The screen a diff describes. Without a readable header line the old screen stays (WM-R1 keeps
    the old screenshot when a prediction cannot be rendered); unreadable lines, unknown ``=id`` and
    repeated ids are dropped."""
    lines = [ln for ln in diff.splitlines() if ln.strip()]
    if not lines:
        return screen
    head = _HEADER.match(lines[0].lstrip())  # a title may end in a space
    if head is not None:
        app, title = head[1], head[2]
    elif lines[0].strip() == KEEP_HEADER:
        app, title = screen.app, screen.title
    else:
        return screen
    index = {e.id: k for k, e in enumerate(screen.elements)}
    elements: list[Element] = []
    seen: set[str] = set()
    after = 0
    for line in lines[1:]:
        line = line.strip()
        if line == KEEP_REST:
            elements.extend(e for e in screen.elements[after:] if e.id not in seen)
            break
        e = screen.find(line[1:]) if line.startswith("=") else parse_element_line(line, screen)
        if e is None or e.id in seen:
            continue
        seen.add(e.id)
        elements.append(e)
        if e.id in index:
            after = index[e.id] + 1
    return Screen(app, title, tuple(elements), screen.theme)


class LearnedWorldModel:
    """A `WorldModel` over any `ChatModel` that writes next-screen diffs (`encode_diff`'s format).

    Its state holds only the screen (no private simulator state): errors compound as in a real learned
    world model, and it makes no real simulator call (``WMState.real_steps`` never grows).

    Args:
        chat_model: e.g. ``HFChatModel(path)`` of a model trained by `papergym.baselines.world_model`.
        max_tokens: the token budget of one prediction (inferred: above the longest training diff).
    """

    def __init__(self, chat_model: ChatModel, *, max_tokens: int = 768) -> None:
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
        self.model = chat_model
        self.max_tokens = max_tokens

    def predict(self, state: WMState, action: str, *, seed: int | None = None) -> WMState:
        described = describe_action(action, state.screen)
        history = [*state.history, action]
        if described is None:  # as the simulator: an unparseable action changes nothing
            return WMState(state.goal, state.screen, None, history, state.real_steps)
        reply = self.model.chat(
            transition_prompt(state.screen, described), seed=seed, max_tokens=self.max_tokens, temperature=0.0
        )
        return WMState(state.goal, apply_diff(state.screen, reply), None, history, state.real_steps)


def random_action(screen: Screen, rng: random.Random) -> str:
    """A random action on ``screen`` (random play's exploration; the mix is inferred)."""
    targets = [e for e in screen.elements if e.clickable or e.editable]
    r = rng.random()
    if targets and r < 0.55:
        x, y = rng.choice(targets).center
        kind = "long_press" if rng.random() < 0.05 else "tap"
        return f"Action: {kind}(start_box='({x},{y})')"
    if r < 0.65:
        return f"Action: scroll(start_box='(540,1200)', direction='{rng.choice(('up', 'down'))}')"
    if r < 0.8:
        return "Action: press_back()"
    if r < 0.88:
        return f"Action: type(content='{rng.choice(WORDS)}')"
    if r < 0.96:
        return f"Action: open_app(app_name='{rng.choice(APPS)}')"
    return "Action: press_home()"


def collect_transitions(
    *,
    episodes: int,
    seed: int = 0,
    split: str = "train",
    layout: str = "default",
    random_rate: float = 0.3,
    templates: Sequence[str] | None = None,
) -> list[Transition]:
    """The simulator's transitions from oracle play with random actions mixed in.

    Args:
        episodes: MobileGUI-v0 episodes, templates drawn by the env from its seed.
        seed: episode ``k`` resets with seed ``seed + k``; the random actions come from
            ``random.Random(seed)``.
        split: the task split (``"train"`` for training data; ``"test"`` to measure).
        layout: the app layout (``"heldout"`` measures out-of-distribution screens).
        random_rate: the chance per step of a random action instead of the oracle's (inferred 0.3).
        templates: restrict the templates (default: all).
    """
    if not 0.0 <= random_rate <= 1.0:
        raise ValueError(f"random_rate must be in [0, 1], got {random_rate}")
    from papergym.envs.mobile_gui.mobile_gui_env import MobileGUIEnv

    env = MobileGUIEnv(layout=layout, templates=templates)
    rng = random.Random(seed)
    out: list[Transition] = []
    for k in range(episodes):
        env.reset(seed=seed + k, options={"split": split})
        while True:
            before = env.phone.screen
            action = None
            if rng.random() >= random_rate:
                try:
                    action = env.oracle_action()
                except (OracleError, ValueError, KeyError, IndexError):
                    action = None  # the plan cannot read a screen random play led to
            if action is None:
                action = random_action(before, rng)
            *_, terminated, truncated, info = env.step(action)
            if describe_action(action, before) is not None:
                out.append(Transition(before, action, env.phone.screen, info[K.ANDROIDWORLD_TEMPLATE]))
            if terminated or truncated:
                break
    return out


def training_pair(t: Transition) -> tuple[list[dict[str, str]], str]:
    """(prompt messages, target diff) of one transition."""
    described = describe_action(t.action, t.screen)
    if described is None:
        raise ValueError("a transition without a describable action (finished or unparseable)")
    return transition_prompt(t.screen, described), encode_diff(t.screen, t.next_screen)


def line_f1(predicted: Screen, true: Screen) -> float:
    """F1 of the two screens' accessibility-text lines (multisets; the header line included)."""
    p = Counter(render_text(predicted).splitlines())
    t = Counter(render_text(true).splitlines())
    hits = sum((p & t).values())
    if not hits:
        return 0.0
    precision, recall = hits / sum(p.values()), hits / sum(t.values())
    return 2 * precision * recall / (precision + recall)


def next_screen_accuracy(
    world_model: Any, transitions: Iterable[Transition], *, seed: int = 0
) -> dict[str, float]:
    """A world model's next-screen accuracy, one prediction per transition from the true screen.

    Returns:
        ``exact`` (share of predictions whose whole text equals the true next screen's), ``line_f1``
        (mean `line_f1`), and ``n``; ``copy_exact`` / ``copy_line_f1`` are the same for predicting no
        change (the floor a model must beat).
    """
    exact = f1 = copy_exact = copy_f1 = 0.0
    n = 0
    for k, t in enumerate(transitions):
        state = WMState("", t.screen)
        predicted = world_model.predict(state, t.action, seed=seed + k).screen
        exact += render_text(predicted) == render_text(t.next_screen)
        f1 += line_f1(predicted, t.next_screen)
        copy_exact += render_text(t.screen) == render_text(t.next_screen)
        copy_f1 += line_f1(t.screen, t.next_screen)
        n += 1
    if n == 0:
        raise ValueError("no transitions to measure")
    return {
        "exact": exact / n,
        "line_f1": f1 / n,
        "copy_exact": copy_exact / n,
        "copy_line_f1": copy_f1 / n,
        "n": float(n),
    }
