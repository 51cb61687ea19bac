"""The text encodings and field separators a data file may be read with, and the words that name them.

One place for the CSV reader (:mod:`effdim.csvscan`), the report of what a
read detected (:class:`effdim.reading.Loaded`) and the command line's
``--encoding`` choices. A module of its own, without pandas: the command line
builds its options from it before it knows whether any file will be read.
"""

from __future__ import annotations

__all__ = ["ENCODINGS", "ENCODING_ALIASES", "SEPARATORS", "encoding_name"]

#: Encodings a CSV file may be read in: the name given to ``--encoding`` -> the words shown.
ENCODINGS = {
    "utf-8": "UTF-8",
    "utf-8-sig": "UTF-8 with a byte-order mark",
    "latin-1": "Latin-1",
    "cp1252": "Windows-1252",
    "utf-16": "UTF-16",
}
#: Other names accepted for them (lower case, ``-`` for ``_``) -> the name in :data:`ENCODINGS`.
ENCODING_ALIASES = {
    "utf8": "utf-8",
    "utf-8-bom": "utf-8-sig",
    "latin1": "latin-1",
    "iso-8859-1": "latin-1",
    "windows-1252": "cp1252",
    "utf16": "utf-16",
}
#: Separators detected (any other single character may be given): the character -> the words shown.
SEPARATORS = {",": "commas", ";": "semicolons", "\t": "tabs"}


def encoding_name(text: str) -> str:
    """The name in :data:`ENCODINGS` that ``text`` gives (any case, ``_`` for ``-``, or an alias such as
    ``latin1``); a name it does not know, in the same form, for the caller to refuse."""
    name = text.lower().replace("_", "-")
    return ENCODING_ALIASES.get(name, name)
