"""Covariate formulas: the terms of a latent class regression, parsed, and their design matrix.

A formula names the covariates of a class's membership as R's (and poLCA's
right-hand side) do::

    PARTY                one column
    PARTY + AGE          two columns, each its own term
    PARTY * AGE          PARTY + AGE + PARTY:AGE (every product of the factors)
    PARTY : AGE          the product alone
    C(PARTY)             PARTY as categories, even where its values are numbers
    (A + B) : C          A:C + B:C (parentheses group)
    `my column`          a column whose name has spaces or operators, in backquotes

``:`` binds tighter than ``*``, which binds tighter than ``+``. A leading
``~`` (``~ PARTY``) is allowed. The intercept is always in the model (the
classes' sizes); terms come as R orders them, by their number of factors,
then as first written, each once.

A column whose values are all numbers enters as a number, one design column;
a column with text values (or under ``C()``) enters as indicator columns, one
per category but the first, the reference (as R's treatment contrasts). A
product of factors is every product of their design columns, named ``A:B``,
and a category column ``A[level]``. Rows with a missing value in any
covariate are left out of the design (:attr:`Design.kept`).

Every error is a :class:`FormulaError` naming the culprit as the user wrote it.

>>> f = parse_formula("PARTY * AGE")
>>> [str(t) for t in f.terms]
['PARTY', 'AGE', 'PARTY:AGE']
>>> d = design_matrix(f, {"PARTY": [1, 2, 3, 1, 5], "AGE": [30, 40, 51, 62, None]})
>>> d.names, d.n_dropped
(('(Intercept)', 'PARTY', 'AGE', 'PARTY:AGE'), 1)
>>> d.matrix[2].tolist()
[1.0, 3.0, 51.0, 153.0]
>>> design_matrix(parse_formula("C(PARTY)"), {"PARTY": [1, 2, 1]}).names
('(Intercept)', 'PARTY[2]')
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .data.building import reads_as_number
from .errors import EffdimError, shown
from .limits import MAX_DESIGN_COLUMNS

__all__ = [
    "INTERCEPT",
    "Design",
    "Factor",
    "Formula",
    "FormulaError",
    "Term",
    "design_matrix",
    "design_rows",
    "parse_formula",
    "written",
]

#: The name of the intercept's design column (R's and poLCA's).
INTERCEPT = "(Intercept)"
_OPERATORS = "+*:()~"


class FormulaError(EffdimError, ValueError):
    """A covariate formula that does not parse or does not fit the data; the message names the culprit."""


@dataclass(frozen=True, order=True)
class Factor:
    """A column in a term: as a number, or as categories (``categorical``: written ``C(column)``)."""

    column: str
    categorical: bool = False

    def __str__(self) -> str:
        name = written(self.column)
        return f"C({name})" if self.categorical else name


@dataclass(frozen=True)
class Term:
    """A product of one or more factors (``A``, ``A:B``)."""

    factors: tuple[Factor, ...]

    def __str__(self) -> str:
        return ":".join(map(str, self.factors))


@dataclass(frozen=True)
class Formula:
    """A parsed covariate formula: ``text`` as written and its ``terms`` (the intercept implied)."""

    text: str
    terms: tuple[Term, ...]

    @property
    def columns(self) -> tuple[str, ...]:
        """The data columns the formula names, in order of first appearance."""
        return tuple(dict.fromkeys(f.column for t in self.terms for f in t.factors))

    def check_columns(self, available, items=()) -> None:
        """Refuse a column not among ``available`` (the columns left out of the model), naming it and
        saying when it is one of the model's ``items``."""
        for column in self.columns:
            if column in available:
                continue
            if column in items:
                raise FormulaError(
                    f"covariate {shown(column)!r} is an item of the model; a covariate must be a column "
                    "left out of the model"
                )
            rest = ", ".join(shown(str(c)) for c in available) or "none"
            raise FormulaError(f"no column named {shown(column)!r} for the covariates; columns left out: {rest}")

    def __str__(self) -> str:
        return " + ".join(map(str, self.terms))


