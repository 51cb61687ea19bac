"""The structure search's operators (node introduction, deletion, merge, split, relocation) propose the moves a tree
needs, and start them where local EM can find them.
"""

import numpy as np
import pytest

from effdim import fit
from effdim.dimensions import dimensions
from effdim.distribution import random_parameters, sample
from effdim.experiments.structure import separated_parameters
from effdim.notation import parse_model
from effdim.structure import (
    candidate_moves,
    mutual_information,
)


def test_node_introduction_reaches_groups_of_three_and_binary_nodes_under_a_larger_parent():
    """A binary node over G, H, I under a 3-state root is one move (it used to need NI, NR and SD, each
    lowering the score on its own); a hidden child is paired with every sibling, whatever the mutual
    information says."""
    model = parse_model("H0:3(A:2,B:2,C:2,D:2,E:2,G:2,H:2,I:2,K:2(X:2,Y:2,Z:2))")
    index = {o: i for i, o in enumerate(model.observed)}
    mi = np.ones((len(index), len(index)))
    for a in "GHI":  # G, H, I the most dependent leaves
        for b in "GHI":
            mi[index[a], index[b]] = 5.0
    for x in "XYZ":  # the hidden child's leaves the least
        mi[index[x], :] = mi[:, index[x]] = 0.1
    found = {}
    for move in candidate_moves(model, mi, index, operators=("NI",)):
        new = next(h for h in move.model.hidden if h not in model.hidden)
        found[frozenset(move.model.children(new)), move.model.card(new)] = move
    assert (frozenset("GHI"), 2) in found and (frozenset("GHI"), 3) in found
    assert all((frozenset({"K", leaf}), 3) in found for leaf in "ABCDEGHI")


def test_node_deletion_may_merge_a_larger_node_into_its_neighbour():
    """Deleting a 3-state node into a binary neighbour is also offered with the neighbour taking its 3 states:
    the same tree as deleting the other end, but inheriting the kept node's tables (a state split). On the
    20-variable benchmark (benchmarks/engine/bench_structure.py) the search without it stopped 578 nats below the
    generating structure, at a chain of a binary and a 3-state node where the truth has one 3-state node."""
    model = parse_model("H1:2(A:2,B:2,H2:3(C:2,D:2,E:2),F:2)")
    index = {o: i for i, o in enumerate(model.observed)}
    moves = candidate_moves(model, np.ones((len(index), len(index))), index, operators=("ND",))
    merged = [m for m in moves if list(m.model.hidden) == ["H1"] and m.model.card("H1") == 3]
    assert len(merged) == 1 and merged[0].free >= {"H1"}
    assert {m.model.card(m.model.hidden[0]) for m in moves} == {2, 3}


def test_node_merge_starts_from_the_joint_distribution_of_the_pair():
    """A merge into a node with as many states as the pair has state pairs starts at exactly the current
    distribution, whichever end is kept (the root or not); the move itself offers one state more than the
    larger end, and names the end nearer the root as the one kept."""
    from effdim.em import e_step
    from effdim.structure.local_em import merged_parameters
    from effdim.structure.moves import _without

    model = parse_model("3(2,2,2(2,2,3(2,2)))")
    params = random_parameters(model, 1)
    data = sample(params, 500, 2)
    root, child = model.root, model.children(model.root)[2]
    for keep, gone in [(root, child), (child, root)]:
        cards = {n: model.card(n) for n in model.nodes if n != gone}
        cards[keep] = model.card(keep) * model.card(gone)
        product = _without(model, keep, gone, cards)
        start = merged_parameters(params, product, keep, gone)
        assert e_step(start, data)[0] == pytest.approx(e_step(params, data)[0], abs=1e-8)
    index = {o: i for i, o in enumerate(model.observed)}
    moves = candidate_moves(model, np.ones((len(index), len(index))), index, operators=("NM",))
    assert {(m.merged, m.model.card(m.merged[0])) for m in moves} == {((root, child), 4), ((child, "H3"), 4)}


def test_node_split_makes_two_adjacent_nodes_of_one_state_fewer_each():
    """``NS`` (the inverse of the merge): a node of ``k >= 3`` states becomes two adjacent nodes of ``k - 1``,
    the new one over a group of its children or over the rest of them (the node keeping its parent); a binary
    node is never split. The start (:func:`split_parameters`) is a distribution of the split model in which
    the two nodes differ (the copy of the node is a fixed point of EM)."""
    from effdim.structure.local_em import split_parameters

    model = parse_model("H0:2(X:2,Y:2,H1:4(A:3,B:3,C:3,D:3,H2:2(E:2,F:2,G:2)))")
    index = {o: i for i, o in enumerate(model.observed)}
    moves = candidate_moves(model, np.ones((len(index), len(index))), index, operators=("NS",))
    assert moves and {m.split for m in moves} == {("H1", "H3")}
    sides = set()
    for move in moves:
        assert move.model.card("H1") == move.model.card("H3") == 3 and move.model.parent("H1") == "H0"
        sides.add(frozenset(move.model.children("H3")))
    kids = set(model.children("H1"))
    assert any(frozenset(kids - side) in sides for side in sides), "a group and the rest of the children"
    params = random_parameters(model, 4)
    start = split_parameters(params, moves[0].model, "H1", "H3")
    for node, table in start.cpts.items():
        assert np.allclose(np.sum(table, axis=-1), 1.0) and (table >= 0).all(), node
    assert not np.allclose(start.cpts["H3"], np.eye(3))


