"""World models for the GUI env (WM-R1, papers/envs.md §1.2-1.3): `predict(state, action, *, seed) -> state`.

A `WMState` is the screen the agent sees plus whatever private state a model keeps; ``predict`` returns a
new one and never mutates its input. `SimulatorWorldModel` keeps a simulator copy (exact transitions),
`NoisyWorldModel` corrupts another model's predictions with seeded error modes, and `CodeWorldModel`
asks any `ChatModel` for the next screen as HTML with Code2World's prompt and parses the reply with a
tolerant parser (`parse_html_screen`: broken tags, scripts, styles and event handlers are ignored;
nothing is ever executed).
"""

from __future__ import annotations

import copy
import json
import random
import re
from dataclasses import dataclass, field, replace
from html.parser import HTMLParser
from typing import Any

from papergym.backends.model_roles import ModelJudge
from papergym.backends.protocols import ChatModel
from papergym.envs.mobile_gui.actions import ActionError, parse_action
from papergym.envs.mobile_gui.apps import make_apps
from papergym.envs.mobile_gui.layouts import LAYOUTS
from papergym.envs.mobile_gui.phone import Phone, PhoneState
from papergym.envs.mobile_gui.render_html import render_html
from papergym.envs.mobile_gui.views import CONTENT_TOP, ROW_H, WIDTH, Element, Screen


@dataclass
class WMState:
    """A world model's state: the goal, the screen shown, and the model's private state (None for a
    screen-only model)."""

    goal: str
    screen: Screen
    private: Any = None
    history: list[str] = field(default_factory=list)
    real_steps: int = 0
    """Transitions the real simulator computed to reach this state (`SimulatorWorldModel`: one per
    prediction; a learned or model-backed world model: none). `WorldModelGUIEnv` counts them in
    ``info["real_steps"]``, so a world model that steps a simulator must report it here."""


class SimulatorWorldModel:
    """The exact world model: its private state is a `PhoneState` (copied, then stepped).

    It is the real simulator: every prediction is a real step (``WMState.real_steps``), so training inside
    it is not training with zero real interactions."""

    def __init__(self, layout: str = "default") -> None:
        if layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {sorted(LAYOUTS)}, got {layout!r}")
        self.layout = layout
        self._apps = make_apps()

    def initial(self, goal: str, phone_state: PhoneState) -> WMState:
        private = copy.deepcopy(phone_state)
        return WMState(goal, Phone(private, self._apps, LAYOUTS[self.layout]).screen, private)

    def predict(self, state: WMState, action: str, *, seed: int | None = None) -> WMState:
        del seed  # exact
        private = copy.deepcopy(state.private)
        phone = Phone(private, self._apps, LAYOUTS[self.layout])
        try:
            phone.act(parse_action(action))
        except ActionError:
            return replace(state, history=[*state.history, action])
        return WMState(state.goal, phone.screen, private, [*state.history, action], state.real_steps + 1)


@dataclass(frozen=True)
class NoiseRates:
    """Per-prediction probabilities of each error mode (inferred; WM-R1 names no rates)."""

    no_transition: float = 0.0
    drop: float = 0.0
    hallucinate: float = 0.0
    wrong_text: float = 0.0
    wrong_screen: float = 0.0


class NoisyWorldModel:
    """Another model's predictions with seeded errors: a transition that does not happen, a dropped or a
    hallucinated element, a wrong text, or a wrong screen (the home screen). Each error mode is drawn
    independently per prediction from ``random.Random(seed)``. The private state follows the base model,
    so errors show on the screen and do not compound (except a missing transition). Over the default
    `SimulatorWorldModel` base it steps the real simulator (counted in ``WMState.real_steps``): the
    controllable-error option for measurements, not a zero-real-interaction training setting."""

    def __init__(
        self,
        base: Any | None = None,
        *,
        no_transition: float = 0.0,
        drop: float = 0.0,
        hallucinate: float = 0.0,
        wrong_text: float = 0.0,
        wrong_screen: float = 0.0,
    ) -> None:
        self.rates = NoiseRates(no_transition, drop, hallucinate, wrong_text, wrong_screen)
        for name, value in vars(self.rates).items():
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be a probability in [0, 1], got {value}")
        self.base = base if base is not None else SimulatorWorldModel()

    @classmethod
    def at_rate(cls, rate: float, base: Any | None = None) -> NoisyWorldModel:
        """One error rate ε for every mode, the wrong (home) screen at ε/4 (inferred: a whole wrong screen
        is rarer than a wrong element); `benchmarks/wm_gap.py`'s sweep and ``WorldModelGUI-v0``'s
        ``wm_error`` use it."""
        return cls(
            base, no_transition=rate, drop=rate, hallucinate=rate, wrong_text=rate, wrong_screen=rate / 4
        )

    def initial(self, goal: str, phone_state: PhoneState) -> WMState | None:
        """The base's first state; None when the base has no ``initial`` (the env then starts from the
        task's start screen)."""
        initial = getattr(self.base, "initial", None)
        return initial(goal, phone_state) if callable(initial) else None

    def predict(self, state: WMState, action: str, *, seed: int | None = None) -> WMState:
        rng = random.Random(seed)
        r = self.rates
        if rng.random() < r.no_transition:
            return replace(state, history=[*state.history, action])
        out = self.base.predict(state, action, seed=seed)
        els = list(out.screen.elements)
        body = [k for k, e in enumerate(els) if e.id not in ("status_bar", "nav_back", "nav_home", "title")]
        if rng.random() < r.wrong_screen:
            els = [e for e in els if e.id in ("status_bar", "nav_back", "nav_home")]
            els.insert(1, Element("title", "TextView", "Home", (20, 80, WIDTH, CONTENT_TOP)))
            return replace(out, screen=Screen("Home", "Home", tuple(els), out.screen.theme))
        if body and rng.random() < r.drop:
            del els[rng.choice(body)]
            body = [
                k for k, e in enumerate(els) if e.id not in ("status_bar", "nav_back", "nav_home", "title")
            ]
        if rng.random() < r.hallucinate:
            y = CONTENT_TOP + ROW_H * rng.randrange(8)
            els.insert(
                len(els) - 2, Element("done_banner", "Button", "Saved ✓", (0, y, WIDTH, y + ROW_H), True)
            )
        texts = [k for k in body if k < len(els) and els[k].text]
        if texts and rng.random() < r.wrong_text:
            k = rng.choice(texts)
            els[k] = replace(els[k], text=els[k].text[::-1])
        return replace(out, screen=replace(out.screen, elements=tuple(els)))


