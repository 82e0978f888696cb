"""`papergym/WorldModelGUI-v0`: MobileGUI's tasks with every transition from a pluggable world model, and
WM-R1's imagination (``call_wm`` inside ``<think>``)."""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from papergym.backends.protocols import ChatModel, Judge, WorldModel
from papergym.backends.resolve import resolve_backend
from papergym.core import info_keys as K
from papergym.core.errors import BackendError
from papergym.core.tasks import DEFAULT_SPLIT_SIZES, Task
from papergym.core.text_env import ObsMode, Turn
from papergym.core.trajectory import Trajectory
from papergym.envs.mobile_gui.actions import ActionError, extract_call, format_action, parse_action
from papergym.envs.mobile_gui.mobile_gui_env import HISTORY, MobileGUIEnv
from papergym.envs.mobile_gui.oracle import Ctx, OracleError
from papergym.envs.mobile_gui.phone import Phone
from papergym.envs.mobile_gui.render_text import render_text
from papergym.envs.mobile_gui.table_wm import TransitionTable
from papergym.envs.mobile_gui.templates.base import screen_texts
from papergym.envs.mobile_gui.views import Layout, Screen
from papergym.envs.mobile_gui.world_models import (
    CodeWorldModel,
    JsonSuccessJudge,
    NoisyWorldModel,
    SimulatorWorldModel,
    WMState,
)

TABLE_PREFIX = "table:"
"""``world_model="table:PATH"`` loads a `TransitionTable` saved at PATH (a string form, so env kwargs given
as text, ``--env-kw world_model=table:PATH``, can name the learned table)."""
N_WM_MAX = 5
"""World-model calls per episode: WM-R1's ``env.n_wm_max=5`` (papers/envs.md §1.2)."""
SCREEN_CHECK = "screen"
"""``judge=``'s embedded default: the template's own final-screen check on the predicted screen."""
IMAGINED_NOTE = (
    "The result of your imagined action is shown below. "
    "Please continue your thinking or provide a final action."
)
"""WM-R1's message for an imagined turn (papers/envs.md §1.2)."""
_CALL_WM = re.compile(r"<think>.*?call_wm\(action='(.*?)'\).*?</think>", re.DOTALL)
WM_NOTE = (
    "\nYou may imagine an action before committing: inside <think>...</think> write call_wm(action='...') "
    "with an action in the format above and no Action: after </think>; the predicted screen comes back. "
    "At most {n} such calls per episode."
)


@dataclass
class _WM:
    """The world-model side of the episode (snapshotted with the rest)."""

    state: WMState
    n_wm: int = 0
    real_steps: int = 0
    """Calls into the real simulator so far: the evaluation simulator's actions (``training=False``) and
    the transitions a simulator-backed world model computed (`WMState.real_steps`)."""
    committed: list[str] = field(default_factory=list)
    """The committed (not imagined) actions, as sent: what `replay_true_success` replays."""
    real_shown: set[tuple[str, str]] = field(default_factory=set)
    """(title, text) of the evaluation simulator's screens (``training=False``): true success's evidence."""
    imagined_at: int = -1
    """The committed-step count at the last imagined call (the imagining oracle imagines once per step)."""


def imagine(action: str) -> str:
    """An imagined turn that asks the world model about ``action`` (WM-R1's ``call_wm`` inside
    ``<think>``): its call, quoted with double quotes inside ``action='...'``.

    >>> print(imagine("Action: press_back()"))
    <think>What happens if I press_back()? call_wm(action='press_back()')</think>
    >>> imagine("Action: open_app(app_name='Settings')").count('"Settings"')
    2
    """
    call = extract_call(action).replace("'", '"')
    return f"<think>What happens if I {call}? call_wm(action='{call}')</think>"


def committed_actions(trajectory: Trajectory) -> list[str]:
    """The committed actions of a WorldModelGUI-v0 episode: its steps that were not imagined turns."""
    return [str(step.action) for step in trajectory.steps if not step.info.get(K.IMAGINED, False)]