def test_a_node_split_separates_two_nodes_learned_as_one_in_a_study_replicate():
    """Replicate 11 of the structure study at 30k rows (data regenerated as its job does): an earlier search
    ended here under BIC, 45 nats below the generating structure, the truth's two adjacent 3-state nodes
    learned as one 4-state node H5 (every single move of that search loses). The node split that gives the
    children of one of the two (V09, H4, V03, V15) a node of their own is a candidate; from
    :func:`split_parameters`, its local EM (as the search runs it) and refit by full EM score above the truth.
    Started as a copy of H5, as the other moves start, the same split stays below the truth."""
    from effdim.em import fit_em
    from effdim.experiments.structure import StructureStudy, replicate_data
    from effdim.structure.local_em import Messages, local_fit
    from effdim.structure.moves import Move

    job = next(j for j in StructureStudy().jobs() if j["replicate"] == 11 and j["n"] == 30000)
    truth, generating, data = replicate_data(job)
    stuck = parse_model(
        "H2:3(V05:2,V06:3,V11:2,H5:4(V09:2,H4:2(V01:2,V02:3,V14:2,V16:2),V03:2,V15:2,"
        "H1:3(V07:3,V08:3,V10:3,V12:3,V04:2),V13:3))"
    )
    rate = np.log(data.n_rows) / 2
    # EM from the generating parameters: 0.8 nats below 1,000 steps of it and of a random restart, in a tenth of
    # their CPU (EM at 30k rows creeps on for hundreds of steps); the margins below are tens of nats
    reference = fit_em(data, truth, restarts=0, init=generating, max_iter=200).loglik - dimensions(truth).ds * rate
    current = fit(data, stuck, restarts=1, seed=0, warn=False, max_iter=200)
    assert current.score("bic") < reference - 40
    index = {c: i for i, c in enumerate(data.columns)}
    moves = candidate_moves(stuck, np.ones((len(index), len(index))), index, operators=("NS",))
    split = next(m for m in moves if set(m.model.children(m.split[1])) == {"V09", "H4", "V03", "V15"})
    messages = Messages(current.em.params, data)
    ds = dimensions(split.model).ds

    def refit_bic(move):
        local = local_fit(data, move, current.em.params, starts=2, max_iter=96, seed=0, messages=messages)
        return fit_em(data, move.model, restarts=0, init=local.params, max_iter=200).loglik - ds * rate

    assert refit_bic(split) > reference + 10
    as_copy = Move(split.operator, split.text, split.model, split.free)
    assert refit_bic(as_copy) < reference - 40


def test_node_relocation_swaps_a_hidden_node_with_its_hidden_child_on_the_path():
    """A hidden node's parent may move to one of its hidden children: the two swap places on the path
    (``NR`` otherwise moves only children, so the order of a chain could change only from its top)."""
    model = parse_model("H1:2(A:2,B:2,H2:2(C:2,D:2,H3:2(E:2,F:2)))")
    index = {o: i for i, o in enumerate(model.observed)}
    moves = {m.text: m for m in candidate_moves(model, np.ones((6, 6)), index, operators=("NR",))}
    swapped = moves["move H1 from H2 to H3"]
    assert swapped.model == parse_model("H1:2(A:2,B:2,H3:2(E:2,F:2,H2:2(C:2,D:2)))")
    assert swapped.free == {"H3", "H2"}


#: A 3-state node over leaves and a hidden child, where G, H, I share a binary parent of their own.
GHI_TRUTH = parse_model("H0:3(A:2,B:2,C:2,D:2,E:2,H1:2(G:2,H:2,I:2),K:2(X:2,Y:2,Z:2))")


#: The same without that parent: G, H, I stay dependent given H0.
GHI_FLAT = parse_model("H0:3(A:2,B:2,C:2,D:2,E:2,G:2,H:2,I:2,K:2(X:2,Y:2,Z:2))")


@pytest.fixture(scope="module")
def ghi_fit():
    from effdim.structure.local_em import Messages

    data = sample(separated_parameters(GHI_TRUTH, 0.8), 5000, np.random.default_rng(3))
    fitted = fit(data, GHI_FLAT, restarts=3, seed=0, warn=False)
    return data, fitted, Messages(fitted.em.params, data)


