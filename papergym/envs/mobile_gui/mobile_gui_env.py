"""`papergym/MobileGUI-v0`: a phone simulator with AndroidWorld's task families, WM-R1's action format."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from papergym.core import info_keys as K
from papergym.core.errors import require
from papergym.core.tasks import DEFAULT_SPLIT_SIZES, Task, TaskGenerator, parse_task_id
from papergym.core.text_env import ObsMode, TextEnv, Turn
from papergym.envs.mobile_gui.actions import ActionError, format_action, parse_action
from papergym.envs.mobile_gui.apps import make_apps
from papergym.envs.mobile_gui.layouts import LAYOUTS
from papergym.envs.mobile_gui.oracle import Ctx
from papergym.envs.mobile_gui.phone import Phone, PhoneState
from papergym.envs.mobile_gui.render_html import render_html
from papergym.envs.mobile_gui.render_text import render_text
from papergym.envs.mobile_gui.templates import REGISTRY, Template
from papergym.envs.mobile_gui.templates.base import screen_texts
from papergym.envs.mobile_gui.views import HEIGHT, WIDTH, Layout, Screen

SCREENS = ("text", "html", "image")
IMAGE_PLACEHOLDER = "<image>"
"""Where the screenshot goes in an ``"image"`` observation's text (the marker verl / LLaVA-style VLM prompts
use for an image)."""
HISTORY = 3
"""Steps of history shown: WM-R1's ``data.max_trajectory_steps=3`` (papers/envs.md §1.2)."""
PROMPT = (
    "You are a GUI agent operating an Android phone (screen 1080x2400 pixels). You are given a task, the "
    "current screen and your recent actions. Reply with\nThought: ...\nAction: ...\nwhere the action is one "
    "of:\ntap(start_box='(x,y)')\nlong_press(start_box='(x,y)')\ntype(content='...')  # into the focused "
    "field, replacing its text\nscroll(start_box='(x,y)', direction='up|down|left|right')\npress_back()\n"
    "press_home()\nopen_app(app_name='...')\nwait()\nfinished(content='...')  # when the task is done; put "
    "the answer to a question here\n{ids}Coordinates are pixels; '(x0,y0,x1,y1)' boxes mean their centre."
)
ID_NOTE = "tap(id='...') and long_press(id='...') may name an element by the id in [brackets].\n"


@dataclass
class _State:
    """The episode's state (plain data, snapshotted)."""

    phone: PhoneState
    template: str
    params: dict[str, Any]
    budget: int
    steps: int = 0
    finished: bool = False
    answer: str | None = None
    history: list[str] = field(default_factory=list)
    oracle_mem: dict[str, Any] = field(default_factory=dict)
    pending: tuple[str, dict[str, Any]] | None = None
    judged: bool = False
    """A world model's judge's verdict at ``finished`` (WorldModelGUI-v0)."""
    shown: set[tuple[str, str]] = field(default_factory=set)
    """(screen title, element text) of every screen the agent was shown (the question answers' evidence)."""
    real_steps: int = 0
    """Actions the simulator applied in the episode (``info["real_steps"]``: real interactions)."""


