"""Text and JSON forms of LC and HLC models, parsed and printed (round trip).

Text notation
-------------
* LC models as in the paper (Section 2.2): ``r:d1,...,dn``, e.g. ``3:2,2,2,2``.
  Names are optional: ``X:3:A:2,B:2,C:2``.
* Trees as nested groups, each node ``[name:]card``, a hidden node followed by
  its children in parentheses: ``H1:5(H2:3(O1:2,O2:2),O3:2,H3:3(O4:2,O5:2))``
  or unnamed ``5(3(2,2),2,3(2,2))`` (the paper's Figure 2). The first node is
  the root.

Unnamed nodes get names in pre-order: hidden ``H1, H2, ...``, observed
``O1, O2, ...`` (skipping names used explicitly). :func:`format_model` prints
the unnamed form exactly when the names are those defaults, so
``parse_model(format_model(m)) == m`` for every model.

JSON form
---------
::

    {"effdim": "hlc-model", "version": 1, "root": "H1",
     "nodes": [{"name": "H1", "card": 5, "hidden": true}, ...],
     "edges": [["H1", "H2"], ...]}

``nodes`` lists every node once; ``edges`` are (parent, child) pairs of the
tree. :func:`model_from_json` accepts a string or the decoded object.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .errors import os_error_words
from .model import MAX_CARD, MAX_DEPTH, HLCModel, ModelError

__all__ = [
    "NotationError",
    "parse_model",
    "format_model",
    "model_to_json",
    "model_from_json",
    "load_model",
    "JSON_FORMAT",
]

JSON_FORMAT = "hlc-model"
#: Digits of the largest cardinality (:data:`effdim.model.MAX_CARD`).
MAX_CARD_DIGITS = len(str(MAX_CARD)) - 1
_TOKEN = re.compile(r"\s*(?:(?P<int>\d+)|(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)|(?P<sym>[():,])|(?P<bad>\S))")


class NotationError(ModelError):
    """Model notation that cannot be parsed; the message gives the position."""


@dataclass
class _Parsed:
    name: str | None
    card: int
    children: list[_Parsed] | None  # None: written without parentheses
    position: int
    hidden: bool = field(default=False)


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens: list[tuple[str, str, int]] = []
        pos = 0
        while pos < len(text):
            match = _TOKEN.match(text, pos)
            if match is None:  # only trailing whitespace is left
                break
            kind = match.lastgroup
            start = match.start(kind)
            if kind == "bad":
                self.fail(start, f"unexpected character {match.group(kind)!r}")
            self.tokens.append((kind, match.group(kind), start))
            pos = match.end()
        self.i = 0

    def fail(self, position: int, message: str) -> None:
        snippet = self.text[max(0, position - 12) : position + 12]
        raise NotationError(f"position {position + 1}: {message} (near {snippet!r})")

    def peek(self) -> tuple[str, str, int]:
        if self.i < len(self.tokens):
            return self.tokens[self.i]
        return ("end", "", len(self.text))

    def take(self, kind: str, value: str | None = None, what: str = "") -> tuple[str, str, int]:
        token = self.peek()
        if token[0] != kind or (value is not None and token[1] != value):
            found = "the end of the text" if token[0] == "end" else repr(token[1])
            self.fail(token[2], f"expected {what or repr(value)} but found {found}")
        self.i += 1
        return token

    def node(self) -> _Parsed:
        """One node and its subtree, without recursion (a tree may be nested deeply)."""
        top = self.head()
        open_nodes = [top] if self.opens(top) else []  # nodes whose ')' is still to come
        while open_nodes:
            child = self.head()
            open_nodes[-1].children.append(child)
            if self.opens(child):
                if len(open_nodes) >= MAX_DEPTH:
                    self.fail(child.position, f"the tree is nested more than {MAX_DEPTH} levels deep (the limit)")
                open_nodes.append(child)
                continue
            while open_nodes:  # after a child: a sibling follows, or the parent closes
                if self.peek()[:2] == ("sym", ","):
                    self.i += 1
                    break
                self.take("sym", ")", "',' or ')'")
                open_nodes.pop()
        return top

    def head(self) -> _Parsed:
        """``[name:]card`` of one node; its children, if any, follow."""
        kind, value, position = self.peek()
        name = None
        if kind == "name":
            self.i += 1
            name = value
            self.take("sym", ":", f"':' after the name {value!r}")
        _, digits, card_pos = self.take("int", what="a cardinality (a whole number)")
        if len(digits.lstrip("0")) > MAX_CARD_DIGITS + 1:  # the model checks the exact bound
            self.fail(
                card_pos,
                f"a cardinality of {len(digits.lstrip('0')):,} digits is larger than the limit "
                f"(at most {MAX_CARD_DIGITS} digits)",
            )
        return _Parsed(name, int(digits), None, card_pos if name is None else position)

    def opens(self, node: _Parsed) -> bool:
        """Whether ``(`` follows: ``node`` is hidden and its children come next."""
        if self.peek()[:2] != ("sym", "("):
            return False
        self.i += 1
        node.children = []
        return True

    def model(self) -> _Parsed:
        if not self.tokens:
            raise NotationError("empty model notation: write e.g. 3:2,2,2,2 or 5(3(2,2),2,3(2,2))")
        top = self.node()
        if self.peek()[:2] == ("sym", ":"):  # LC form r:d1,...,dn
            if top.children is not None:
                self.fail(self.peek()[2], "a tree node with children cannot start the LC form 'r:d1,...'")
            self.i += 1
            leaves = [self.leaf()]
            while self.peek()[:2] == ("sym", ","):
                self.i += 1
                leaves.append(self.leaf())
            top.children = leaves
        if self.peek()[0] != "end":
            self.fail(self.peek()[2], f"unexpected {self.peek()[1]!r} after the end of the model")
        if top.children is None:
            self.fail(top.position, "a single node is not a model: give the hidden root children, e.g. 3(2,2,2)")
        return top

    def leaf(self) -> _Parsed:
        leaf = self.node()
        if leaf.children is not None:
            self.fail(leaf.position, "in the LC form 'r:d1,...' the observed variables cannot have children")
        return leaf


def parse_model(text: str) -> HLCModel:
    """Parse LC (``3:2,2,2,2``) or tree (``5(3(2,2),2,3(2,2))``) notation.

    Raises :class:`NotationError` naming the position of a syntax error, and
    :class:`~effdim.model.ModelError` for a well-formed but invalid model
    (bad cardinality, duplicate name, ...).

    Examples
    --------
    >>> model = parse_model("5(3(2,2),2,3(2,2))")          # Figure 2
    >>> model.hidden, model.observed
    (['H1', 'H2', 'H3'], ['O1', 'O2', 'O3', 'O4', 'O5'])
    >>> parse_model("H1:5(H2:3(O1:2,O2:2),O3:2,H3:3(O4:2,O5:2))") == model
    True
    >>> parse_model("3:2,2,2,2").is_lc                       # a Table 1 row
    True
    >>> parse_model("5(3(2,2),2")
    Traceback (most recent call last):
    ...
    effdim.notation.NotationError: position 11: expected ',' or ')' but found the end of the text (near '5(3(2,2),2')
    """
    if not isinstance(text, str):
        raise NotationError(f"model notation must be text, got {type(text).__name__}")
    top = _Parser(text).model()
    flat: list[tuple[_Parsed, _Parsed | None]] = []
    stack: list[tuple[_Parsed, _Parsed | None]] = [(top, None)]
    while stack:
        node, parent = stack.pop()
        node.hidden = node.children is not None
        flat.append((node, parent))
        stack.extend((child, node) for child in reversed(node.children or []))
    explicit: dict[str, int] = {}
    for node, _ in flat:
        if node.name is not None:
            if node.name in explicit:
                raise NotationError(
                    f"position {node.position + 1}: duplicate name {node.name!r} "
                    f"(first used at position {explicit[node.name] + 1})"
                )
            explicit[node.name] = node.position
    names = _default_names([n.hidden for n, _ in flat], taken=set(explicit))
    for (node, _), default in zip(flat, names):
        if node.name is None:
            node.name = default
    for node, _ in flat:
        low = 1 if node.hidden else 2
        if node.card < low:
            kind = "hidden" if node.hidden else "observed"
            raise NotationError(
                f"position {node.position + 1}: {kind} node {node.name!r} needs cardinality >= {low}, got {node.card}"
            )
    return HLCModel(
        {n.name: n.card for n, _ in flat},
        [n.name for n, _ in flat if n.hidden],
        [(p.name, n.name) for n, p in flat if p is not None],
        root=top.name,
    )


def _default_names(hidden_flags: list[bool], taken: set[str]) -> list[str]:
    """Default names in pre-order: ``H1, H2, ...`` and ``O1, O2, ...`` skipping ``taken``."""
    counters = {True: 0, False: 0}
    out = []
    for hidden in hidden_flags:
        prefix = "H" if hidden else "O"
        while True:
            counters[hidden] += 1
            name = f"{prefix}{counters[hidden]}"
            if name not in taken:
                break
        out.append(name)
    return out


def format_model(model: HLCModel, names: bool | None = None) -> str:
    """Print ``model`` in notation; ``parse_model`` reads it back to an equal model.

    ``names=None`` prints names only when they differ from the defaults the
    parser would give; ``True``/``False`` force them on/off (``False`` loses
    custom names). An LC model with default names prints as ``r:d1,...,dn``.

    Examples
    --------
    >>> format_model(parse_model("5(3(2,2),2,3(2,2))"), names=True)
    'H1:5(H2:3(O1:2,O2:2),O3:2,H3:3(O4:2,O5:2))'
    >>> format_model(parse_model("X:3:A:2,B:2,C:2"))
    'X:3(A:2,B:2,C:2)'
    """
    order = model.nodes
    if names is None:
        defaults = _default_names([model.is_hidden(n) for n in order], taken=set())
        names = defaults != order
    if model.is_lc and not names:
        leaves = ",".join(str(model.card(o)) for o in model.observed)
        return f"{model.card(model.root)}:{leaves}"

    def write(node: str) -> str:
        head = f"{node}:{model.card(node)}" if names else str(model.card(node))
        kids = model.children(node)
        return head + ("(" + ",".join(write(k) for k in kids) + ")" if kids else "")

    return write(model.root)


def model_to_json(model: HLCModel) -> dict[str, Any]:
    """The documented JSON form of ``model`` (a dict; ``json.dumps`` it to write).

    Examples
    --------
    >>> model_to_json(parse_model("2:2,3"))["nodes"]
    [{'name': 'H1', 'card': 2, 'hidden': True}, {'name': 'O1', 'card': 2, 'hidden': False}, {'name': 'O2', 'card': 3, 'hidden': False}]
    """
    return {
        "effdim": JSON_FORMAT,
        "version": 1,
        "root": model.root,
        "nodes": [{"name": n, "card": model.card(n), "hidden": model.is_hidden(n)} for n in model.nodes],
        "edges": [list(e) for e in model.edges],
    }


def model_from_json(data: str | bytes | dict[str, Any]) -> HLCModel:
    """Read the JSON form; the error message names the offending key or entry.

    Examples
    --------
    >>> figure2 = parse_model("5(3(2,2),2,3(2,2))")
    >>> model_from_json(model_to_json(figure2)) == figure2
    True
    """
    if isinstance(data, (str, bytes)):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as err:
            raise ModelError(f"invalid JSON at line {err.lineno}, column {err.colno}: {err.msg}") from None
        except RecursionError:
            raise ModelError(
                "the model JSON is nested too deeply to be a model (a model is a list of nodes and a list of edges)"
            ) from None
    if not isinstance(data, dict):
        raise ModelError("model JSON must be an object with 'nodes' and 'edges'")
    if data.get("effdim", JSON_FORMAT) != JSON_FORMAT:
        raise ModelError(f"'effdim' must be {JSON_FORMAT!r}, got {data.get('effdim')!r}")
    nodes = data.get("nodes")
    edges = data.get("edges")
    if not isinstance(nodes, list) or not nodes:
        raise ModelError("model JSON needs a non-empty list 'nodes'")
    if not isinstance(edges, list):
        raise ModelError("model JSON needs a list 'edges'")
    cards: dict[str, int] = {}
    hidden: list[str] = []
    for i, entry in enumerate(nodes):
        if not isinstance(entry, dict):
            raise ModelError(f"nodes[{i}] must be an object with 'name', 'card', 'hidden'")
        for key in ("name", "card", "hidden"):
            if key not in entry:
                raise ModelError(f"nodes[{i}] has no {key!r}")
        name = entry["name"]
        if not isinstance(name, str):
            raise ModelError(f"nodes[{i}]: 'name' must be text, got {_json_short(name)}")
        if not isinstance(entry["hidden"], bool):
            raise ModelError(f"nodes[{i}] ({name!r}): 'hidden' must be true or false")
        if name in cards:
            raise ModelError(f"nodes[{i}]: duplicate name {name!r}")
        cards[name] = entry["card"]
        if entry["hidden"]:
            hidden.append(name)
    pairs = []
    for i, edge in enumerate(edges):
        if not isinstance(edge, list) or len(edge) != 2 or not all(isinstance(end, str) for end in edge):
            raise ModelError(f"edges[{i}] must be a [parent, child] pair of names, got {_json_short(edge)}")
        pairs.append((edge[0], edge[1]))
    root = data.get("root")
    if root is not None and not isinstance(root, str):
        raise ModelError(f"'root' must be a node's name, got {_json_short(root)}")
    return HLCModel(cards, hidden, pairs, root=root)


def _json_short(value: Any) -> str:
    """A JSON value in at most 40 characters, for messages (any size or depth)."""
    if isinstance(value, (list, dict)):
        return f"a {'list' if isinstance(value, list) else 'object'} of {len(value)} entries"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 100:
        return f"a number of about {int(value.bit_length() * 0.30103) + 1:,} digits"
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def load_model(spec: str) -> HLCModel:
    """A model from notation, or from a JSON file when ``spec`` names one.

    Examples
    --------
    >>> str(load_model("3:2,2,2,2"))
    '3:2,2,2,2'
    """
    from pathlib import Path

    path = Path(spec)
    if spec.strip().endswith(".json") or (path.suffix and path.is_file()):
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as err:
            raise ModelError(f"cannot read model file {spec!r}: {os_error_words(err)}") from None
        except UnicodeDecodeError:
            raise ModelError(f"model file {spec!r} is not UTF-8 text") from None
        return model_from_json(text)
    return parse_model(spec)
