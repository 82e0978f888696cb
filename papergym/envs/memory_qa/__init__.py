"""`papergym/MemoryQA-v0`: long procedural documents read page by page through a capped working memory.

Modules: `documents` (document and question generation), `reader` (memory-only answerability
readers), `rendering` (PIL page images, optional), `memory_qa_env` (the env).
"""

from __future__ import annotations

from papergym.envs.memory_qa.documents import KINDS, QUESTION_TYPES, DocumentPlan, Question, prior_guess
from papergym.envs.memory_qa.reader import ExtractiveReader, MajorityReader

__all__ = [
    "KINDS",
    "QUESTION_TYPES",
    "DocumentPlan",
    "ExtractiveReader",
    "MajorityReader",
    "Question",
    "prior_guess",
]