class MobileGUIEnv(TextEnv):
    """A simulated Android phone with AndroidWorld's task templates.

    ## Description
    WM-R1's setting (papers/envs.md §1) on a simulator instead of an emulator: a phone with a home screen,
    a launcher and 14 data-driven apps (settings, clock, contacts, SMS, calendar, Markor, Joplin, tasks,
    expenses, recipes, files, audio recorder, music, sports tracker) sharing one plain-data state, with back
    stacks, dialogs, an on-screen keyboard and scrolling lists. Each task instantiates one of AndroidWorld's
    task templates (``info["androidworld_template"]``) from a seed, with its programmatic success check:
    changing data across apps, and question answering (the answer goes in ``finished``'s content).
    Every valid action is a real interaction: ``info["real_steps"]`` counts the actions the simulator
    applied so far in the episode (an invalid action applies none), as WorldModelGUI-v0 counts its own.

    ## Observation
    The first observation holds the action space, the instruction and the screen; each later one the step
    count, the last ``history`` actions, the feedback of the last action and the new screen. The screen is
    an accessibility tree (``screen="text"``: one line per element, ``[id] Class "text" (x0,y0,x1,y1)
    flags``) or one self-contained HTML page as Code2World predicts screens (``screen="html"``).
    ``obs_mode="chat"`` gives the whole conversation. ``screen="image"`` (a VLM policy, WM-R1's setting;
    extra ``vision``): a Dict with ``image``, the 1080x2400 RGB screenshot of the current screen (a uint8
    ``Box`` of shape ``(2400, 1080, 3)``, `render_image` without the bezel), and ``text``, the observation
    above with ``<image>`` where the screen goes; in ``obs_mode="chat"`` the text is the conversation,
    earlier screens being the images of earlier observations (keep them, as WM-R1 keeps the last 3).
    ``render()`` draws the screen: ``"ansi"`` (the accessibility text) or ``"rgb_array"`` (the screenshot
    inside a phone bezel, 1160x2480; extra ``vision``). `render_image.encode_screen` turns either into
    JPEG bytes for a VLM request.

    ## Action
    WM-R1's completion: ``Thought: ...`` then ``Action: <call>`` with ``tap(start_box='(x,y)')``,
    ``long_press``, ``type(content=...)``, ``scroll(start_box=..., direction=...)``, ``press_back()``,
    ``press_home()``, ``open_app(app_name=...)``, ``wait()`` or ``finished(content=...)``; UI-TARS
    ``<|box_start|>`` markers and ``tap(id=...)`` (``element_ids=True``) are accepted. Parsed with ``ast``,
    never evaluated; anything else is invalid (feedback, a format penalty, the step counts).

    ## Reward
    ``outcome``: 1.0 at ``finished`` when the task's check passes on the simulator state, else 0.0; a
    question's answer counts only if the screen it is read from was shown to the agent at some step (the
    whole list for list questions, the record's detail lines for one-record questions; inferred, an
    agent must not score by guessing a value it never saw; ``require_shown=False`` drops the rule), and
    only when the episode made no collateral write (tau2's DB check: the final records are those at
    reset plus only the task's change): every record present at reset is kept unchanged, except in the
    apps whose records an editing task deletes, edits or moves (``Template.edits_existing``), and every
    collection, empty or absent at reset included, gains exactly the records the task creates
    (``Template.creates``: one contact, one SMS, three expenses, ...; none for an editing, question or
    settings task), so an extra junk record, a second copy of the task's own or a record in an app the
    task was not about fails; ``format``: ``-format_penalty`` for an invalid action. ``info["checks"]`` at
    the end holds ``state`` (the simulator check) and ``screen`` (the same goal read from the final
    screen, as a world-model judge would). WM-R1's group reward is `papergym.credit` 's concern, not the
    env's.

    ## Episode End
    Terminates at ``finished``. Truncated when the task's step budget runs out: ``2 * optimal_steps + 10``
    real steps, ``optimal_steps`` being AndroidWorld's for the template (``info["step_budget"]``; inferred,
    AndroidWorld allows ``10 * complexity``). Registered with ``max_episode_steps=200`` above every budget.

    ## Arguments
    - ``screen``: ``"text"`` (default), ``"html"`` or ``"image"`` (a subclass picks the screen an image
      shows by overriding ``_observed_screen``: WorldModelGUI-v0 draws its world model's).
    - ``layout``: ``"default"`` or ``"heldout"`` (primary actions in the app bar, fixed buttons on top,
      renamed labels, a dark theme: out-of-distribution tests), or a `Layout`.
    - ``history``: past actions shown (3, WM-R1). ``element_ids``: accept ``tap(id=...)`` (default True).
    - ``templates``: the AndroidWorld template names drawn (default: all); ``test_size``: tasks per template
      in the test split. Reset options: ``task_id``, ``split``, ``template``.
    - ``require_shown``: questions need their answer's screen shown (True; inferred, see Reward).
    - ``obs_mode``, ``render_mode``, ``format_penalty`` (0.1, inferred): see `TextEnv`.

    ## Paper
    WM-R1 (arXiv 2608.27508; papers/envs.md §1.2): action space, history length, screen size. Code2World
    (§1.3): the HTML screen format. AndroidWorld (§1.5): the task templates, their success conditions and
    ``optimal_steps``.

    ## Version History
    - v0: initial version. Changed within v0 (issue 19): success also fails on collateral writes: a
      new record the task did not create (records could be added freely before), in any app, and for an
      editing task a change to records outside its own apps; MarkorMergeNotes and
      SaveCopyOfReceiptTaskEval no longer count as editing tasks (they must keep every record).
      Issue 24: ``info["real_steps"]`` (the simulator's applied actions) at reset and every step.

    >>> import gymnasium as gym, papergym
    >>> env = gym.make("papergym/MobileGUI-v0")
    >>> obs, info = env.reset(seed=0, options={"template": "SystemWifiTurnOn"})
    >>> while True:
    ...     obs, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
    ...     if terminated or truncated:
    ...         break
    >>> reward, info["success"], info["androidworld_template"]
    (1.0, True, 'SystemWifiTurnOn')
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "rgb_array"], "render_fps": 2}
    reset_options: ClassVar[frozenset[str]] = frozenset({"task_id", "split", "difficulty", "template"})
    canned_actions: ClassVar[tuple[str, ...]] = (
        "Thought: look.\nAction: tap(start_box='(540,1200)')",
        "Thought: scroll.\nAction: scroll(start_box='(540,1200)', direction='down')",
        "Thought: back.\nAction: press_back()",
        "Thought: home.\nAction: press_home()",
        "Thought: open.\nAction: open_app(app_name='Settings')",
        "Thought: type.\nAction: type(content='hello')",
        "Thought: done.\nAction: finished(content='')",
    )

    def __init__(
        self,
        *,
        screen: str = "text",
        layout: str | Layout = "default",
        history: int = HISTORY,
        element_ids: bool = True,
        templates: Sequence[str] | None = None,
        test_size: int = DEFAULT_SPLIT_SIZES["test"],
        obs_mode: ObsMode = "text",
        render_mode: str | None = None,
        format_penalty: float = 0.1,
        require_shown: bool = True,
    ) -> None:
        if screen not in SCREENS:
            raise ValueError(f"screen must be one of {SCREENS}, got {screen!r}")
        if isinstance(layout, str) and layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {sorted(LAYOUTS)} or a Layout, got {layout!r}")
        if not isinstance(layout, str | Layout):
            raise ValueError("layout must be a name or a papergym.envs.mobile_gui.views.Layout")
        if not isinstance(history, int) or history < 0:
            raise ValueError(f"history must be an int >= 0, got {history!r}")
        names = tuple(REGISTRY) if templates is None else tuple(templates)
        unknown = [n for n in names if n not in REGISTRY]
        if unknown or not names:
            raise ValueError(
                f"unknown templates {unknown}; choose from papergym.envs.mobile_gui.templates.REGISTRY"
            )
        if not isinstance(test_size, int) or test_size < 1:
            raise ValueError(f"test_size must be an int >= 1, got {test_size!r}")
        super().__init__(obs_mode=obs_mode, render_mode=render_mode, format_penalty=format_penalty)
        self.screen_format = screen
        if screen == "image":
            require("PIL.ImageDraw", "vision")  # fail at construction, not at the first observation
            image = spaces.Box(0, 255, (HEIGHT, WIDTH, 3), np.uint8)
            self.observation_space = spaces.Dict({"image": image, "text": self.observation_space})
        self.layout = LAYOUTS[layout] if isinstance(layout, str) else layout
        self.history = history
        self.element_ids = element_ids
        self.require_shown = bool(require_shown)
        self.template_names = names
        self._sizes = {"train": DEFAULT_SPLIT_SIZES["train"], "test": test_size}
        self._generators = {
            n: TaskGenerator(f"mobile.{n}", REGISTRY[n].instantiate, levels=1, split_sizes=self._sizes)
            for n in names
        }
        self._apps = make_apps()
        self._s: _State | None = None
        self._phone: Phone | None = None

    @property
    def splits(self) -> tuple[str, ...]:
        return tuple(self._sizes)

    # ------------------------------------------------------------------ accessors
    @property
    def phone(self) -> Phone:
        """The simulator of the current episode."""
        if self._phone is None:
            self._require_episode()
        return self._phone  # type: ignore[return-value]

    @property
    def template(self) -> Template:
        return REGISTRY[self._state_or_raise().template]

    @property
    def params(self) -> dict[str, Any]:
        """The current task's parameters (what its goal, checks and oracle plan are built from)."""
        return self._state_or_raise().params

    def current_screen(self) -> Screen:
        """The screen the agent sees now (plain data: `Screen.to_dict` serialises it)."""
        return self.phone.screen

    def _state_or_raise(self) -> _State:
        if self._s is None:
            self._require_episode()
        return self._s  # type: ignore[return-value]

    # ------------------------------------------------------------------ TextEnv
    def _new_task(self, options: Mapping[str, Any]) -> Task:
        if "task_id" in options:
            family = parse_task_id(options["task_id"])[0]
            name = family.removeprefix("mobile.")
            if name not in self._generators:
                raise ValueError(f"task_id {options['task_id']!r} names no template of this env")
            return self._generators[name].from_id(options["task_id"])
        if options.get("difficulty", 1) != 1:
            raise ValueError("MobileGUI-v0 has one difficulty level (1); filter with templates= instead")
        name = options.get("template")
        if name is None:
            name = self.template_names[int(self.np_random.integers(len(self.template_names)))]
        elif name not in self._generators:
            raise ValueError(f"template {name!r} is not among this env's templates")
        return self._generators[name].sample(self.np_random, options.get("split", "train"), 1)

    def _system_prompt(self, task: Task) -> str:
        # a screenshot shows no resource ids, so the image mode does not offer them (tap(id=...) still parses)
        show_ids = self.element_ids and self.screen_format != "image"
        return PROMPT.format(ids=ID_NOTE if show_ids else "")

    def _begin(self, task: Task) -> Template:
        """Set up the episode's plain-data state for ``task`` (no simulator yet); returns its template."""
        params, phone_state = task.payload
        name = task.family.removeprefix("mobile.")
        # The generator builds a fresh state for every task it returns, so the episode may own it.
        self._s = _State(phone_state, name, dict(params), REGISTRY[name].budget)
        return REGISTRY[name]

    def _start(self, task: Task) -> Turn:
        template = self._begin(task)
        s = self._state_or_raise()
        self._phone = Phone(s.phone, self._apps, self.layout)
        self._saw()
        text = f"Instruction: {template.goal(s.params)}\n\nScreen:\n{self._render_screen()}"
        info = {K.ANDROIDWORLD_TEMPLATE: s.template, K.STEP_BUDGET: s.budget, K.REAL_STEPS: 0}
        return Turn(text, info=info)

    def _saw(self) -> None:
        """Record the screen the agent is shown now (`current_screen`)."""
        self._state_or_raise().shown |= screen_texts(self.current_screen())

    def _shown_ok(self) -> bool:
        """The question's answer was on a screen shown in the episode (always True with ``require_shown``
        off or for a non-question task)."""
        s = self._state_or_raise()
        return not self.require_shown or self.template.answer_shown(s.params, s.shown)

    def _true_success(self) -> bool:
        """The task's success on the simulator state (with the shown-answer rule)."""
        s = self._state_or_raise()
        return self.template.success(s.params, s.phone, s.answer, s.shown, require_shown=self.require_shown)

    def _render_screen(self, screen: Screen | None = None) -> str:
        """``screen`` (default: `current_screen`) as the observation's text; in image mode a placeholder,
        the image being `_observed_screen` drawn by `render_image`."""
        screen = self.current_screen() if screen is None else screen
        if self.screen_format == "image":
            return IMAGE_PLACEHOLDER
        return render_text(screen) if self.screen_format == "text" else render_html(screen)

    def _observe(self, text: str) -> Any:
        obs = super()._observe(text)
        if self.screen_format != "image":
            return obs
        from papergym.envs.mobile_gui.render_image import render_image

        return {"image": np.asarray(render_image(self._observed_screen(), bezel=False)), "text": obs}

    def _observed_screen(self) -> Screen:
        """The screen the image observation draws (WorldModelGUI-v0: the imagined one after a wm call)."""
        return self.current_screen()

    @property
    def contract_budget(self) -> dict[str, int] | None:
        """Smaller contract-test and demo sizes with ``screen="image"`` (every observation draws a screen);
        read by tests/test_contract.py and ``papergym demo``."""
        if self.screen_format != "image":
            return None
        return {"tasks": 5, "examples": 10, "resets": 300, "digest_seeds": 2, "demo_episodes": 5}

    def _act(self, action: str) -> Turn:
        s = self._state_or_raise()
        pending, s.pending = s.pending, None
        s.steps += 1
        info: dict[str, Any] = {
            K.ANDROIDWORLD_TEMPLATE: s.template,
            K.STEP_BUDGET: s.budget,
            K.REAL_STEPS: s.real_steps,
        }
        try:
            parsed = parse_action(action, element_ids=self.element_ids)
        except ActionError as exc:
            s.history.append(f"(invalid) {exc}")
            turn = self._invalid(self._observation(str(exc)), **info, **{K.PARSED_ACTION: None})
            return self._budget(turn)
        if pending is not None and pending[0] == action:
            s.oracle_mem = pending[1]
        feedback = self.phone.act(parsed)
        s.real_steps += 1
        info[K.REAL_STEPS] = s.real_steps
        self._saw()
        s.history.append(format_action(parsed))
        info[K.PARSED_ACTION] = parsed.to_dict()
        if parsed.kind == "finished":
            s.finished, s.answer = True, parsed.text
            ok = self._true_success()
            screen_ok = self.template.screen_check(s.params, self.phone.screen, s.answer) and self._shown_ok()
            info[K.CHECKS] = {"state": ok, "screen": screen_ok}
            return Turn(
                self._observation("Task finished."), {"outcome": float(ok)}, terminated=True, info=info
            )
        return self._budget(Turn(self._observation(feedback), {"outcome": 0.0}, info=info))

    def _budget(self, turn: Turn) -> Turn:
        s = self._state_or_raise()
        if not turn.terminated and s.steps >= s.budget:
            turn.truncated = True
            turn.text += f"\nThe step budget ({s.budget}) is spent."
            turn.info = {**turn.info, K.CHECKS: {"state": False, "screen": False}}
        return turn

    def _observation(self, feedback: str) -> str:
        s = self._state_or_raise()
        parts = [f"Step {s.steps} of {s.budget}."]
        if self.history and s.history:
            recent = s.history[-self.history :]
            first = len(s.history) - len(recent) + 1
            parts.append("Recent actions:\n" + "\n".join(f"{first + i}. {h}" for i, h in enumerate(recent)))
        if feedback:
            parts.append(f"Feedback: {feedback}")
        parts.append(f"Screen:\n{self._render_screen()}")
        return "\n\n".join(parts)

    def success_check(self) -> bool:
        s = self._state_or_raise()
        return bool(s.finished and self._true_success())

    def oracle_action(self) -> str:
        """The oracle's next action: the template's plan, reading only the current screen."""
        s = self._state_or_raise()
        mem = copy.deepcopy(s.oracle_mem)
        plan = self.template.plan(s.params)
        action = plan.next(Ctx(self.phone.screen, mem, mem.setdefault("_plan", {})))
        if action is None:
            action = "Thought: Nothing is left to do.\nAction: finished(content='')"
        s.pending = (action, mem)
        return action

    def _state(self) -> Any:
        return self._s

    def _load_state(self, state: Any) -> None:
        self._s = state
        self._phone = Phone(state.phone, self._apps, self.layout)

    # ------------------------------------------------------------------ rendering
    def _drawn_screen(self) -> Screen | None:
        """The screen `render` draws (None before the first reset)."""
        return self._phone.screen if self._phone is not None else None

    def render(self) -> Any:
        screen = self._drawn_screen()
        if self.render_mode == "rgb_array":
            from papergym.envs.mobile_gui.render_image import render_image

            if screen is None:
                return np.zeros((1, 1, 3), dtype=np.uint8)
            return np.asarray(render_image(screen))
        if self.render_mode == "ansi":
            return render_text(screen) + "\n" if screen is not None else ""
        return super().render()


CONTRACT_VARIANTS: list[dict[str, Any]] = [{}, {"layout": "heldout"}, {"screen": "html"}, {"screen": "image"}]
