"""Search over a fictional encyclopedia with requestable critic feedback (CAFE; Search-R1's format).

Modules: `knowledge_base` (the generated world), `questions` (2WikiMultihopQA-style questions and
scoring), `corpus` (passages, the shared per-process cache, loaders for real data), `retrieval`
(bm25s and dense retrievers), `critic` (`OracleCritic`, CAFE's critic prompt) and
`search_critic_env` (`papergym/SearchCritic-v0`).
"""

from papergym.envs.search.corpus import Corpus, get_world, load_corpus_jsonl, load_questions
from papergym.envs.search.critic import OracleCritic, cafe_critic
from papergym.envs.search.questions import QUESTION_TYPES, QAItem, exact_match, f1_score, normalize_answer

__all__ = [
    "QUESTION_TYPES",
    "Corpus",
    "OracleCritic",
    "QAItem",
    "cafe_critic",
    "exact_match",
    "f1_score",
    "get_world",
    "load_corpus_jsonl",
    "load_questions",
    "normalize_answer",
]
