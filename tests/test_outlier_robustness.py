"""Tests of the outlier-robustness figure (000 Fig. 1, ``svmref.figures.outlier_robustness``).

What is checked: the data and the random label switches are those the module states; the drawn instance
is the median draw; the distribution panels show every draw; the JSON carries ``draws`` and
``median_abs_turn``; the claim's numbers (frequency, medians, groups) are what the draws give, and the
documented ones are what the full run gives; and the property behind the Least 1-Norm SVM's zero turns,
derived from 000 eq. (5)-(6): switching the label of a pattern beyond its margin leaves ``alpha * y``
unchanged, checked on the independent cvxpy reference and on the fast solver.
"""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import json  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from svmref.figures import cli  # noqa: E402
from svmref.figures import outlier_robustness as O  # noqa: E402

DOCS = Path(__file__).resolve().parents[1] / "docs" / "figures.md"

# ---- tolerances and thresholds, all in one place -------------------------------------------------
TOL = {
    # alpha*y before and after switching labels beyond the margin, max abs difference relative to C: the
    # cvxpy reference gives identical vectors (difference 0.0 measured on seeds 0, 7, 13, 40), the SMO at
    # tol=1e-10 agrees to 2e-15; an inside switch changes alpha*y by 2C (the negative control)
    "alpha_y_reference": 1e-9,
    "alpha_y_smo": 1e-8,
    # the dual optimum (000 eq. (5)) drops by exactly 2C per switched point; relative to |D*|
    "dual_drop_rel": 1e-9,
    # the premise of the property test: a margin this far beyond 1 (and a control this far inside)
    "beyond_margin": 1.01,
    "inside_margin": 0.99,
    # a pattern on its margin (free alpha_i): |y_i f(x_i) - 1| below this (measured 1e-13 with the SMO at
    # tol=1e-8)
    "on_margin": 1e-9,
    # first bytes of each output format
    "magic": {"pdf": b"%PDF", "svg": b"<?xml"},
}
PROPERTY_SEEDS = [0, 7, 13, 40]


# ---- the data and the draws ----------------------------------------------------------------------
def test_data_as_the_paper():
    X, y = O.make_data(0)
    assert X.shape == (40, 2)
    assert np.sum(y == 1) == 20 and np.sum(y == -1) == 20
    # positive class N((0,0), I), negative N((5,2), I): the sample means are within 4 standard errors
    se = 4.0 / np.sqrt(20)
    assert np.all(np.abs(X[y > 0].mean(0) - [0, 0]) < se)
    assert np.all(np.abs(X[y < 0].mean(0) - [5, 2]) < se)


def test_data_reproducible():
    X1, _ = O.make_data(5)
    X2, _ = O.make_data(5)
    X3, _ = O.make_data(6)
    assert np.array_equal(X1, X2) and not np.array_equal(X1, X3)


def test_flips_one_per_class_and_every_pattern_can_be_drawn():
    """One switched pattern per class, each uniform in its class: over 400 seeds every index occurs
    (a given index is missed with probability (19/20)^400 < 1e-8)."""
    flips = np.array([O.draw_flips(s) for s in range(400)])
    assert np.all((0 <= flips[:, 0]) & (flips[:, 0] < 20)) and np.all((20 <= flips[:, 1]) & (flips[:, 1] < 40))
    assert set(flips[:, 0]) == set(range(20)) and set(flips[:, 1]) == set(range(20, 40))
    for s in (0, 13):  # the stated stream: one generator, the 2 x 20 patterns first, then the two indices
        rng = np.random.default_rng(s)
        rng.standard_normal((40, 2))
        assert O.draw_flips(s) == (int(rng.integers(20)), 20 + int(rng.integers(20)))