def parse_formula(text: str) -> Formula:
    """Parse a covariate formula (module docstring); :class:`FormulaError` says where it goes wrong.

    >>> [str(t) for t in parse_formula("~ C(GPA) + AGE:C(GPA)").terms]  # factors as first written, as R
    ['C(GPA)', 'C(GPA):AGE']
    >>> parse_formula("PARTY +")
    Traceback (most recent call last):
    ...
    effdim.formula.FormulaError: covariate formula 'PARTY +': a column name is missing at the end, after '+'
    """
    if not isinstance(text, str):
        raise FormulaError(f"a covariate formula is text, such as 'AGE + C(PARTY)', got {type(text).__name__}")
    parser = _Parser(text)
    sets = parser.parse()
    terms: list[frozenset[Factor]] = list(dict.fromkeys(sets))
    numeric = {f.column for t in terms for f in t if not f.categorical}
    both = sorted(numeric & {f.column for t in terms for f in t if f.categorical})
    if both:
        raise FormulaError(
            f"covariate formula {shown(text)!r}: {written(both[0])} is written both as a number and as "
            f"categories C({written(both[0])}); write it one way"
        )
    ordered = sorted(enumerate(terms), key=lambda it: (len(it[1]), it[0]))
    return Formula(text, tuple(Term(tuple(_factor_order(t, parser.order))) for _, t in ordered))


def _factor_order(term: frozenset[Factor], order: dict[Factor, int]) -> list[Factor]:
    return sorted(term, key=lambda f: order[f])


def written(column: str) -> str:
    """A column name as a formula writes it: backquoted where it is not a plain name.

    >>> written("AGE"), written("age in years")
    ('AGE', '`age in years`')
    """
    plain = column and not any(c.isspace() or c in _OPERATORS + "`," for c in column)
    return column if plain else f"`{column}`"


class _Parser:
    """Recursive descent over the formula's tokens: sum := product ('+' product)*;
    product := interaction ('*' interaction)*; interaction := atom (':' atom)*;
    atom := name | C(name) | '(' sum ')'. A value is a list of terms, each a set of factors."""

    def __init__(self, text: str):
        self.text = text
        self.tokens = _tokens(text)
        self.pos = 0
        self.order: dict[Factor, int] = {}

    def fail(self, what: str) -> FormulaError:
        return FormulaError(f"covariate formula {shown(self.text)!r}: {what}")

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def where(self) -> str:
        token = self.peek()
        if token is None:
            before = self.tokens[self.pos - 1][1] if self.pos else ""
            return f"at the end, after {before!r}" if before else "(the formula is empty)"
        return f"at {token[1]!r} (character {token[2] + 1})"

    def parse(self) -> list[frozenset[Factor]]:
        if self.peek() is not None and self.peek()[1] == "~":
            self.pos += 1
        elif any(t[1] == "~" for t in self.tokens):
            raise self.fail(
                "give the covariates only, right of '~' (the items come from the model), such as '~ PARTY + AGE'"
            )
        if self.peek() is None:
            raise self.fail("no covariate is named; write one column name or more, such as 'PARTY + AGE'")
        terms = self.sum()
        token = self.peek()
        if token is not None:
            raise self.fail(f"{token[1]!r} (character {token[2] + 1}) cannot follow here; join terms with '+'")
        return terms

    def sum(self) -> list[frozenset[Factor]]:
        terms = self.product()
        while self.accept("+"):
            terms = terms + self.product()
        return terms

    def product(self) -> list[frozenset[Factor]]:
        terms = self.interaction()
        while self.accept("*"):
            right = self.interaction()
            terms = terms + right + [a | b for a in terms for b in right]
        return terms

    def interaction(self) -> list[frozenset[Factor]]:
        terms = self.atom()
        while self.accept(":"):
            right = self.atom()
            terms = [a | b for a in terms for b in right]
        return terms

    def accept(self, op: str) -> bool:
        token = self.peek()
        if token is not None and token[0] == "op" and token[1] == op:
            self.pos += 1
            return True
        return False

    def atom(self) -> list[frozenset[Factor]]:
        token = self.peek()
        if token is None or (token[0] == "op" and token[1] not in "("):
            raise self.fail(f"a column name is missing {self.where()}")
        if self.accept("("):
            terms = self.sum()
            if not self.accept(")"):
                raise self.fail(f"a ')' is missing {self.where()}")
            return terms
        self.pos += 1
        kind, name, at = token
        if kind == "name" and self.accept("("):
            if name != "C":
                raise self.fail(
                    f"{name}(...) at character {at + 1} is not a formula function; "
                    "C(column) makes a column categorical, and no other function is known"
                )
            inner = self.peek()
            if inner is None or inner[0] not in ("name", "quoted"):
                raise self.fail(f"C( needs one column name inside, {self.where()}")
            self.pos += 1
            if not self.accept(")"):
                raise self.fail(f"C( takes one column name and a ')', {self.where()}")
            return [frozenset([self.factor(Factor(inner[1], categorical=True))])]
        if kind == "name" and reads_as_number(name):
            raise self.fail(
                f"{name!r} at character {at + 1} is a number, not a column; "
                "the intercept is always in the model and cannot be left out"
            )
        return [frozenset([self.factor(Factor(name))])]

    def factor(self, factor: Factor) -> Factor:
        self.order.setdefault(factor, len(self.order))
        return factor


