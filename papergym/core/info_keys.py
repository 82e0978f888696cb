"""The name of every ``info`` key papergym emits, in one place.

Envs, wrappers, credit hooks and trainers import these names instead of spelling strings, so a
key is renamed once. `LABEL_KEYS` carry gold labels: they are for evaluation only, and no
GroupReward, AdvantageHook or trainer may read them (tests permute them to check).
"""

from __future__ import annotations

# Fixed keys of the env contract (DESIGN.md, "Info keys").
TASK_ID = "task_id"
"""str: the task's id; ``reset(options={"task_id": ...})`` replays it."""
SPLIT = "split"
"""str: "train" or "test" (an env with a single fixed set may use only one)."""
DIFFICULTY = "difficulty"
"""int: the task's difficulty level, 1 = easiest."""
REWARD_COMPONENTS = "reward_components"
"""dict[str, float]: additive terms whose sum is the step reward."""
CHECKS = "checks"
"""dict[str, bool]: per-check results (not summed)."""
UNEVALUATED = "unevaluated"
"""list[str]: checks that were not run; never counted as passed."""
SUCCESS = "success"
"""bool: whether the task was solved; present on the step that ends the episode."""
INVALID_ACTION = "invalid_action"
"""bool: the action could not be parsed or was illegal; the env answered with feedback."""
PARSED_ACTION = "parsed_action"
"""the env's reading of the action (e.g. the extracted answer), or None."""
TOOL_CALLS = "tool_calls"
"""list[dict]: the tool calls parsed from the action, ``{"name", "arguments"}``; an env that executes them
adds ``"ok": bool`` (the call ran without error: unknown tools, invalid arguments, domain errors and policy
refusals are ``False``)."""
TOOL_RESULTS = "tool_results"
"""list[str]: what each tool call returned (errors included, as text)."""
COST = "cost"
"""dict[str, int]: deterministic counts only (model calls, tokens, cache hits)."""
ERROR = "error"
"""dict: ``{"type", "message", "retryable"}`` when a backend fault truncated the episode."""
CONTEXT_RESET = "context_reset"
"""bool: the agent's visible context was reset (memory envs)."""
TOOLS = "tools"
"""list[dict]: the tools' schemas in OpenAI's function format, at reset (service envs)."""

# Env-specific keys.
DOMAIN = "domain"
"""str: the problem domain (reasoning envs)."""
ANSWER = "answer"
"""str | None: the answer extracted from the completion, normalised for comparison."""
HIDDEN_LABEL = "hidden_label"
"""str: the gold answer of a label-free env (TestTime); evaluation only."""
SEGMENTS = "segments"
"""dict: the step's part of a feedback trajectory (SearchCritic): ``segment`` ("pre", "request", "post"),
``request_step`` (-1 before a request), ``n_requests``, and once feedback was given ``prefix``,
``feedback`` and ``critic_input`` (the ``question`` and ``trajectory`` messages the critic was given)."""
QUESTION_TYPE = "question_type"
"""str: the question's style (SearchCritic: compositional, comparison, inference, bridge_comparison;
MemoryQA: ``single``, ``aggregate``, ``compare``)."""
PROVENANCE = "provenance"
"""dict: the earlier tool results and user turns that supplied an action's values; error flags (service)."""
DB_DIFF = "db_diff"
"""list[dict]: at the end of a service episode whose ``db`` check failed, each record that differs from
the gold database: ``table``, ``key``, ``final``, ``gold`` (None where the record is missing)."""
N_WM = "n_wm"
REAL_STEPS = "real_steps"
TRUE_SUCCESS = "true_success"
"""bool: success measured against the real environment where the reward came from a model."""
CELL = "cell"
"""str: the four-cell outcome, e.g. ``"correct_answerable"`` (`papergym.wrappers.FourCellReward`)."""
MEMORY = "memory"
"""str: the agent's working memory after the step (memory envs)."""
MEMORY_CUT = "memory_cut"
"""bool: the memory written this step was over the cap and was cut."""
READER_ANSWER = "reader_answer"
"""str: the reader's answer from (question, final memory) alone: memory-only answerability."""
PAGE = "page"
"""int: the 0-based page shown in the observation (document envs)."""
ANDROIDWORLD_TEMPLATE = "androidworld_template"
"""str: the AndroidWorld task template a mobile GUI task models (task_metadata.json's ``task_name``)."""
IMAGINED = "imagined"
"""bool: the turn was an imagined world-model call (``call_wm``), not a committed action (WorldModelGUI)."""
STEP_BUDGET = "step_budget"
"""int: the real-step budget of a mobile GUI task (from the template's ``optimal_steps``)."""

# Self-play (papergym/SelfPlay-v0).
PHASE = "phase"
"""str: the role that acts next in a self-play round (``challenger``, ``solver``, ``judge``) or ``done``."""
TRAINABLE = "trainable"
"""bool: whether this agent's role is marked trainable (a trainer may freeze any role)."""
SOLVER_AGREEMENT = "solver_agreement"
"""float: p̂, the share of the solver's answers that agree with (verifiable) or beat (open-ended, by the
judge's scores) the challenger's reference."""
SOLVER_REWARDS = "solver_rewards"
"""list[float]: the reward of each of the solver's G answers, in order."""
CANDIDATES = "candidates"
"""list[str]: the texts the judge scored, in the order of its scores."""
JUDGE_SCORES = "judge_scores"
"""list[float]: the judge's score of each candidate."""
PAIRS = "pairs"
"""list[dict]: the round's preference pairs: ``chosen_index`` / ``rejected_index`` into the candidates, the
``task``, ``chosen`` and ``rejected`` texts, ``kind`` and ``detail``."""
HIDDEN_QUALITY = "hidden_quality"
"""list[float]: the hidden quality of each answer (solver) or candidate (judge); evaluation only."""

LABEL_KEYS: frozenset[str] = frozenset({HIDDEN_LABEL, TRUE_SUCCESS, HIDDEN_QUALITY})
"""Keys that carry a gold label: evaluation only."""
POLICY = "policy"
"""str: the domain policy the agent must follow (service env, at reset)."""
