"""``test_items.json``: each test example's share of a run's test score, beside its metrics.json.

Every task score is a ratio of sums over test examples (``xling.finetune.metrics``), so a run
keeps, per test language, one ``[numerator, denominator]`` pair per example, in the test file's
order: e.g. ``[2, 3]`` for a sentence with one right entity among one gold and two predicted spans
(F1 = 2 tp / (gold + predicted)). Rescoring any resample of the test set from these pairs needs
no model and no predictions file; the claims check uses it to tell a difference between two rows
of Table 1 from the luck of the test sentences (``xling.report.resamples``). Torch-free.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from xling.base.atomic import atomic_open

# Per test example, the numerator and denominator of a score (xling.finetune.metrics).
ItemCounts = list[tuple[int, int]]

TEST_ITEMS = "test_items.json"


def write_test_items(path: str | Path, metric: str, items: Mapping[str, ItemCounts]) -> None:
    """One line per language (a few kB each, where indented JSON would take a line per number)."""
    lines = [
        json.dumps(lang) + ": " + json.dumps([list(c) for c in counts])
        for lang, counts in sorted(items.items())
    ]
    with atomic_open(path) as handle:
        handle.write('{"metric": ' + json.dumps(metric) + ', "test": {\n')
        handle.write(",\n".join(lines))
        handle.write("\n}}\n")


def read_test_items(path: str | Path) -> dict[str, ItemCounts]:
    """Language -> per-example ``(numerator, denominator)``; errors name the file and the fix."""
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{path}: no test item counts; fine-tuning runs older than this file format lack them: "
            "rerun the run's fine-tuning job"
        ) from None
    except json.JSONDecodeError as error:
        raise ValueError(
            f"{path}:{error.lineno}: not valid JSON ({error.msg}); rerun its fine-tuning job"
        ) from None
    test = document.get("test") if isinstance(document, dict) else None
    if not isinstance(test, dict):
        raise ValueError(f"{path}: no 'test' object of languages; rerun its fine-tuning job")
    items = {}
    for lang, counts in test.items():
        pairs = []
        for index, pair in enumerate(counts):
            if (
                not isinstance(pair, list)
                or len(pair) != 2
                or not all(isinstance(x, int | float) and x >= 0 for x in pair)
                or pair[0] > pair[1]  # 2 tp <= gold + predicted spans; hits <= words
            ):
                raise ValueError(
                    f"{path}: test item {index + 1} of {lang!r} is {pair!r}, not a pair of "
                    "counts 0 <= numerator <= denominator; rerun its fine-tuning job"
                )
            pairs.append((pair[0], pair[1]))
        items[lang] = pairs
    return items


def items_string(items: ItemCounts) -> str:
    """The counts as one csv cell: ``numerator/denominator`` per example, space-separated."""
    return " ".join(f"{numerator:g}/{denominator:g}" for numerator, denominator in items)


def parse_items_string(text: str, where: str) -> ItemCounts:
    """The counts of :func:`items_string`; an error names ``where`` (file, row) and the fix."""
    items = []
    for index, token in enumerate(str(text).split()):
        numerator, _, denominator = token.partition("/")
        try:
            pair = (float(numerator), float(denominator))
        except ValueError:
            pair = None
        if pair is None or not 0 <= pair[0] <= pair[1]:
            raise ValueError(
                f"{where}: test item {index + 1} is {token!r}, not counts 'n/d' with "
                "0 <= n <= d; rerun the job that wrote it"
            )
        items.append(pair)
    return items


# Where each test item is simply right or wrong (a dictionary's source word, a Tatoeba sentence),
# one character per item, in the test set's order: retrieved right, wrong, or not scored (a word
# outside a vocabulary). Letters, so that no reader of a csv holding them takes the column for a
# number.
HIT, MISS, UNSCORED = "y", "n", "-"


def hits_string(marks: Iterable[bool | None]) -> str:
    """One character per test item: :data:`HIT`, :data:`MISS`, or :data:`UNSCORED` for None."""
    return "".join(UNSCORED if mark is None else HIT if mark else MISS for mark in marks)
