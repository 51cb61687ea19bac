"""The order of a survey's answers: common answer scales told by their words, and one order per set of answers.

A questionnaire's text columns name their answers ("Agree", "Neither agree nor disagree", "Disagree"), and a
file lists them in whatever order its rows met them. Profiles, tables and reports are read along the scale,
and the items of one questionnaire are compared answer by answer, so the loading rules
(:mod:`effdim.data.building`) order the categories of every text column here, in one place:

* :func:`answer_order` -- the categories of one column along a scale it recognises: labels that all start
  with a number ("1 Extremely well", ..., "10 Not at all"), sorted by that number; or answers that all belong
  to one of the English scales of :data:`SCALES` (agreement, frequency, quality, satisfaction, importance,
  likelihood, amount, yes/no, true/false), from its low end to its high end, as a coding 1, 2, ... of the
  scale would run ("Strongly disagree" first, "Strongly agree" last; "Never" before "Always"; "No" before
  "Yes"). Answers off any scale ("Don't know", "Refused", "Prefer not to say", "Not applicable") go last.
  Words are compared without case, surrounding punctuation or repeated spaces, and with typographic
  apostrophes read as plain ones.
* :func:`shared_orders` -- every column with the same set of answers gets the same order: a column
  whose order the file itself gives (an ordered categorical, SPSS or Stata value labels) sets it for the
  text columns whose answers are all among its own; then a recognised scale; then the column with the most
  answers, in the order its rows met them. A text column with a set of its own keeps that order.

The user can still reorder a column (:meth:`effdim.data.Dataset.with_state_order`).

Examples
--------
>>> answer_order(["Sometimes", "never", "Always", "Often"])
['never', 'Sometimes', 'Often', 'Always']
>>> answer_order(["Agree", "Disagree", "Neither agree nor disagree", "Don't know"])
['Disagree', 'Neither agree nor disagree', 'Agree', "Don't know"]
>>> answer_order(["2 Quite well", "10 Not at all", "1 Extremely well"])
['1 Extremely well', '2 Quite well', '10 Not at all']
>>> answer_order(["red", "green"]) is None
True
>>> shared_orders([("b", "a", "c"), ("c", "b", "a"), ("a", "c")], [False, False, False])
[('b', 'a', 'c'), ('b', 'a', 'c'), ('a', 'c')]
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["SCALES", "OFF_SCALE", "answer_order", "shared_orders"]

#: Answer scales, each from its low end to its high end: the position of an answer is its rank, and
#: answers on one line share it (a set of answers that uses two of one line is not read as this scale).
SCALES: dict[str, tuple[tuple[str, ...], ...]] = {
    "agreement": (
        ("strongly disagree", "completely disagree", "totally disagree", "fully disagree", "disagree strongly"),
        ("disagree",),
        ("somewhat disagree", "slightly disagree", "mildly disagree", "tend to disagree", "mostly disagree"),
        (
            "neither agree nor disagree",
            "neither agree or disagree",
            "neither disagree nor agree",
            "neutral",
            "undecided",
            "neither",
        ),
        ("somewhat agree", "slightly agree", "mildly agree", "tend to agree", "mostly agree"),
        ("agree",),
        ("strongly agree", "completely agree", "totally agree", "fully agree", "agree strongly"),
    ),
    "frequency": (
        ("never",),
        ("almost never", "hardly ever"),
        ("rarely", "seldom"),
        ("occasionally",),
        ("sometimes",),
        ("fairly often",),
        ("often", "frequently"),
        ("very often", "usually", "most of the time"),
        ("almost always",),
        ("always",),
    ),
    "quality": (
        ("very poor", "very bad", "terrible"),
        ("poor", "bad"),
        ("fair", "average", "neither good nor poor", "neither good nor bad", "ok", "okay"),
        ("good",),
        ("very good",),
        ("excellent",),
    ),
    "satisfaction": (
        ("very dissatisfied", "completely dissatisfied", "extremely dissatisfied"),
        ("dissatisfied",),
        ("somewhat dissatisfied", "slightly dissatisfied", "fairly dissatisfied"),
        ("neither satisfied nor dissatisfied", "neither dissatisfied nor satisfied", "neutral"),
        ("somewhat satisfied", "slightly satisfied", "fairly satisfied"),
        ("satisfied",),
        ("very satisfied", "completely satisfied", "extremely satisfied"),
    ),
    "importance": (
        ("not at all important", "not important at all", "not important"),
        ("slightly important", "not very important", "of little importance"),
        ("moderately important", "somewhat important", "fairly important"),
        ("important",),
        ("very important",),
        ("extremely important", "absolutely essential", "essential"),
    ),
    "likelihood": (
        ("very unlikely", "extremely unlikely"),
        ("unlikely", "somewhat unlikely"),
        ("neither likely nor unlikely", "neither unlikely nor likely", "unsure", "not sure"),
        ("likely", "somewhat likely"),
        ("very likely", "extremely likely"),
    ),
    "amount": (
        ("not at all", "none", "none at all"),
        ("a little", "a little bit", "slightly", "a bit"),
        ("some", "somewhat", "moderately", "a moderate amount"),
        ("quite a bit", "a lot", "very much", "much"),
        ("a great deal", "extremely", "completely"),
    ),
    "yes/no": (("no",), ("maybe", "not sure", "unsure", "perhaps"), ("yes",)),
    "true/false": (("false",), ("true",)),
}
#: Answers on no scale, which go after the scale's own: they say why there is no answer on it.
OFF_SCALE = frozenset(
    {
        "don't know",
        "dont know",
        "do not know",
        "dk",
        "refused",
        "refuse",
        "prefer not to say",
        "prefer not to answer",
        "rather not say",
        "not applicable",
        "n/a",
        "na",
        "no answer",
        "no opinion",
        "can't say",
        "cannot say",
        "can't choose",
    }
)
#: A label that starts with a whole number ("1 Extremely well", "2. Agree", "3) Often").
_LEADING_NUMBER = re.compile(r"\s*(\d+)")
_SPACES = re.compile(r"\s+")
_RANKS: dict[str, dict[str, int]] = {
    name: {word: rank for rank, words in enumerate(lines) for word in words} for name, lines in SCALES.items()
}


def _word(label: str) -> str:
    """A label as the scales spell it: lower case, plain apostrophes, single spaces, no surrounding punctuation."""
    text = label.replace("\u2019", "'").replace("\u2018", "'").casefold()
    return _SPACES.sub(" ", text).strip(" .,;:!?-_*\"'()[]")


def answer_order(labels: Sequence[str]) -> list[str] | None:
    """``labels`` (the distinct texts of one column) along the scale they recognisably form, else ``None``.

    Numbered labels sort by their number (then by text, so ``"01"`` and ``"1"`` stay apart and in a
    fixed order); answers of one scale of :data:`SCALES` (at least two of them, no two of one rank) by
    their rank, answers of :data:`OFF_SCALE` after them in the order given.
    """
    labels = list(labels)
    if len(labels) < 2:
        return None
    numbered = [_LEADING_NUMBER.match(label) for label in labels]
    if all(numbered):
        return sorted(labels, key=lambda label: (_number_key(_LEADING_NUMBER.match(label).group(1)), label))
    words = [_word(label) for label in labels]
    on_scale = [(label, word) for label, word in zip(labels, words) if word not in OFF_SCALE]
    off_scale = [label for label, word in zip(labels, words) if word in OFF_SCALE]
    if len(on_scale) < 2:
        return None
    for ranks in _RANKS.values():
        rank = [ranks.get(word) for _, word in on_scale]
        if None not in rank and len(set(rank)) == len(rank):
            ordered = [label for _, (label, _) in sorted(zip(rank, on_scale), key=lambda pair: pair[0])]
            return ordered + off_scale
    return None


def _number_key(digits: str) -> tuple[int, str]:
    """Sort key of a run of digits as the number it writes, without converting it (any length)."""
    digits = digits.lstrip("0")
    return len(digits), digits


def shared_orders(states: Sequence[Sequence], given: Sequence[bool]) -> list[tuple]:
    """The categories of every column in the order their set of answers has (the module docstring's rules).

    ``states[j]`` are column ``j``'s categories in its own order; ``given[j]`` says that order came from
    the file (an ordered categorical, value labels) and stands. Only columns of text categories are
    reordered; a column's categories are never added to or removed.
    """
    out = [tuple(s) for s in states]
    texts = [j for j, s in enumerate(out) if s and all(isinstance(v, str) for v in s)]
    scaled = {j for j in texts if not given[j] and answer_order(out[j]) is not None}
    # the columns in the order they set each other's: the file's own orders, recognised scales, larger sets,
    # earlier columns; each takes the order of the first one before it that holds all its answers
    ranked = sorted(texts, key=lambda j: (not given[j], j not in scaled, -len(out[j]), j))
    for i, j in enumerate(ranked):
        if given[j]:
            continue
        own = set(out[j])
        template = next((out[k] for k in ranked[:i] if own <= set(out[k])), None)
        if template is not None:
            out[j] = tuple(v for v in template if v in own)
    return out