def test_residual_groups_are_the_children_the_fit_leaves_dependent(ghi_fit):
    """Node introduction's groups from the current fit: G, H, I (dependent given H0, where the fit says
    independent) are a group, and a node whose fit explains its children (K over X, Y, Z) has none. (The
    binary leaves under the 3-state H0 leave some pairs dependent too: each tells one state of H0 apart.)"""
    from effdim.structure.residual import residual_dependence, residual_groups

    data, fitted, messages = ghi_fit
    groups = residual_groups(GHI_FLAT, messages, 8)
    assert ("G", "H", "I") in groups["H0"] and not groups.get("K")
    kids, dependence = residual_dependence(GHI_FLAT, messages, "H0")
    inside = [dependence[kids.index(a), kids.index(b)] for a, b in (("G", "H"), ("G", "I"), ("H", "I"))]
    assert min(inside) > 3
    index = {c: i for i, c in enumerate(data.columns)}
    moves = candidate_moves(GHI_FLAT, np.zeros((len(index), len(index))), index, operators=("NI",), residual=groups)
    introduced = set()
    for move in moves:
        new = next(h for h in move.model.hidden if h not in GHI_FLAT.hidden)
        introduced.add((frozenset(move.model.children(new)), move.model.card(new)))
    assert (frozenset("GHI"), 3) in introduced and (frozenset("GHI"), 2) in introduced


def test_a_node_over_all_children_but_one_frees_the_node_and_wins_where_two_nodes_were_learned_as_one():
    """The study's 100k replicate 8 (an earlier search stopped 3.4 nats below the truth under BIC): the
    learned binary H2 holds V03 and the seven leaves that the truth gives a binary node of their own. The fit
    leaves V03 only weakly dependent on the others (under the threshold of a residual group), yet it is the
    child they leave most dependent, so the seven are a group; the node introduced over them takes over H2's
    role, and with H2's and V03's families re-estimated too its local score wins (with them fixed, local EM
    gains nothing at all and the move scores only its penalty)."""
    from dataclasses import replace

    from effdim.experiments import StructureStudy
    from effdim.experiments.structure import replicate_data
    from effdim.structure.local_em import Messages, local_fit
    from effdim.structure.residual import residual_groups

    job = next(j for j in StructureStudy().jobs() if j["replicate"] == 8 and j["n"] == 100000)
    _, _, data = replicate_data(job)
    learned = parse_model(
        "H1:3(H2:2(V03:2,V01:2,V02:2,V07:3,V09:3,V13:2,V15:3,V16:2),V04:3,V05:3,V06:3,V08:3,V10:2,V11:2,V12:2,V14:3)"
    )
    fitted = fit(data, learned, restarts=1, seed=0, warn=False)
    messages = Messages(fitted.em.params, data)
    groups = residual_groups(learned, messages, 8)
    seven = ("V01", "V02", "V07", "V09", "V13", "V15", "V16")
    assert seven in groups["H2"]
    index = {c: i for i, c in enumerate(data.columns)}
    move = next(
        m
        for m in candidate_moves(learned, mutual_information(data), index, operators=("NI",), residual=groups)
        if set(m.model.children("H2")) == {"V03", "H3"} and m.model.card("H3") == 2
    )
    assert {"H2", "V03", "H3", *seven} == set(move.free)
    penalty = np.log(data.n_rows) / 2 * 2  # BIC: two parameters more
    freed = local_fit(data, move, fitted.em.params, starts=2, messages=messages, max_iter=96, seed=0)
    fixed = local_fit(
        data,
        replace(move, free=move.free - {"H2", "V03"}),
        fitted.em.params,
        starts=2,
        messages=messages,
        max_iter=96,
        seed=0,
    )
    assert freed.loglik - fitted.loglik > penalty + 1
    assert fixed.loglik - fitted.loglik < 0.1


def test_a_node_introduced_with_its_parents_states_starts_also_independent_of_it(ghi_fit):
    """The copy of the parent (identity table) reproduces the current fit and is a fixed point of the local EM;
    the other start makes the new node independent of its parent (uniform rows), from where EM separates them."""
    from effdim.structure.local_em import candidate_starts, local_fit
    from effdim.structure.moves import Move, changed_families

    data, fitted, messages = ghi_fit
    new = parse_model("H0:3(A:2,B:2,C:2,D:2,E:2,H1:3(G:2,H:2,I:2),K:2(X:2,Y:2,Z:2))")
    move = Move("NI", "introduce H1 over G, H, I", new, changed_families(GHI_FLAT, new))
    starts = candidate_starts(fitted.em.params, move, 2, seed=0)
    assert np.allclose(starts[0].cpts["H1"], np.eye(3)) and np.allclose(starts[1].cpts["H1"], 1 / 3)
    copy = local_fit(data, move, fitted.em.params, starts=1, messages=messages, max_iter=96)
    both = local_fit(data, move, fitted.em.params, starts=2, messages=messages, max_iter=96)
    assert abs(copy.loglik - fitted.loglik) < 1e-6 * data.n_rows < both.loglik - fitted.loglik - 10