def test_draws_use_consecutive_seeds_from_the_first():
    res = O.compute(5, n_draws=3, check=False)
    assert [d.seed for d in res.draws] == [5, 6, 7] and [d.index for d in res.draws] == [0, 1, 2]
    for d in res.draws:
        assert d.flipped == O.draw_flips(d.seed)
    X, y = O.make_data(res.chosen_draw.seed)
    assert np.array_equal(res.X, X) and np.array_equal(res.y, y)
    assert np.array_equal(res.y_outliers != res.y, np.isin(np.arange(40), res.outliers))


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_n_draws_must_be_a_positive_integer(bad):
    with pytest.raises(ValueError, match="n_draws"):
        O.compute(n_draws=bad, check=False)


# ---- results shared by the tests below -----------------------------------------------------------
@pytest.fixture(scope="module")
def fast():
    return O.compute(fast=True)  # every dual checked against cvxpy inside (RuntimeError on disagreement)


@pytest.fixture(scope="module")
def full():
    return O.compute()  # the published figure: N_DRAWS draws, each checked against cvxpy


#: The published figure's run (101 draws, each dual checked against cvxpy): a paper reproduction, in the slow step.
RUNS = ["fast", pytest.param("full", marks=pytest.mark.slow)]


@pytest.mark.parametrize("which", RUNS)
def test_fast_and_full_sizes(which, request):
    res = request.getfixturevalue(which)
    assert len(res.draws) == (O.N_DRAWS_FAST if which == "fast" else O.N_DRAWS) and O.N_DRAWS >= 100
    assert res.max_rel_diff <= res.rtol
    for fit in res.fits.values():
        assert abs(fit.dual_solver - fit.dual_reference) <= O.RTOL_REFERENCE * abs(fit.dual_reference)


# ---- the drawn instance is the median draw -------------------------------------------------------
@pytest.mark.parametrize("which", RUNS)
def test_drawn_instance_is_the_median_draw(which, request):
    res = request.getfixturevalue(which)
    t = np.array([abs(d.turn["ls_svm"]) for d in res.draws])
    chosen = abs(res.turn("ls_svm"))
    assert chosen == abs(res.chosen_draw.turn["ls_svm"])
    assert chosen == np.median(t) == res.median_abs_turn["ls_svm"]  # N odd: the median is one draw
    assert np.sum(t < chosen) == np.sum(t > chosen) == (len(t) - 1) // 2


def _draw(index, turn):
    return O.Draw(index, index, (0, 20), (2.0, 2.0), {"ls_svm": turn, "least_1norm_svm": 0.0})


@pytest.mark.parametrize("turns, expected", [
    ([5.0, -1.0, 3.0], 2),              # |turn| 1, 3, 5: the middle one
    ([4.0, 1.0, -3.0, 2.0], 3),         # even N: the lower median (|2| of 1, 2, 3, 4)
    ([2.0, -2.0, 2.0, 9.0, 0.0], 1),    # ties: sorted (0, 2, 2, 2, 9) by (|turn|, index); rank 2 is draw 1
])
def test_median_draw_rule(turns, expected):
    assert O.median_draw([_draw(i, t) for i, t in enumerate(turns)]) == expected


# ---- the distribution panels ---------------------------------------------------------------------
@pytest.mark.parametrize("which", RUNS)
def test_distribution_panels_show_every_draw(which, request):
    fast = request.getfixturevalue(which)  # the full run has every group; the fast one lacks "both beyond"
    fig = O.plot(fast)
    n = len(fast.draws)
    assert len(fig.axes) == 9  # (a), (b), (a') / (c), (d), (c') / (e), (f), (g)
    ax_cdf, ax_pair, ax_robust = fig.axes[6], fig.axes[7], fig.axes[8]
    for ax, gid, other in ((ax_pair, "draws", "least_1norm_svm"), (ax_robust, "robust draws", "robust_ls_svm")):
        points = np.vstack([c.get_offsets() for c in ax.collections if c.get_gid() == gid])
        expected = sorted((abs(d.turn["ls_svm"]), abs(d.turn[other])) for d in fast.draws)
        assert points.shape == (n, 2)
        assert np.allclose(sorted(map(tuple, points)), expected, rtol=0, atol=0)
    for m in O.MODELS:
        (line,) = [ln for ln in ax_cdf.get_lines() if ln.get_gid() == f"ecdf {m}"]
        x, y = line.get_data()
        assert len(x) == n + 1 and y[-1] == 1.0
        assert np.array_equal(x[1:], np.sort([abs(d.turn[m]) for d in fast.draws]))
    title = fig.get_suptitle().replace("\n", " ")  # the headline is folded over two lines
    assert fast.headline() in title and fast.selection() in title


