"""Calibrate the simulated channel from the real TTS -> ASR channel; writes `confusion_table.py`.

Procedure: draw slot values of every class from the generated retail database (emails, first and last
names, zip codes, order ids, user ids, item ids, prices) and from seeded generators (dates, letter-digit
codes, digit strings); say each in the scripted user's carrier sentence ("My {topic} is {value}."),
synthesize it, add white noise at each SNR level, transcribe it, and read the value back with the
same pattern the oracle uses. The table keeps every (class, said, heard) triple per level; the
simulated channel derives its per-class rates and character outcomes from them after
`papergym.envs.voice.slots.normalize_heard` (digit grouping and spoken symbols undone), so a value
counts as misheard unless it comes back exactly after that normalisation.

Run: ``python -m papergym.envs.voice.calibrate --n 16 --levels clean 20 10`` (extra ``audio``).
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from papergym.backends.speech import add_noise, make_asr, make_tts
from papergym.envs.service.domains import get_domain
from papergym.envs.voice.slots import stats_from_pairs

logger = logging.getLogger(__name__)

TOPICS: dict[str, tuple[str, ...]] = {
    "email": ("email",),
    "name": ("first name", "last name"),
    "digits": ("zip code", "item id"),
    "order_id": ("order id",),
    "user_id": ("user id",),
    "amount": ("amount",),
    "date": ("date",),
    "code": ("code",),
}
"""The spoken topics of each slot class (the carrier sentence names the topic)."""
TABLE_PATH = Path(__file__).with_name("confusion_table.py")
HEARD_CHARS = 80
"""Heard values are cut to this length (a runaway transcript is wrong either way)."""


def slot_values(n: int, seed: int) -> Iterator[tuple[str, str, str]]:
    """(class, topic, value) triples: ``n`` values of each topic, drawn by ``seed``."""
    rng = random.Random(seed)
    db = get_domain("retail").generate_db(2026)
    users = list(db["users"].values())
    orders = list(db["orders"].values())
    for _ in range(n):
        user = rng.choice(users)
        order = rng.choice(orders)
        item = rng.choice(order["items"])
        yield "email", "email", user["email"]
        yield "name", "first name", user["name"]["first_name"]
        yield "name", "last name", user["name"]["last_name"]
        yield "digits", "zip code", user["address"]["zip"]
        yield "digits", "item id", item["item_id"]
        yield "order_id", "order id", order["order_id"]
        yield "user_id", "user id", user["user_id"]
        yield "amount", "amount", f"${item['price']:.2f}"
        yield "date", "date", f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        code = "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(4))
        yield "code", "code", code + rng.choice("0123456789")


def heard_value(topic: str, heard: str) -> str:
    """The value read back from a transcript with the oracle's pattern (the whole text if absent)."""
    pattern = re.compile(rf"[Mm]y {re.escape(topic)} is (.+?)(?:\.\s|\.$|$)", re.IGNORECASE)
    found = pattern.findall(heard)
    return found[-1].strip() if found else heard.strip()


def calibrate(
    n: int = 16,
    levels: Sequence[str] = ("clean", "20", "10"),
    *,
    seed: int = 0,
    tts: str = "piper",
    asr: str = "whisper",
) -> dict[str, Any]:
    """The confusion table: ``{"engine", "n", "seed", "levels": {level: [(class, said, heard), ...]}}``."""
    speaker, listener = make_tts(tts), make_asr(asr)
    noise = np.random.default_rng(seed)
    table: dict[str, Any] = {"engine": f"{tts}+{asr}", "n": n, "seed": seed, "levels": {}}
    values = list(slot_values(n, seed))
    for level in levels:
        triples = []
        for cls, topic, value in values:
            audio = speaker.synthesize(f"My {topic} is {value}.")
            if level != "clean":
                audio = add_noise(audio, float(level), noise)
            heard = heard_value(topic, listener.transcribe(audio))
            triples.append((cls, value, heard[:HEARD_CHARS]))
        table["levels"][level] = triples
        stats = stats_from_pairs(triples)
        logger.info("level %s: %s", level, {c: f"{s['wrong']}/{s['n']}" for c, s in stats.items()})
    return table


def write_table(table: dict[str, Any], path: Path = TABLE_PATH) -> None:
    """Write ``table`` as the Python module `papergym.envs.voice.confusion_table`."""
    rows = []
    for level, triples in table["levels"].items():
        rows.append(f"        {json.dumps(level)}: [")
        for triple in triples:
            one = f"            ({', '.join(json.dumps(x) for x in triple)}),"
            if len(one) <= 110:
                rows.append(one)
            else:  # the layout ruff format gives a long tuple
                rows += [
                    "            (",
                    *(f"                {json.dumps(x)}," for x in triple),
                    "            ),",
                ]
        rows.append("        ],")
    head = {k: v for k, v in table.items() if k != "levels"}
    body = "\n".join(
        ["{", *(f"    {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()), '    "levels": {', *rows]
    )
    body += "\n    },\n}"
    path.write_text(
        '"""The simulated channel\'s calibration table, measured on the real channel.\n\n'
        "Generated by ``python -m papergym.envs.voice.calibrate`` (do not edit by hand). ``levels`` maps\n"
        'an SNR level ("clean" or dB) to the (slot class, value said, value heard) triples measured there.\n'
        '"""\n\n'
        "from typing import Any\n\n"
        f"TABLE: dict[str, Any] = {body}\n"
    )


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Command-line entry: calibrate and write the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=16, help="values per topic")
    parser.add_argument("--levels", nargs="+", default=["clean", "20", "10"], help="'clean' or SNR dB")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tts", default="piper")
    parser.add_argument("--asr", default="whisper")
    parser.add_argument("--out", type=Path, default=TABLE_PATH)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    table = calibrate(args.n, args.levels, seed=args.seed, tts=args.tts, asr=args.asr)
    write_table(table, args.out)
    return table


if __name__ == "__main__":
    main()