def _tokens(text: str) -> list[tuple[str, str, int]]:
    """``(kind, text, position)``: kind ``op`` (one of ``+*:()~``), ``name`` or ``quoted`` (backquoted)."""
    out: list[tuple[str, str, int]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c in _OPERATORS:
            out.append(("op", c, i))
            i += 1
        elif c == "`":
            end = text.find("`", i + 1)
            if end < 0:
                raise FormulaError(
                    f"covariate formula {shown(text)!r}: the backquote at character {i + 1} is never closed"
                )
            if end == i + 1:
                raise FormulaError(f"covariate formula {shown(text)!r}: empty backquotes at character {i + 1}")
            out.append(("quoted", text[i + 1 : end], i))
            i = end + 1
        else:
            j = i
            while j < n and not (text[j].isspace() or text[j] in _OPERATORS or text[j] == "`"):
                j += 1
            word = text[i:j]
            if word in ("-", "-1", "0", ".") or "-" in word[:1]:
                raise FormulaError(
                    f"covariate formula {shown(text)!r}: {word!r} at character {i + 1} is not supported; "
                    "terms are joined with '+', '*' and ':' only"
                )
            out.append(("name", word, i))
            i = j
    return out


@dataclass(frozen=True)
class Design:
    """The design matrix of a formula over some rows.

    ``matrix`` has one row per kept input row (:attr:`kept`) and one column
    per name of :attr:`names`, the intercept first; :attr:`term_of` gives each
    column's term (``None`` for the intercept); :attr:`references` each
    categorical column's reference category, :attr:`levels` its categories in
    order; :attr:`n_dropped` counts the rows left out for a missing covariate.
    """

    formula: Formula
    names: tuple[str, ...]
    matrix: np.ndarray
    kept: np.ndarray
    term_of: tuple[Term | None, ...]
    references: dict
    levels: dict

    @property
    def n_dropped(self) -> int:
        return int(self.kept.size - np.count_nonzero(self.kept))


def design_matrix(
    formula: Formula | str,
    values: Mapping[str, Sequence],
    *,
    levels: Mapping[str, Sequence] | None = None,
    items: Sequence[str] = (),
    weights: np.ndarray | None = None,
) -> Design:
    """The design of ``formula`` over the rows of ``values`` (column name -> one value per row).

    A value that is ``None`` or NaN is missing: its row is left out. ``levels``
    gives a categorical column's categories in order (the first the
    reference); by default its values in sorted order. ``items`` are the
    model's columns, named in the error when the formula uses one. Refused,
    naming the column or term: a column not in ``values``, a covariate with a
    single value over the rows kept, a term that is a combination of the
    others (collinear; ``weights`` tell which rows count, zero-weight rows
    none), more than :data:`effdim.limits.MAX_DESIGN_COLUMNS` columns.
    """
    formula = parse_formula(formula) if isinstance(formula, str) else formula
    levels = dict(levels or {})
    formula.check_columns(list(values), items)
    n = len(next(iter(values.values()))) if values else 0
    cells = {c: _cells(c, values[c]) for c in formula.columns}
    kept = np.ones(n, dtype=bool)
    for missing, _ in cells.values():
        kept &= ~missing
    if n and not kept.any():
        raise FormulaError("every row has a missing covariate: no row is left for the regression")
    numeric = {c: _numbers(cells[c][1]) for c in formula.columns}
    coded: dict[Factor, tuple[list[str], np.ndarray]] = {}
    references: dict = {}
    used_levels: dict = {}
    for term in formula.terms:
        for f in term.factors:
            if f in coded:
                continue
            column_values = [v for v, k in zip(cells[f.column][1], kept) if k]
            if f.categorical or numeric[f.column] is None:
                order = _level_order(f.column, column_values, levels.get(f.column))
                if len(order) > MAX_DESIGN_COLUMNS:
                    raise _too_many(f"covariate {shown(f.column)!r} has {len(order)} categories")
                names, block = _indicators(f, column_values, order)
                references[f.column], used_levels[f.column] = order[0], tuple(order)
            else:
                x = numeric[f.column][kept]
                if x.size and np.ptp(x) == 0:
                    raise FormulaError(
                        f"covariate {shown(f.column)!r} has the single value {_value_text(x[0])} in the rows used: "
                        "it cannot tell the classes apart"
                    )
                names, block = [written(f.column)], x[:, None]
            coded[f] = (names, block)
    total = 1 + sum(math.prod(len(coded[f][0]) for f in term.factors) for term in formula.terms)
    if total > MAX_DESIGN_COLUMNS:
        raise _too_many(f"the covariates make {total} design columns")
    columns: list[np.ndarray] = [np.ones((int(kept.sum()), 1))]
    names: list[str] = [INTERCEPT]
    term_of: list[Term | None] = [None]
    for term in formula.terms:
        parts = [coded[f] for f in term.factors]
        for combo in itertools.product(*(range(len(p[0])) for p in parts)):
            names.append(":".join(p[0][i] for p, i in zip(parts, combo)))
            columns.append(np.prod([p[1][:, [i]] for p, i in zip(parts, combo)], axis=0))
            term_of.append(term)
    matrix = np.hstack(columns)
    _check_rank(matrix, names, term_of, None if weights is None else np.asarray(weights, float)[kept])
    return Design(formula, tuple(names), matrix, kept, tuple(term_of), references, used_levels)


def design_rows(design: Design, values: Mapping[str, Sequence]) -> np.ndarray:
    """The rows of ``design``'s matrix for new ``values`` (column -> one value per row), coded as the
    design codes its data: a categorical column's categories as in :attr:`Design.levels`, the same
    reference (a category it does not know is refused, naming it).

    >>> d = design_matrix("C(G) * X", {"G": ["a", "b", "a", "b", "a"], "X": [1.0, 2.0, 3.0, 5.0, 8.0]})
    >>> design_rows(d, {"G": ["b"], "X": [4.0]}).tolist()
    [[1.0, 1.0, 4.0, 4.0]]
    """
    n = len(next(iter(values.values()))) if values else 0
    coded: dict[Factor, np.ndarray] = {}
    for term in design.formula.terms:
        for f in term.factors:
            if f in coded:
                continue
            column = list(values[f.column])
            if f.column in design.levels:
                order = list(design.levels[f.column])
                unknown = [v for v in column if v not in order]
                if unknown:
                    raise FormulaError(f"covariate {shown(f.column)!r} has no category {_value_text(unknown[0])}")
                codes = np.array([order.index(v) for v in column])
                coded[f] = (codes[:, None] == np.arange(1, len(order))[None, :]).astype(float)
            else:
                coded[f] = np.asarray(column, dtype=float)[:, None]
    columns = [np.ones((n, 1))]
    for term in design.formula.terms:
        blocks = [coded[f] for f in term.factors]
        for combo in itertools.product(*(range(b.shape[1]) for b in blocks)):
            columns.append(np.prod([b[:, [i]] for b, i in zip(blocks, combo)], axis=0))
    return np.hstack(columns)


def _too_many(what: str) -> FormulaError:
    return FormulaError(
        f"{what}: a regression takes at most {MAX_DESIGN_COLUMNS} design columns; "
        "leave out a covariate with many categories"
    )


def _cells(column: str, raw: Sequence) -> tuple[np.ndarray, list]:
    """A column's missing mask and its values (``None`` or NaN is missing)."""
    values = list(raw)
    missing = np.array([_is_missing(v) for v in values], dtype=bool)
    return missing, values


def _is_missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or (isinstance(v, np.floating) and np.isnan(v))


def _numbers(values: list) -> np.ndarray | None:
    """The values as floats when every present one is a real number (not a bool), else ``None``."""
    out = np.full(len(values), np.nan)
    for i, v in enumerate(values):
        if _is_missing(v):
            continue
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
            return None
        out[i] = float(v)
    if np.isinf(out).any():
        return None
    return out


def _level_order(column: str, present: list, given: Sequence | None) -> list:
    seen = list(dict.fromkeys(present))
    if given is not None:
        order = [v for v in given if v in set(seen)]
        order += [v for v in seen if v not in set(order)]
    else:
        order = sorted(seen, key=_sort_key)
    if len(order) < 2:
        only = _value_text(order[0]) if order else "none"
        raise FormulaError(
            f"covariate {shown(column)!r} has a single category ({only}) in the rows used: "
            "it cannot tell the classes apart"
        )
    return order


def _sort_key(v: Any) -> tuple:
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        return (0, float(v), "")
    return (1, 0.0, str(v))


def _value_text(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return shown(str(v))


def _indicators(factor: Factor, values: list, order: list) -> tuple[list[str], np.ndarray]:
    index = {v: i for i, v in enumerate(order)}
    codes = np.array([index[v] for v in values], dtype=int)
    block = (codes[:, None] == np.arange(1, len(order))[None, :]).astype(float)
    return [f"{written(factor.column)}[{_value_text(v)}]" for v in order[1:]], block


def _check_rank(matrix: np.ndarray, names: list[str], term_of: list, weights: np.ndarray | None) -> None:
    """Refuse a design column that is a combination of the ones before it (in the rows that count):
    its part not explained by them (least squares on the Gram matrix of the columns scaled to unit
    mean square) is below 1e-10 of its square."""
    x = matrix if weights is None else matrix[weights > 0]
    if x.shape[1] > x.shape[0]:
        raise FormulaError(
            f"the covariates make {x.shape[1]} design columns but only {x.shape[0]} rows have every covariate"
        )
    scale = np.sqrt((x**2).mean(axis=0))
    gram = (x / np.where(scale > 0, scale, 1.0)).T @ (x / np.where(scale > 0, scale, 1.0))
    keep: list[int] = []
    for j in range(x.shape[1]):
        residual = gram[j, j]
        if keep:
            b = gram[keep, j]
            residual -= b @ np.linalg.solve(gram[np.ix_(keep, keep)], b)
        if not residual > 1e-10 * max(gram[j, j], 1.0):
            which = names[j] if term_of[j] is None or str(term_of[j]) == names[j] else f"{names[j]} (term {term_of[j]})"
            raise FormulaError(
                f"the design column {which} is a combination of the columns before it in the rows used "
                "(collinear); leave that term out"
            )
        keep.append(j)