# ---- the JSON and the claim's numbers ------------------------------------------------------------
def test_json_has_the_keys(fast):
    out = json.loads(json.dumps(O.to_json(fast), allow_nan=False))
    assert out == json.loads(json.dumps(fast.to_json()))
    for key in ("draws", "median_abs_turn", "claim", "groups", "chosen", "n_draws", "reference_check"):
        assert key in out
    assert out["n_draws"] == len(out["draws"]) == O.N_DRAWS_FAST
    assert set(out["median_abs_turn"]) == set(O.MODELS)
    for d in out["draws"]:
        assert set(d) >= {"seed", "flipped", "margin_yf", "beyond_margin", "group", "turn", "claim_holds"}
        assert set(d["turn"]) == set(O.MODELS) and d["group"] in O.GROUPS


@pytest.mark.slow  # the published figure's 101 draws (RUNS)
def test_claim_numbers_are_what_the_draws_give(full):
    out = json.loads(json.dumps(full.to_json(), allow_nan=False))
    draws = out["draws"]
    ls = np.array([d["turn"]["ls_svm"] for d in draws])
    l1n = np.array([d["turn"]["least_1norm_svm"] for d in draws])
    rob = np.array([d["turn"]["robust_ls_svm"] for d in draws])
    holds = int(np.sum(np.abs(ls) > np.abs(l1n)))
    assert out["claim"]["holds"] == holds and out["claim"]["of"] == len(draws)
    assert out["robust_claim"]["holds"] == int(np.sum(np.abs(rob) < np.abs(ls)))
    assert out["median_abs_turn"] == {"ls_svm": np.median(np.abs(ls)), "least_1norm_svm": np.median(np.abs(l1n)),
                                      "robust_ls_svm": np.median(np.abs(rob))}
    for g, v in out["groups"].items():
        sel = np.array([d["margin_yf"] for d in draws])
        n_inside = np.sum(sel <= 1.0 + O.MARGIN_TOL, axis=1)
        mask = n_inside == O.GROUPS.index(g)
        assert v["draws"] == int(mask.sum()) and v["claim_holds"] == int(np.sum(np.abs(ls[mask]) > np.abs(l1n[mask])))
        assert v["median_abs_turn"]["ls_svm"] == np.median(np.abs(ls[mask]))
    assert sum(v["draws"] for v in out["groups"].values()) == len(draws)
    med = out["median_abs_turn"]
    assert (f"in {holds} of {len(draws)} draws ({100 * holds / len(draws):.0f} %); median |turn| "
            f"{med['ls_svm']:.1f} deg (LS-SVM) vs {med['least_1norm_svm']:.1f} deg") in full.headline()


@pytest.mark.slow  # the published figure's 101 draws (RUNS)
def test_draws_switch_points_on_both_sides_and_beyond_ones_never_turn(full):
    """Every group occurs; where both switched points lie beyond the margin the Least 1-Norm SVM does not
    turn (the property below, on the fast solver's angles) while the LS-SVM does."""
    by = {g: [d for d in full.draws if d.group == g] for g in O.GROUPS}
    assert all(by[g] for g in O.GROUPS)
    for d in by["both beyond"]:
        assert abs(d.turn["least_1norm_svm"]) <= O.ZERO_TURN_DEG < abs(d.turn["ls_svm"])
    assert any(abs(d.turn["least_1norm_svm"]) > 1.0 for g in ("one inside", "both inside") for d in by[g])