def replay_true_success(
    task_id: str,
    actions: Sequence[str],
    *,
    layout: str | Layout = "default",
    element_ids: bool = True,
    require_shown: bool = True,
    templates: Sequence[str] | None = None,
    test_size: int = DEFAULT_SPLIT_SIZES["test"],
) -> bool:
    """The true success of an episode: its committed actions replayed on MobileGUI-v0's real simulator.

    Run it after the episode, outside the training loop (it is evaluation: ``len(actions)`` real steps).
    The result is MobileGUI-v0's success for the same actions: the simulator's state check, and for a
    question the answer's screen among the real screens the actions reached (``require_shown``). The
    step budget applies as in the episode (invalid actions count, imagined turns are not in ``actions``).

    Args:
        task_id: the episode's ``info["task_id"]``.
        actions: the committed actions in order (`committed_actions` of a `Trajectory`).
        layout, element_ids, require_shown, templates, test_size: the episode env's settings.
    """
    env = MobileGUIEnv(
        layout=layout,
        element_ids=element_ids,
        require_shown=require_shown,
        templates=templates,
        test_size=test_size,
    )
    env.reset(options={"task_id": task_id})
    for action in actions:
        *_, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return bool(terminated and info.get(K.SUCCESS, False))
    return False


class WorldModelGUIEnv(MobileGUIEnv):
    """MobileGUI-v0's tasks played inside a world model.

    ## Description
    WM-R1's training setting (papers/envs.md §1.2): the agent never touches the real phone; each committed
    action goes to a `WorldModel` (``world_model=``) whose predicted screen is the next observation. A turn
    whose ``<think>`` holds ``call_wm(action='...')`` and that has no ``Action:`` after ``</think>`` is an
    imagined turn: the predicted screen comes back, nothing is committed and the step counter does not
    move. The first screen is the task's start screen (task data, as WM-R1's dataset gives the first
    screenshot); every later screen is a prediction.

    Real interactions are counted: ``info["real_steps"]`` is the number of calls into the real simulator
    so far in the episode, i.e. the actions the evaluation simulator applied (``training=False``) plus the
    transitions a simulator-backed world model computed (`WMState.real_steps`: one per prediction of
    `SimulatorWorldModel`, or of `NoisyWorldModel` over it). With ``training=True`` (default) the env
    itself makes no simulator call during the episode; true success is then measured after the episode,
    outside the training loop, by `replay_true_success` (the env's method, or the module function over a
    `Trajectory`'s `committed_actions`). A zero-real-interaction run (WM-R1's claim) also needs a world
    model that is not the simulator: the learned one (`papergym.baselines.world_model`), or
    `CodeWorldModel`.

    ## Observation
    As MobileGUI-v0, the screen being the world model's prediction; an imagined turn's observation starts
    with WM-R1's "The result of your imagined action is shown below..." line. With ``screen="image"`` the
    image is the world model's screen drawn by MobileGUI-v0's renderer: the imagined one on an imagined
    turn, else the predicted current one. A world model must return a `Screen` (``WMState.screen``); one
    that returns anything else raises a TypeError in image mode (use ``screen="text"`` for such a model).

    ## Action
    MobileGUI-v0's WM-R1 actions, plus imagined ``call_wm(action='...')`` turns (at most ``n_wm_max``;
    further calls are refused with a message and count as invalid).

    ## Reward
    ``outcome``: the judge's verdict at ``finished``: by default the template's final-screen check applied
    to the predicted screen; or any judge with ``score(prompt, response, *, criterion, seed)``, e.g.
    `JsonSuccessJudge` (WM-R1's JSON judge). ``format``: ``-format_penalty`` for an invalid action.
    Either way a question's answer counts only if the screen it is read from was among the predicted
    screens the agent was shown for its committed actions (MobileGUI-v0's rule, ``require_shown``;
    imagined ``call_wm`` screens do not count: inferred, the judged trajectory must show the evidence).
    WM-R1's group reward is `papergym.credit.wm_r1.WMR1Reward`.

    With ``training=False`` a simulator copy follows the committed actions during the episode and
    ``info["true_success"]`` (an evaluation label) comes at the end: MobileGUI-v0's success on the same
    actions, exactly what `replay_true_success` returns.

    ## Episode End
    Terminates at ``finished``; truncated when the task's real-step budget (MobileGUI-v0's rule) is spent or
    when the world model or judge fails (``info["error"]``). Registered with ``max_episode_steps=200``, above
    every budget (at most 88) plus ``n_wm_max`` imagined turns and room for invalid ones.

    ## Arguments
    - ``world_model`` (the backend rule of `papergym.backends`): None or ``"simulator"`` is the embedded
      `SimulatorWorldModel`, the simulator itself; any object with ``predict(state, action, *, seed)``
      over `WMState` is used as is; a bare `ChatModel` becomes `CodeWorldModel(chat_model)`. Others:
      `NoisyWorldModel`, or
      the learned one: `papergym.baselines.world_model.load_world_model(dir)`, a tiny LM trained on the
      simulator's transitions of the train split, `papergym.envs.mobile_gui.learned_wm`), or
      ``"table:PATH"``, a count-based one learned from the same transitions
      (`papergym.envs.mobile_gui.table_wm.TransitionTable`, saved at PATH).
    - ``oracle_imagines``: the oracle's chance of imagining its next action with ``call_wm`` before
      committing it (0: never; demonstrations of imagination for a warm start; inferred).
    - ``wm_error``: ε > 0 wraps the world model in `NoisyWorldModel.at_rate` (each error mode at ε, a
      wrong screen at ε/4): a controlled extra error over any world model (0: none).
    - ``judge``: None or ``"screen"`` (the template's final-screen check), a `Judge`, or a bare `ChatModel`
      (becomes `JsonSuccessJudge`, WM-R1's). ``n_wm_max``: 5 (WM-R1).
    - ``training``: True (default): no evaluation simulator, no ``info["true_success"]``; False: a
      simulator copy follows the committed actions and reports ``info["true_success"]``. The default is
      the training setting so that a trainer that plugs the env in is honest without knowing the flag
      (a forgotten flag then costs an evaluation label, never a hidden real interaction per step);
      evaluation asks for the label explicitly, here or through `replay_true_success`.
    - The rest as MobileGUI-v0 (``screen``, ``layout``, ``history``, ``element_ids``, ``templates``, ...).

    ## Paper
    WM-R1 (arXiv 2608.27508; papers/envs.md §1.2): imagination format and message, ``n_wm_max``, the judge's
    JSON; Code2World (§1.3): the world model's HTML screens and prompt.

    ## Version History
    - v0: initial version. Changed within v0 (issue 24): ``training=True`` became the default, so
      ``info["true_success"]`` is only reported with ``training=False`` (or by `replay_true_success`);
      ``info["real_steps"]`` counts the real simulator's calls instead of the literal 0; true success's
      evidence rule reads the real screens the actions reached (MobileGUI-v0's rule) instead of the
      predicted ones; the first screen comes from the world model's ``initial`` (the start screen);
      ``render()`` draws the screen the agent sees (the prediction), not the simulator's.
      Added ``wm_error``, ``oracle_imagines`` and ``world_model="table:PATH"``; with ``n_wm_max=0`` the
      prompt no longer offers ``call_wm`` (it is MobileGUI-v0's).

    >>> import gymnasium as gym, papergym
    >>> env = gym.make("papergym/WorldModelGUI-v0")
    >>> obs, info = env.reset(seed=0, options={"template": "SystemBluetoothTurnOn"})
    >>> imagine = "<think>Try it. call_wm(action='open_app(app_name=\\"Settings\\")')</think>"
    >>> obs, *_ = env.step(imagine)
    >>> obs.startswith("The result of your imagined action")
    True
    >>> while True:
    ...     obs, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
    ...     if terminated or truncated:
    ...         break
    >>> info["success"], info["n_wm"], info["real_steps"], "true_success" in info  # the simulator WM's steps
    (True, 1, 3, False)
    >>> env.unwrapped.replay_true_success()  # evaluation, after the episode
    True
    """

    def __init__(
        self,
        *,
        world_model: WorldModel | ChatModel | str | None = None,
        judge: Judge | ChatModel | str | None = None,
        n_wm_max: int = N_WM_MAX,
        screen: str = "text",
        layout: str | Layout = "default",
        history: int = HISTORY,
        element_ids: bool = True,
        templates: Any = None,
        test_size: int = DEFAULT_SPLIT_SIZES["test"],
        obs_mode: ObsMode = "text",
        render_mode: str | None = None,
        format_penalty: float = 0.1,
        require_shown: bool = True,
        training: bool = True,
        wm_error: float = 0.0,
        oracle_imagines: float = 0.0,
    ) -> None:
        if not isinstance(training, bool):
            raise ValueError(f"training must be a bool, got {training!r}")
        for name, value in (("wm_error", wm_error), ("oracle_imagines", oracle_imagines)):
            if not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be a probability in [0, 1], got {value!r}")
        if isinstance(world_model, str) and world_model.startswith(TABLE_PREFIX):
            world_model = TransitionTable.load(world_model.removeprefix(TABLE_PREFIX))
        screen_check = lambda: SCREEN_CHECK  # noqa: E731  # the judge's embedded default
        self.judge: Judge | str = resolve_backend(
            judge,
            role="judge",
            method="score",
            default=screen_check,
            names={SCREEN_CHECK: screen_check},
            wrap=JsonSuccessJudge,  # type: ignore[arg-type]  # a bare ChatModel (checked by resolve_backend)
        )
        if not isinstance(n_wm_max, int) or n_wm_max < 0:
            raise ValueError(f"n_wm_max must be an int >= 0, got {n_wm_max!r}")
        super().__init__(
            screen=screen,
            layout=layout,
            history=history,
            element_ids=element_ids,
            templates=templates,
            test_size=test_size,
            obs_mode=obs_mode,
            render_mode=render_mode,
            format_penalty=format_penalty,
            require_shown=require_shown,
        )
        layout_name = self.layout.name if self.layout.name in ("default", "heldout") else "default"
        simulator = lambda: SimulatorWorldModel(layout_name)  # noqa: E731
        self.world_model: WorldModel = resolve_backend(
            world_model,
            role="world_model",
            method="predict",
            default=simulator,
            names={"simulator": simulator},
            wrap=CodeWorldModel,  # type: ignore[arg-type]  # a bare ChatModel (checked by resolve_backend)
        )
        if wm_error > 0:
            self.world_model = NoisyWorldModel.at_rate(float(wm_error), self.world_model)
        self.wm_error = float(wm_error)
        self.oracle_imagines = float(oracle_imagines)
        self.n_wm_max = n_wm_max
        self.training = training
        self._test_size = test_size
        self._wm: _WM | None = None
        self._imagined: Screen | None = None

    # ------------------------------------------------------------------ world-model state
    @property
    def wm(self) -> _WM:
        if self._wm is None:
            self._require_episode()
        return self._wm  # type: ignore[return-value]

    def current_screen(self) -> Screen:
        """The predicted screen the agent sees."""
        return self.wm.state.screen

    def _observed_screen(self) -> Screen:
        """The image observation's screen: the world model's imagined one right after a world-model call
        (drawn by the same renderer as the real screens), else its predicted current one."""
        screen = self._imagined if self._imagined is not None else self.current_screen()
        self._imagined = None
        if not isinstance(screen, Screen):
            raise TypeError(
                f"{self.world_model!r} returned a {type(screen).__name__} screen; screen='image' draws "
                "papergym.envs.mobile_gui.views.Screen objects only (use screen='text' for text-only models)"
            )
        return screen

    def _system_prompt(self, task: Task) -> str:
        # n_wm_max=0 offers no imagination: the prompt is MobileGUI-v0's (a "no call_wm" arm sees no note)
        note = WM_NOTE.format(n=self.n_wm_max) if self.n_wm_max > 0 else ""
        return super()._system_prompt(task) + note

    def _start(self, task: Task) -> Turn:
        self._wm = None
        template = self._begin(task)
        s = self._state_or_raise()
        goal = template.goal(s.params)
        # the evaluation simulator (training=False only); its start screen is task data, not a step
        self._phone = None if self.training else Phone(s.phone, self._apps, self.layout)
        real_shown = set() if self._phone is None else screen_texts(self._phone.screen)
        initial = getattr(self.world_model, "initial", None)
        state = initial(goal, copy.deepcopy(s.phone)) if callable(initial) else None
        if not isinstance(state, WMState):
            state = WMState(goal, self.start_screen(), None)
        self._wm = _WM(state, real_shown=real_shown)
        self._saw()
        text = f"Instruction: {goal}\n\nScreen:\n{self._render_screen()}"
        info = {K.ANDROIDWORLD_TEMPLATE: s.template, K.STEP_BUDGET: s.budget, K.N_WM: 0, K.REAL_STEPS: 0}
        return Turn(text, info=info)

    def start_screen(self) -> Screen:
        """The task's start screen in this env's layout (task data: laid out, no action applied)."""
        return Phone(copy.deepcopy(self._state_or_raise().phone), self._apps, self.layout).screen

    def _predict(self, action: str) -> WMState:
        """The world model's prediction from the current state; its simulator steps are counted."""
        wm = self.wm
        predicted = self.world_model.predict(wm.state, action, seed=self._seed())
        wm.real_steps += max(0, int(predicted.real_steps) - int(wm.state.real_steps))
        return predicted

    def _seed(self) -> int:
        return int(self.np_random.integers(2**31))

    # ------------------------------------------------------------------ acting
    def _act(self, action: str) -> Turn:
        s = self._state_or_raise()
        info: dict[str, Any] = {K.ANDROIDWORLD_TEMPLATE: s.template, K.STEP_BUDGET: s.budget}
        turn = self._act_turn(action, info)
        turn.info = {**turn.info, K.REAL_STEPS: self.wm.real_steps}
        return turn

    def _act_turn(self, action: str, info: dict[str, Any]) -> Turn:
        s = self._state_or_raise()
        wm = self.wm
        imagined = _CALL_WM.search(action)
        if imagined is not None and "Action:" not in action[action.rfind("</think>") :]:
            s.pending = None
            info[K.IMAGINED] = True
            if wm.n_wm >= self.n_wm_max:
                info[K.N_WM] = wm.n_wm
                return self._invalid(
                    f"World-model calls are used up ({self.n_wm_max}); commit an action.", **info
                )
            try:
                predicted = self._predict(imagined.group(1))
            except BackendError as exc:
                return self._fault(exc, info)
            wm.n_wm += 1
            wm.imagined_at = s.steps
            info[K.N_WM] = wm.n_wm
            self._imagined = predicted.screen
            screen = self._render_screen(predicted.screen)
            return Turn(f"{IMAGINED_NOTE}\n{screen}", {"outcome": 0.0}, info=info, role="system")
        info[K.IMAGINED] = False
        info[K.N_WM] = wm.n_wm
        wm.committed.append(action)
        try:
            parsed = parse_action(action, element_ids=self.element_ids)
        except ActionError as exc:
            s.steps += 1
            s.history.append(f"(invalid) {exc}")
            return self._budget(self._invalid(self._observation(str(exc)), **info, **{K.PARSED_ACTION: None}))
        pending, s.pending = s.pending, None
        if pending is not None and pending[0] == action:
            s.oracle_mem = pending[1]
        s.steps += 1
        if self._phone is not None:  # the evaluation simulator follows the same actions
            self._phone.act(parsed)
            wm.real_steps += 1
            wm.real_shown |= screen_texts(self._phone.screen)
        if parsed.kind != "finished":
            try:
                wm.state = self._predict(action)
            except BackendError as exc:
                return self._fault(exc, info)
            self._saw()
        s.history.append(format_action(parsed))
        info[K.PARSED_ACTION] = parsed.to_dict()
        if parsed.kind == "finished":
            s.finished, s.answer = True, parsed.text
            try:
                judged = self._judge()
            except BackendError as exc:
                return self._fault(exc, info)
            s.judged = judged
            if self._phone is not None:
                info[K.TRUE_SUCCESS] = self._true_success()
            info[K.CHECKS] = {"judged": judged}
            return Turn(
                self._observation("Task finished."), {"outcome": float(judged)}, terminated=True, info=info
            )
        return self._budget(Turn(self._observation(""), {"outcome": 0.0}, info=info))

    def _budget(self, turn: Turn) -> Turn:
        turn = super()._budget(turn)
        if turn.truncated and self._phone is not None:
            turn.info = {**turn.info, K.TRUE_SUCCESS: False}
        return turn

    def _true_success(self) -> bool:
        """The evaluation simulator's success, its own screens being the evidence (``training=False``)."""
        s = self._state_or_raise()
        return bool(
            self.template.success(
                s.params, s.phone, s.answer, self.wm.real_shown, require_shown=self.require_shown
            )
        )

    def replay_true_success(self, trajectory: Trajectory | None = None) -> bool:
        """True success, by replaying committed actions on a fresh real simulator (evaluation only).

        Call it after an episode, outside the training loop; it equals ``info["true_success"]`` of the
        same episode played with ``training=False``.

        Args:
            trajectory: an episode of an env with this one's settings; None: the current episode.
        """
        if trajectory is None:
            task_id, actions = self.task.task_id, list(self.wm.committed)
        else:
            task_id, actions = trajectory.task_id, committed_actions(trajectory)
        return replay_true_success(
            task_id,
            actions,
            layout=self.layout,
            element_ids=self.element_ids,
            require_shown=self.require_shown,
            templates=self.template_names,
            test_size=self._test_size,
        )

    def _judge(self) -> bool:
        s = self._state_or_raise()
        screen = self.wm.state.screen
        if not self._shown_ok():
            return False
        if self.judge == SCREEN_CHECK:
            return bool(self.template.screen_check(s.params, screen, s.answer))
        response = render_text(screen) + (f"\n\nThe agent's answer: {s.answer}" if s.answer else "")
        return self.judge.score(self.template.goal(s.params), response, seed=self._seed()) >= 0.5

    def _fault(self, exc: BackendError, info: dict[str, Any]) -> Turn:
        info[K.ERROR] = {"type": type(exc).__name__, "message": str(exc)[:500], "retryable": False}
        return Turn(f"The world model failed: {exc}", {"outcome": 0.0}, truncated=True, info=info)

    def success_check(self) -> bool:
        s = self._state_or_raise()
        return bool(s.finished and s.judged)

    def oracle_action(self) -> str:
        """The oracle's next action, reading the world model's screen (exact with `SimulatorWorldModel`)."""
        s = self._state_or_raise()
        mem = copy.deepcopy(s.oracle_mem)
        plan = self.template.plan(s.params)
        try:
            action = plan.next(Ctx(self.wm.state.screen, mem, mem.setdefault("_plan", {})))
        except (OracleError, ValueError, KeyError, IndexError):
            # A noisy world model showed a screen the plan cannot read (a missing element, a garbled date):
            # wait for the next prediction instead.
            return "Thought: The screen is not what I expected.\nAction: wait()"
        if action is None:
            action = "Thought: Nothing is left to do.\nAction: finished(content='')"
        if self._imagines_first(action):
            return imagine(action)
        s.pending = (action, mem)
        return action

    def _imagines_first(self, action: str) -> bool:
        """Whether the oracle imagines ``action`` before committing it: at most once per step, within
        ``n_wm_max``, never ``finished``, with probability ``oracle_imagines`` drawn from the task id and
        step (not from ``np_random``: asking the oracle must not change the episode)."""
        s, wm = self._state_or_raise(), self.wm
        if self.oracle_imagines <= 0 or wm.n_wm >= self.n_wm_max or wm.imagined_at == s.steps:
            return False
        if "finished(" in action:
            return False
        return random.Random(f"{self.task.task_id}:{s.steps}").random() < self.oracle_imagines

    def _state(self) -> Any:
        return (self._s, self._wm)

    def _load_state(self, state: Any) -> None:
        s, wm = state
        super()._load_state(s)
        if self.training:
            self._phone = None
        self._wm = wm

    def _drawn_screen(self) -> Screen | None:
        """`render` draws the screen the agent sees: the world model's."""
        return self._wm.state.screen if self._wm is not None else None


CONTRACT_VARIANTS: list[dict[str, Any]] = [
    {},
    {"layout": "heldout"},
    {"training": False},
    {"screen": "image"},
]