# Code2World's prompt (papers/envs.md §1.3), in our words where the paper's are not quoted.
CODE2WORLD_SYSTEM = (
    "You are an expert UI State Transition Simulator and Frontend Developer. Given a mobile screen as HTML, "
    "the user's intent and an action, you predict the screen that results from the action."
)
CODE2WORLD_TEMPLATE = (
    "### INPUT CONTEXT\n1. User Intent: {goal}\n2. Interaction Description: {description} (Action Data: "
    "{action})\n\n### CURRENT SCREEN (HTML)\n{html}\n\n### COMMAND\nGenerate the HTML for the RESULTING UI "
    'STATE. Output raw HTML only, <!DOCTYPE html>...</html>, with a root <div id="render-target"> of '
    "1080x2400 px and body margin 0. Use [IMG: description] for images and Unicode for icons."
)


def describe(action: str) -> str:
    """A one-line description of an action for the prompt (WM-R1 converts actions to such strings)."""
    try:
        a = parse_action(action)
    except ActionError:
        return "an unrecognised action"
    where = f" at {a.point}" if a.point else (f" on element {a.element_id}" if a.element_id else "")
    extra = f" {a.text!r}" if a.text else (f" {a.direction}" if a.direction else "")
    return f"{a.kind}{where}{extra}"


class CodeWorldModel:
    """Code2World / gWorld style: any `ChatModel` writes the next screen as HTML, parsed tolerantly.

    Args:
        chat_model: a local checkpoint or an OpenAI-compatible server serving Code2World or gWorld.
        max_tokens: 8192, Code2World's ``max_new_tokens`` (papers/envs.md §1.3).
    """

    def __init__(self, chat_model: ChatModel, *, max_tokens: int = 8192, temperature: float = 0.0) -> None:
        self.model = chat_model
        self.max_tokens = max_tokens
        self.temperature = temperature

    def initial(self, goal: str, phone_state: PhoneState, layout: str = "default") -> WMState:
        return WMState(goal, Phone(copy.deepcopy(phone_state), make_apps(), LAYOUTS[layout]).screen, None)

    def predict(self, state: WMState, action: str, *, seed: int | None = None) -> WMState:
        prompt = CODE2WORLD_TEMPLATE.format(
            goal=state.goal, description=describe(action), action=action, html=render_html(state.screen)
        )
        messages = [{"role": "system", "content": CODE2WORLD_SYSTEM}, {"role": "user", "content": prompt}]
        reply = self.model.chat(messages, seed=seed, max_tokens=self.max_tokens, temperature=self.temperature)
        screen = parse_html_screen(reply, fallback=state.screen)
        return WMState(state.goal, screen, None, [*state.history, action], state.real_steps)


_SKIP = {"script", "style", "head", "title", "svg", "noscript", "template", "iframe", "object"}
_VOID = {"input", "img", "br", "hr", "meta", "link"}