@pytest.mark.slow  # the published figure's 101 draws (RUNS)
def test_inside_zero_turns_are_pinned_by_two_margin_patterns(full):
    """docs/figures.md: where a switch inside the margin leaves the Least 1-Norm direction unchanged, two
    patterns of one class (unswitched) lie on their margin, ``y_i f(x_i) = 1``, in both fits, so
    ``W . (x_i - x_j) = 0`` fixes the direction of ``W``."""
    zero = [d for d in full.draws if d.group != "both beyond" and abs(d.turn["least_1norm_svm"]) <= O.ZERO_TURN_DEG]
    assert zero
    for d in zero:
        _, fits, X, y, y_out = O._one_draw(d.index, d.seed, full.C, full.n_per_class, False, O.RTOL_REFERENCE)
        on = [np.abs(lab * fits[("least_1norm_svm", s)].decision(X) - 1.0) <= TOL["on_margin"]
              for s, lab in zip(O.SETTINGS, (y, y_out))]
        kept = np.flatnonzero(on[0] & on[1] & (y == y_out))
        assert any(y[i] == y[j] for i in kept for j in kept if i < j), (d.seed, kept)


@pytest.mark.slow  # the published figure's 101 draws (RUNS)
def test_documented_numbers_are_the_full_run(full):
    """docs/figures.md quotes the first lines of ``--print``: the headline, the groups' table, the drawn
    instance and its angles (the table's four lines after the rule's outcome)."""
    text = DOCS.read_text(encoding="utf-8")
    lines = full.report().splitlines()
    quoted = lines[1:lines.index(full.selection()) + 5]
    for line in quoted:
        assert line.strip() in text, f"docs/figures.md lacks the line {line.strip()!r} of the full run"


# ---- the property: a switch beyond the margin leaves alpha * y unchanged (000 eq. (5)-(6)) --------
def _clean_margins(X, y, C=1.0):
    from svmref.kernels import linear_kernel
    from svmref.solvers.smo import least_1norm_svm

    K = linear_kernel(X)
    r = least_1norm_svm(K, y, C, tol=1e-10)
    return K, y * (K @ (r.alpha * y) + r.b)


def _pair(m, y, side):
    """One positive and one negative pattern beyond (``side='beyond'``) or inside the margin: the
    deepest beyond it among the positives and the shallowest among the negatives, or the first inside."""
    if side == "beyond":
        ok = m > TOL["beyond_margin"]
        pos, neg = np.flatnonzero(ok & (y > 0)), np.flatnonzero(ok & (y < 0))
        return [int(pos[np.argmax(m[pos])]), int(neg[np.argmin(m[neg])])]
    ok = m < TOL["inside_margin"]
    return [int(np.flatnonzero(ok & (y > 0))[0]), int(np.flatnonzero(ok & (y < 0))[0])]


