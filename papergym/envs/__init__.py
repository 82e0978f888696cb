"""Every papergym id, registered with Gymnasium (string entry points: nothing heavy is imported).

`CATALOGUE` describes each id for the CLI, the README table and the contract tests; each entry's
``variants`` names the module attribute listing the kwargs the contract tests run it with.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

import gymnasium as gym


@dataclass(frozen=True)
class EnvEntry:
    """One registered id.

    Attributes:
        id: the Gymnasium id.
        entry_point: ``"module:Class"``.
        paper: the paper whose setting it packages.
        summary: what it simulates, in one line.
        backends: its embedded default backends, in words.
        max_episode_steps: the step budget (Gymnasium's ``TimeLimit``).
        variants: ``"module:ATTRIBUTE"`` of the ``CONTRACT_VARIANTS`` list.
    """

    id: str
    entry_point: str
    paper: str
    summary: str
    backends: str
    max_episode_steps: int
    variants: str

    def contract_variants(self) -> list[dict[str, Any]]:
        module, attribute = self.variants.split(":")
        return list(getattr(importlib.import_module(module), attribute))


_REASONING = "papergym.envs.reasoning"
CATALOGUE: tuple[EnvEntry, ...] = (
    EnvEntry(
        "papergym/Reasoning-v0",
        f"{_REASONING}.reasoning_env:ReasoningEnv",
        "Merge vs Mix-RL vs MOPD (M2RL, arXiv 2602.12566)",
        "single-turn verifiable problems: math, code output, science, instruction, tool choice",
        "procedural generators and exact verifiers",
        2,  # single-turn: it terminates at step 1; a budget of 2 keeps TimeLimit from also truncating
        f"{_REASONING}.reasoning_env:CONTRACT_VARIANTS",
    ),
    EnvEntry(
        "papergym/MultiDomain-v0",
        f"{_REASONING}.multi_domain:MultiDomainEnv",
        "Merge vs Mix-RL vs MOPD (M2RL, arXiv 2602.12566)",
        "a balanced mixture of the reasoning domains, info['domain'] per episode",
        "procedural generators and exact verifiers",
        2,
        f"{_REASONING}.multi_domain:CONTRACT_VARIANTS",
    ),
    EnvEntry(
        "papergym/TestTime-v0",
        f"{_REASONING}.test_time:TestTimeEnv",
        "TTPO: test-time RL without labels (TTRL majority vote)",
        "a fixed problem set rewarded on format only; labels hidden from the reward",
        "procedural generators; the label only in info['hidden_label']",
        2,
        f"{_REASONING}.test_time:CONTRACT_VARIANTS",
    ),
    EnvEntry(
        "papergym/MemoryQA-v0",
        "papergym.envs.memory_qa.memory_qa_env:MemoryQAEnv",
        "AWM: working-memory quality for long-document VQA",
        "long procedural documents read page by page through a capped memory; context reset every step",
        "procedural documents; extractive reader",
        100,  # up to 60 pages + the answer, with room for invalid actions
        "papergym.envs.memory_qa.memory_qa_env:CONTRACT_VARIANTS",
    ),
    EnvEntry(
        "papergym/SearchCritic-v0",
        "papergym.envs.search.search_critic_env:SearchCriticEnv",
        "CAFE: search agent with requestable critic feedback (Search-R1 format variant)",
        "multi-hop questions over a generated encyclopedia; search, one critic-feedback request, answer",
        "procedural knowledge base; bm25s; oracle critic",
        40,  # CAFE's 30 tool calls, a feedback request, an answer, and room for a few invalid turns
        "papergym.envs.search.search_critic_env:CONTRACT_VARIANTS",
    ),
    EnvEntry(
        "papergym/ServiceAgent-v0",
        "papergym.envs.service.service_env:ServiceAgentEnv",
        "SpeechGym / IAPO substrate: tau2-bench customer service (retail, airline, telecom)",
        "a customer-service agent with tools over a database and a simulated user; tau2-exact evaluation",
        "generated tau2-schema databases and tasks; scripted user; scripted judge",
        100,  # tau2's orchestrator max_steps
        "papergym.envs.service.service_env:CONTRACT_VARIANTS",
    ),
    EnvEntry(
        "papergym/MobileGUI-v0",
        "papergym.envs.mobile_gui.mobile_gui_env:MobileGUIEnv",
        "WM-R1: GUI agent (AndroidWorld task families, WM-R1 action format)",
        "a simulated Android phone, 14 apps, AndroidWorld's task templates; text, HTML or image screens",
        "the phone simulator; programmatic success checks",
        200,  # above every task's own budget (2 * optimal_steps + 10), which the env enforces
        "papergym.envs.mobile_gui.mobile_gui_env:CONTRACT_VARIANTS",
    ),
    EnvEntry(
        "papergym/WorldModelGUI-v0",
        "papergym.envs.mobile_gui.world_model_env:WorldModelGUIEnv",
        "WM-R1: GUI agent trained inside a world model, with imagined call_wm turns",
        "MobileGUI-v0's tasks with every transition from a pluggable world model; judged vs true success",
        "exact simulator world model; final-screen judge",
        200,  # every real-step budget (<= 88) + n_wm_max imagined turns (5) + room for invalid turns
        "papergym.envs.mobile_gui.world_model_env:CONTRACT_VARIANTS",
    ),
    EnvEntry(
        "papergym/VoiceService-v0",
        "papergym.envs.voice.voice_env:VoiceServiceEnv",
        "SpeechGym: the tau2 service tasks spoken and heard through an offline speech channel",
        "the service env with user and agent talking through TTS -> (noise) -> ASR; tools stay text",
        "Piper TTS + faster-whisper tiny.en from wheels (or espeak-ng + pocketsphinx); scripted user",
        100,  # tau2's orchestrator max_steps
        "papergym.envs.voice.voice_env:CONTRACT_VARIANTS",
    ),
)

for _entry in CATALOGUE:
    if _entry.id not in gym.registry:
        gym.register(id=_entry.id, entry_point=_entry.entry_point, max_episode_steps=_entry.max_episode_steps)

ENV_IDS: tuple[str, ...] = tuple(e.id for e in CATALOGUE)


def entry(env_id: str) -> EnvEntry:
    """The catalogue entry of ``env_id``."""
    for e in CATALOGUE:
        if e.id == env_id:
            return e
    raise ValueError(f"unknown papergym id {env_id!r}; registered: {', '.join(ENV_IDS)}")
