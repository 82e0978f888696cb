"""Time tau2-bench's own gym env (``tau-bench-v0``, ``tau2.gym.gym_agent.AgentGymEnv``) on gold scripts.

Run by a Python that has tau2 installed (not papergym's: tau2 is no papergym dependency);
``benchmarks/service_speed.py --tau2-python`` runs it and reads the JSON it prints::

    TAU2_DATA_DIR=/tmp/tau2data /tmp/tau2venv/bin/python benchmarks/tau2_gym_speed.py \\
        --domain retail --tasks 0,1,2

The agent's actions are each task's gold actions as JSON tool calls; a gold action of the user (telecom's
phone) is asked for in a message, and the user answers with that tool call, then "Done.". The user is
tau2's ``UserSimulator`` with the LLM call replaced by the script (its state bookkeeping is kept); it
opens with one line and ends the call with ``###STOP###`` after the agent's last message (which states the
task's ``communicate_info``, as papergym's oracle does). NL assertions
(an LLM judge in tau2; unevaluated in papergym without ``use_judge``) are left out of tau2's reward, so
no step calls a model. Timed: reset, every step (tau2 evaluates the episode inside the last one) and the
episode (reset + steps).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from typing import Any, ClassVar

OPENING = "Hi, I need help with my account."
ASK = "Please run {name} on your phone and tell me when it is done."
CLOSING = "Your request has been handled."
ANSWER = "Here is what you asked for: {info}"
"""The agent's last message: the task's ``communicate_info`` when it has some (as papergym's oracle)."""


def _scripted_env(tau2: dict[str, Any]) -> type:
    """The ``AgentGymEnv`` whose user replays a script (tau2's modules are passed in, imported late so
    that ``TAU2_DATA_DIR`` is read first)."""
    user_simulator, message, gym_agent = tau2["user_simulator"], tau2["message"], tau2["gym_agent"]

    class ScriptedUser(user_simulator.UserSimulator):  # type: ignore[misc,name-defined]
        def __init__(self, replies: Sequence[Any], **kwargs: Any) -> None:
            super().__init__(llm="scripted", **kwargs)
            self.replies = list(replies)

        def _generate_next_message(self, incoming: Any, state: Any) -> Any:
            if isinstance(incoming, message.MultiToolMessage):
                state.messages.extend(incoming.tool_messages)
            else:
                state.messages.append(incoming)
            state.system_messages + state.flip_roles()  # what tau2 builds for its LLM call
            reply = self.replies.pop(0)
            if isinstance(reply, str):
                return message.UserMessage(role="user", content=reply)
            return message.UserMessage(role="user", tool_calls=reply)

    class ScriptedAgentGymEnv(gym_agent.AgentGymEnv):  # type: ignore[misc,name-defined]
        replies: ClassVar[list[Any]] = []

        def _get_user(self) -> Any:
            environment, task = self._get_environment(), self._get_task()
            try:
                tools = environment.get_user_tools(include=task.user_tools) or None
            except ValueError:
                tools = None
            return ScriptedUser(self.replies, tools=tools, instructions=task.user_scenario)

        def _get_task(self) -> Any:
            task = super()._get_task()  # tau2 reloads its task file here, on every step
            criteria = task.evaluation_criteria
            if criteria is not None:  # no LLM judge: NL assertions left out, as papergym's without one
                criteria.reward_basis = [b for b in criteria.reward_basis if b.value != "NL_ASSERTION"]
                criteria.nl_assertions = None
            return task

    return ScriptedAgentGymEnv


def gold_script(task: Any, tool_call: type) -> tuple[list[str], list[Any]]:
    """The agent's actions and the user's replies that replay ``task``'s gold actions."""
    actions: list[str] = []
    replies: list[Any] = [OPENING]
    for i, action in enumerate((task.evaluation_criteria and task.evaluation_criteria.actions) or []):
        if action.requestor == "user":
            actions.append(ASK.format(name=action.name))
            call = tool_call(id=f"u{i}", name=action.name, arguments=action.arguments, requestor="user")
            replies += [[call], "Done."]
        else:
            actions.append(json.dumps({"name": action.name, "arguments": action.arguments}))
    info = (task.evaluation_criteria and task.evaluation_criteria.communicate_info) or []
    actions.append(ANSWER.format(info=", ".join(info)) if info else CLOSING)
    replies.append("###STOP###")
    return actions, replies


def run(domain: str, task_ids: Sequence[str], warmup: int) -> list[dict[str, Any]]:
    """One timed episode per task (after ``warmup`` untimed ones on the first task)."""
    import importlib

    tau2 = {
        name: importlib.import_module(f"tau2.{path}")
        for name, path in (
            ("user_simulator", "user.user_simulator"),
            ("message", "data_model.message"),
            ("gym_agent", "gym.gym_agent"),
            ("registry", "registry"),
        )
    }
    env_class = _scripted_env(tau2)
    tasks = {t.id: t for t in tau2["registry"].registry.get_tasks_loader(domain)()}
    episodes = []
    for k, task_id in enumerate([task_ids[0]] * warmup + list(task_ids)):
        actions, replies = gold_script(tasks[task_id], tau2["message"].ToolCall)
        env_class.replies = replies
        env = env_class(domain=domain, task_id=task_id)
        t0 = time.perf_counter()
        env.reset()
        reset = time.perf_counter() - t0
        steps, reward, done = [], 0.0, False
        for action in actions:
            s = time.perf_counter()
            _, reward, done, _, _ = env.step(action)
            steps.append(time.perf_counter() - s)
        episode = time.perf_counter() - t0
        if k >= warmup:
            episodes.append(
                {
                    "task": task_id,
                    "reset": reset,
                    "steps": steps,
                    "tool_call": [a.startswith("{") for a in actions],
                    "episode": episode,
                    "reward": reward,
                    "done": done,
                }
            )
    return episodes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--domain", required=True)
    parser.add_argument("--tasks", required=True, help="comma-separated task ids")
    parser.add_argument("--warmup", type=int, default=1)
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    from loguru import logger

    logger.remove()  # tau2 logs every step at INFO
    episodes = run(args.domain, args.tasks.split(","), args.warmup)
    json.dump({"episodes": episodes, "load": os.getloadavg()[0]}, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