@pytest.mark.parametrize("seed", PROPERTY_SEEDS)
def test_least_1norm_alpha_y_unchanged_by_switching_points_beyond_the_margin(seed):
    """000 eq. (6): ``y_i f(x_i) > 1`` gives ``alpha_i = -C``; after the switch ``y_i' f(x_i) < -1`` is the
    condition of ``alpha_i' = +C`` and ``alpha_i' y_i' = alpha_i y_i``: the reference optimum of eq. (5) on
    the new labels has the same ``alpha * y``, and a dual value lower by ``2C`` per switched point. The
    control: switching points inside the margin changes ``alpha * y``; the LS-SVM's changes (eq. (7))."""
    import svmref.formulations as F

    C = 1.0
    X, y = O.make_data(seed)
    K, m = _clean_margins(X, y, C)

    def ref(model, labels):
        sol = F.solve(F.get(model).dual(K, labels, C=C))
        return sol.values["alpha"] * labels, sol.objective

    v, d = ref("least_1norm_svm", y)
    for side in ("beyond", "inside"):
        idx = _pair(m, y, side)
        y2 = y.copy()
        y2[idx] *= -1.0
        v2, d2 = ref("least_1norm_svm", y2)
        change = np.max(np.abs(v2 - v)) / C
        if side == "beyond":
            assert change <= TOL["alpha_y_reference"], (idx, m[idx], change)
            assert abs(d2 - (d - 2 * C * len(idx))) <= TOL["dual_drop_rel"] * abs(d2)
            ls, ls2 = ref("ls_svm", y)[0], ref("ls_svm", y2)[0]
            assert np.max(np.abs(ls2 - ls)) > 0.1 * C
        else:
            assert change > 0.1, (idx, m[idx], change)


@pytest.mark.parametrize("seed", PROPERTY_SEEDS)
def test_fast_solver_alpha_y_unchanged_by_switching_points_beyond_the_margin(seed):
    from svmref.solvers.smo import least_1norm_svm

    X, y = O.make_data(seed)
    K, m = _clean_margins(X, y)
    y2 = y.copy()
    y2[_pair(m, y, "beyond")] *= -1.0
    r, r2 = least_1norm_svm(K, y, 1.0, tol=1e-10), least_1norm_svm(K, y2, 1.0, tol=1e-10)
    assert np.max(np.abs(r2.alpha * y2 - r.alpha * y)) <= TOL["alpha_y_smo"]


# ---- failures, conventions, output ----------------------------------------------------------------
def test_disagreement_with_reference_fails_loudly(monkeypatch, tmp_path, capsys):
    real = O._train

    def wrong(model, K, y, C):
        r = real(model, K, y, C)
        return type("R", (), {"alpha": np.asarray(r.alpha) * 1.01, "b": r.b, "n_iter": r.n_iter})()

    monkeypatch.setattr(O, "_train", wrong)
    with pytest.raises(RuntimeError, match="disagrees with the cvxpy reference"):
        O.compute(fast=True)
    out = tmp_path / "x.png"  # the patch lives in this process: the CLI runs the draws here (--jobs 1)
    assert cli.main(["outlier-robustness", "--out", str(out), "--fast", "--jobs", "1"]) == 1
    assert not out.exists()
    assert "disagrees" in capsys.readouterr().err


def test_angle_convention():
    assert O.hyperplane_angle([1.0, 0.0]) == 0.0
    assert O.hyperplane_angle([0.0, 2.0]) == pytest.approx(90.0)
    assert O.hyperplane_angle([-1.0, -1.0]) == pytest.approx(-135.0)


def test_figure_function_has_no_pyplot_state(fast):
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    fig = O.plot(fast)
    assert isinstance(fig, Figure)
    assert plt.get_fignums() == before


@pytest.mark.slow  # the PNG path stays in the default run (tests/test_figures.py); pdf and svg in the slow step
@pytest.mark.parametrize("fmt", ["pdf", "svg"])
def test_outlier_figure_other_formats(fast, fmt, tmp_path):
    path = tmp_path / f"fig.{fmt}"
    O.plot(fast).savefig(path, format=fmt)
    assert path.read_bytes()[: len(TOL["magic"][fmt])] == TOL["magic"][fmt]


@pytest.mark.slow  # the figure's command end to end with --json; its JSON's keys are checked in the default run
def test_cli_json_writes_the_numbers(tmp_path, capsys):
    out = tmp_path / "n.json"
    assert cli.main(["outlier-robustness", "--fast", "--jobs", "1", "--out", str(tmp_path / "f.png"), "--json", str(out)]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert len(data["draws"]) == O.N_DRAWS_FAST and set(data["median_abs_turn"]) == set(O.MODELS)