class _ScreenParser(HTMLParser):
    """Collects text-bearing elements; ignores scripts, styles and every ``on*`` attribute."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[dict[str, Any]] = []
        self.skip = 0
        self.elements: list[dict[str, Any]] = []
        self.root: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k.lower(): (v or "") for k, v in attrs if not k.lower().startswith("on")}
        if tag in _SKIP:
            self.skip += 1
            return
        if a.get("id") == "render-target":
            self.root = a
        node = {"tag": tag, "attrs": a, "text": ""}
        if tag in _VOID:
            self._emit(node)
        else:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID and tag not in _SKIP and self.stack:
            self._emit(self.stack.pop())

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self.skip = max(0, self.skip - 1)
            return
        for k in range(len(self.stack) - 1, -1, -1):  # close up to the matching tag; tolerate strays
            if self.stack[k]["tag"] == tag:
                while len(self.stack) > k:
                    self._emit(self.stack.pop())
                return

    def handle_data(self, data: str) -> None:
        if self.skip or not self.stack or not data.strip():
            return
        self.stack[-1]["text"] += data

    def close(self) -> None:
        super().close()
        while self.stack:
            self._emit(self.stack.pop())

    def _emit(self, node: dict[str, Any]) -> None:
        a = node["attrs"]
        text = " ".join(node["text"].split()) or a.get("value", "") or a.get("aria-label", "")
        if not text and "data-bounds" not in a and node["tag"] not in ("input", "button"):
            return
        self.elements.append({"tag": node["tag"], "attrs": a, "text": text, "order": len(self.elements)})


_BOUNDS = re.compile(r"^\s*(-?\d+)\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*$")
_CLASSES = {"button": "Button", "input": "EditText", "a": "Button", "label": "TextView"}


def parse_html_screen(html: str, *, fallback: Screen | None = None) -> Screen:
    """A `Screen` from a predicted HTML page. Elements with ``data-bounds`` keep them; others are stacked
    in document order. An empty or unparseable page gives ``fallback`` (WM-R1 keeps the old screenshot
    when rendering fails), or an empty screen."""
    parser = _ScreenParser()
    try:
        parser.feed(str(html)[:500_000])
        parser.close()
    except (ValueError, AssertionError, RecursionError):
        parser.elements = []
    if not parser.elements:
        return fallback if fallback is not None else Screen("", "", ())
    els: list[Element] = []
    used: set[str] = set()
    y = CONTENT_TOP
    for k, node in enumerate(parser.elements):
        a = node["attrs"]
        m = _BOUNDS.match(a.get("data-bounds", ""))
        if m:
            bounds = (int(m[1]), int(m[2]), int(m[3]), int(m[4]))
        else:
            bounds = (0, y, WIDTH, y + ROW_H)
            y += ROW_H
        eid = a.get("id") or f"el_{k}"
        while eid in used:
            eid += "_"
        used.add(eid)
        cls = a.get("class", "").split()[0] if a.get("class") else _CLASSES.get(node["tag"], "TextView")
        checked = a.get("data-checked")
        els.append(
            Element(
                eid,
                cls,
                node["text"],
                bounds,
                clickable=a.get("data-clickable") == "true" or node["tag"] in ("button", "a"),
                editable=a.get("data-editable") == "true" or node["tag"] == "input",
                scrollable=a.get("data-scrollable") == "true",
                checked=None if checked is None else checked == "true",
                focused=a.get("data-focused") == "true",
                hint=a.get("placeholder", ""),
            )
        )
    root = parser.root
    return Screen(
        root.get("data-app", ""), root.get("data-title", ""), tuple(els), root.get("data-theme", "light")
    )


WM_R1_JUDGE_SYSTEM = "You are an objective judge of whether a mobile GUI task was completed."
WM_R1_JUDGE_TEMPLATE = (
    "Task: {prompt}\n\nFinal screen:\n{response}\n\n{criterion}\nOutput ONLY JSON: "
    '{{"reasoning": "<one or two sentences>", "success": true or false}}'
)


class JsonSuccessJudge(ModelJudge):
    """WM-R1's judge (papers/envs.md §1.2): the model reads the final (predicted) screen and answers JSON
    ``{"reasoning", "success"}``; success true scores 1.0, anything else (including unreadable JSON) 0.0."""

    DEFAULT_SYSTEM = WM_R1_JUDGE_SYSTEM
    DEFAULT_TEMPLATE = WM_R1_JUDGE_TEMPLATE
    DEFAULT_CRITERION = (
        "Judge from the final screen (and the agent's answer, if any) whether the task is done."
    )
    DEFAULT_MAX_TOKENS = 256

    def score(self, prompt: str, response: str, *, criterion: str = "", seed: int | None = None) -> float:
        reply = self._ask(
            seed, prompt=prompt, response=response, criterion=criterion or self.DEFAULT_CRITERION
        )
        return 1.0 if parse_success(reply) else 0.0


def parse_success(reply: str) -> bool:
    """The ``success`` field of the first JSON object in a reply (False when there is none).

    >>> parse_success('Sure. {"reasoning": "the toggle is on", "success": true}'), parse_success("yes")
    (True, False)
    """
    start = reply.find("{")
    while start >= 0:
        end = reply.find("}", start)
        while end >= 0:
            try:
                obj = json.loads(reply[start : end + 1])
            except json.JSONDecodeError:
                end = reply.find("}", end + 1)
                continue
            return isinstance(obj, dict) and obj.get("success") is True
        start = reply.find("{", start + 1)
    return False
