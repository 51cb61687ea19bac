"""Size limits the engine checks before it allocates.

An exact effective dimension is the rank of a Jacobian (paper, Section 2.4;
:mod:`effdim.rank`) whose size grows with ``ds`` and with the cardinalities:
``3:1000000000,2`` would need petabytes. Every entry point that builds a
Jacobian first estimates its memory (:func:`effdim.rank.rank_cost`) and
refuses with :class:`SizeLimitError` when the estimate exceeds a limit, so
nothing is allocated and the caller (the CLI, a notebook, the dashboard's
server) stays alive. The closed forms (``ds``, ``dc``, ``dp``, ``db``,
regularity) never need such a check.

The message says, in plain words, what would be needed and what can still
be had; it never names a library option.

It also holds how many rounds a structure search takes at most
(:data:`ROUNDS` by default, :data:`MAX_ROUNDS` at the very most;
:func:`effdim.structure.start_again`) and how many states a sweep gives its
node unless told (:data:`DEFAULT_MAX_CARD`, the range's rule being
:func:`effdim.search.sweep_range`), which the command line shows in its help
without importing the searches.
"""

from __future__ import annotations

import math

from .errors import EffdimError

__all__ = [
    "SizeLimitError",
    "DEFAULT_MAX_BYTES",
    "format_bytes",
    "short_text",
    "number_text",
    "MAX_EXACT_DIGITS",
    "ROUNDS",
    "MAX_ROUNDS",
    "DEFAULT_MAX_CARD",
    "MAX_DESIGN_COLUMNS",
    "MAX_LABEL_CHARS",
]

#: Whole numbers up to this many digits are printed exactly; larger ones (dc of an LC model with
#: 15,000 binary leaves has 4,516 digits) as ``about 2.819e4515``. Python refuses to convert
#: an int of more than 4,300 digits to text, and no reader counts that many digits.
MAX_EXACT_DIGITS = 1000

#: The longest category label a data file may hold (a survey's answer, even spelled out in full, is far
#: shorter; a cell of millions of characters is a file built to exhaust memory, or no categorical data).
MAX_LABEL_CHARS = 1000

#: Default memory limit of one exact rank computation (a 2-core laptop has a few GB to spare).
DEFAULT_MAX_BYTES = 2 * 1024**3

#: Most columns of a covariate design (:func:`effdim.formula.design_matrix`): a categorical covariate
#: with thousands of categories (an identifier) is refused before its indicator columns are built.
MAX_DESIGN_COLUMNS = 200

#: Times a structure search starts again from its own end, at most (:func:`effdim.structure.start_again`): one
#: more start found the generating tree where one search stopped 20 nats below it (docs/structure.md, "Rounds").
ROUNDS = 2
#: The most rounds a search takes (each round's stream is spawned before the search starts).
MAX_ROUNDS = 100
#: The most states a sweep gives its node unless told otherwise (:func:`effdim.search.sweep_range`). Class
#: enumeration in applied latent class analysis fits 1 up to about 6-10 classes and reads the scores' turn (e.g.
#: Nylund, Asparouhov & Muthen 2007, "Deciding on the number of classes in latent class analysis", Structural
#: Equation Modeling 14(4)); a pick at the top of the range is flagged (:func:`effdim.search.pick_caveats`), so a
#: user sees when to go further.
DEFAULT_MAX_CARD = 8


class SizeLimitError(EffdimError, ValueError):
    """A computation would need more memory than the limit allows; nothing was allocated.

    ``needed`` and ``limit`` are in bytes.
    """

    def __init__(self, message: str, *, needed: int, limit: int):
        super().__init__(message)
        self.needed = needed
        self.limit = limit


def format_bytes(n: float) -> str:
    """``1536`` -> ``'1.5 KiB'``: binary units up to EiB, then powers of ten."""
    units = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
    value = float(n)
    for unit in units:
        if value < 1024 or unit == units[-1]:
            break
        value /= 1024
    if unit == "bytes":
        return f"{int(value)} bytes"
    return f"{value:.1f} {unit}" if value < 1e4 else f"{value:.1e} {unit}"


def short_text(text: str, width: int = 60) -> str:
    """``text`` cut to ``width`` characters with an ellipsis (model notations in messages)."""
    return text if len(text) <= width else text[: width - 1] + "…"


def number_text(n: int) -> str:
    """A whole number as text: exact up to :data:`MAX_EXACT_DIGITS` digits, else ``about M.MMMeE``.

    >>> number_text(2**64), number_text(2**15000 - 1)
    ('18446744073709551616', 'about 2.818e4515')
    """
    if abs(n) < 10**MAX_EXACT_DIGITS:
        return str(n)
    sign = "-" if n < 0 else ""
    n = abs(n)
    shift = n.bit_length() - 64
    log = math.log10(n >> shift) + shift * math.log10(2)
    exponent = math.floor(log)
    return f"about {sign}{10 ** (log - exponent):.3f}e{exponent}"
