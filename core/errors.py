"""One exception family for everything effdim refuses.

Every error the engine raises on purpose derives from :class:`EffdimError`,
so each face (the CLI, the dashboard, a notebook) catches one type and shows
its message, which names the culprit in the user's words. Each subclass also
derives from the built-in type it used to be (``ValueError``,
``RuntimeError``), so ``except ValueError`` in existing code keeps working.

The family, each defined beside the rule it enforces:

* :class:`InvalidArgument` -- an argument out of range (:mod:`effdim.validation`);
* :class:`effdim.model.ModelError`, :class:`effdim.notation.NotationError`
  -- a model that is not a valid tree, notation that does not parse;
* :class:`effdim.data.DataError` -- data that cannot be read or used, and
  :class:`effdim.data.NeedsMapping` -- columns and leaves that a mapping would
  match: :class:`effdim.data.LeavesWithoutColumns` (leaves that name no data
  column), :class:`effdim.data.ColumnsWithoutLeafNames` (columns whose names
  cannot name a leaf); :class:`effdim.data.TooManyValues` -- a column with
  too many values to be an item (a number, an identifier);
* :class:`effdim.formula.FormulaError` -- a covariate formula that does not
  parse or does not fit the data;
* :class:`effdim.learner.NotFittedError` -- a learner used before it is fitted;
* :class:`effdim.threestep.classification.SingularClassification`,
  :class:`effdim.threestep.weighted.EmptyClass` -- a three-step estimate the
  fit's classification cannot support;
* :class:`effdim.limits.SizeLimitError`,
  :class:`effdim.distribution.SpaceTooLargeError`,
  :class:`effdim.bounds.SplitSearchTooLarge` -- work beyond a size limit,
  refused before anything is allocated;
* :class:`effdim.dimensions.RouteDisagreement` -- two computations of ``de``
  that should agree do not;
* :class:`effdim.experiments.ExperimentError` -- a study that cannot run,
  :class:`effdim.executor.ExecutorError` -- jobs that cannot be run at all,
  :class:`effdim.bootstrap.BootstrapError` -- bootstrap replicates that failed;
* :class:`effdim.cli.UsageError` -- bad command-line input, and
  :class:`effdim.cli.outputs.OutputError` -- a file the command cannot write.

``tests/test_errors.py`` checks that every exception class of the package is
in this family, and named here.

Examples
--------
>>> import effdim
>>> try:
...     effdim.parse_model("3:1")
... except effdim.EffdimError as err:
...     print(type(err).__name__)
NotationError
"""

from __future__ import annotations

import errno
import re

__all__ = ["EffdimError", "InvalidArgument", "os_error_words", "shown"]


class EffdimError(Exception):
    """Base of every error effdim raises on purpose; ``str(err)`` is the user-facing message."""


class InvalidArgument(EffdimError, ValueError):
    """An argument outside what the function accepts (see :mod:`effdim.validation`)."""


def shown(text: str) -> str:
    """User text (a file name, a category label, typed text) as a one-line message shows it: as it is,
    or quoted with its escapes when it holds a line break or another character that does not print.

    >>> shown("survey.csv"), shown("survey\\n2024.csv")
    ('survey.csv', "'survey\\\\n2024.csv'")
    """
    return text if text.isprintable() else repr(text)


#: What the system's refusals of a file operation mean, in words (the rest: the system's own text).
_OS_ERROR_WORDS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EROFS: "the disk is read-only",
    errno.EISDIR: "it is a folder, not a file",
    errno.ENOTDIR: "a part of the path is not a folder",
    errno.ENOENT: "no such file or folder",
    errno.EEXIST: "something of that name is already there",
    errno.ENAMETOOLONG: "the name is too long",
    errno.EIO: "the disk reported an input/output error",
    errno.EFBIG: "the file would be larger than the disk allows",
    errno.ELOOP: "too many symbolic links in the path",
    errno.EMFILE: "too many files are open",
    errno.ENFILE: "too many files are open",
    errno.ENXIO: "no such device",
}


def os_error_words(err: OSError) -> str:
    """What a refused file operation means, in words, without the system's error number.

    >>> os_error_words(OSError(errno.ENOSPC, "No space left on device"))
    'the disk is full'
    """
    words = _OS_ERROR_WORDS.get(err.errno)
    if words is not None:
        return words
    text = (err.strerror or str(err) or type(err).__name__).strip()
    return re.sub(r"^\[Errno -?\d+\]\s*", "", text)
