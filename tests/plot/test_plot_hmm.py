"""HMMs drawn: the bands are the decoded runs, the lines the series."""

import itertools

import numpy as np
import pytest

from bayeskit import CategoricalHMM, GaussianHMM, PoissonHMM
from bayeskit.datasets import load_earthquakes
from bayeskit.plot import StateSequenceDisplay, TransitionDisplay
from bayeskit.plot._hmm import _bin_means, _envelope


def covered_steps(band) -> np.ndarray:
    """The integer steps inside the rectangles of a band collection."""
    steps = []
    for path in band.get_paths():
        x = path.vertices[:, 0]
        lo, hi = x.min(), x.max()
        steps.append(np.arange(np.ceil(lo), np.floor(hi) + 1).astype(int))
        # each rectangle spans whole steps: from half a step before the first
        np.testing.assert_allclose([lo % 1, hi % 1], [0.5, 0.5])
    return np.sort(np.concatenate(steps)) if steps else np.zeros(0, int)


def switching_series(rng, n, lengths=None):
    means = np.array([-3.0, 0.0, 4.0])
    state = rng.integers(3)
    z = np.empty(n, int)
    for t in range(n):
        if rng.random() < 0.1:
            state = rng.integers(3)
        z[t] = state
    return (means[z] + rng.normal(size=n))[:, None]


@pytest.mark.parametrize("draw", range(4))
def test_each_band_covers_exactly_the_steps_decoded_as_its_state(rng, draw):
    n = int(rng.integers(50, 400))
    X = switching_series(rng, n)
    lengths = None
    if draw % 2:
        cut = int(rng.integers(10, n - 10))
        lengths = [cut, n - cut]
    hmm = GaussianHMM(3, random_state=draw).fit(X, lengths)
    disp = StateSequenceDisplay.from_estimator(hmm, X, lengths)
    states = hmm.predict(X, lengths)
    for s in range(3):
        np.testing.assert_array_equal(
            covered_steps(disp.bands_[s]), np.flatnonzero(states == s)
        )
    # the line is the series itself when short
    np.testing.assert_array_equal(disp.line_.get_ydata(), X[:, 0])
    # the posterior panel stacks one area per state
    assert len(disp.posterior_) == 3


def test_a_list_of_sequences_is_drawn_as_its_concatenation(rng):
    X = switching_series(rng, 120)
    seqs = [X[:50], X[50:]]
    hmm = GaussianHMM(3, random_state=0).fit(X, [50, 70])
    listed = StateSequenceDisplay.from_estimator(hmm, seqs)
    concatenated = StateSequenceDisplay.from_estimator(hmm, X, [50, 70])
    states = hmm.predict(X, [50, 70])
    for s in range(3):
        np.testing.assert_array_equal(
            covered_steps(listed.bands_[s]), np.flatnonzero(states == s)
        )
    np.testing.assert_array_equal(listed.states, concatenated.states)
    np.testing.assert_allclose(listed.posteriors, concatenated.posteriors)
    # one dotted line at the boundary between the sequences
    (edge,) = [ln for ln in listed.ax_.lines if ln.get_linestyle() == ":"]
    assert edge.get_xdata()[0] == 49.5
    with pytest.raises(ValueError, match="lengths"):
        StateSequenceDisplay.from_estimator(hmm, seqs, [50, 70])


def test_a_long_series_keeps_exact_bands_and_every_extreme(rng):
    n = 100_000
    X = switching_series(rng, n)
    hmm = GaussianHMM(3, random_state=0).fit(X[:5000])
    disp = StateSequenceDisplay.from_estimator(hmm, X, max_points=2000)
    states = hmm.predict(X)
    starts, _, _ = disp.runs_
    if starts.size <= 2000:
        for s in range(3):
            np.testing.assert_array_equal(
                covered_steps(disp.bands_[s]), np.flatnonzero(states == s)
            )
    else:  # one pixel per step, in the colour of its state
        pixels = disp.band_image_.get_array()[0]
        palette = np.unique(pixels, axis=0)
        assert len(palette) == len(np.unique(states))
        for s in np.unique(states):
            colour = pixels[np.flatnonzero(states == s)[0]]
            same = np.all(pixels == colour, axis=1)
            np.testing.assert_array_equal(
                np.flatnonzero(same), np.flatnonzero(states == s)
            )
        assert tuple(disp.band_image_.get_extent()) == (-0.5, n - 0.5, 0, 1)
    y = disp.line_.get_ydata()
    assert y.size <= 2000
    assert y.max() == X.max() and y.min() == X.min()


def test_many_runs_are_drawn_as_one_pixel_per_step(rng):
    n = 5000
    X = rng.normal(size=(n, 1))
    states = rng.integers(0, 3, n)
    posteriors = rng.dirichlet(np.ones(3), n)
    disp = StateSequenceDisplay(X[:, 0], states, posteriors, max_points=500).plot()
    assert disp.bands_ == {}
    pixels = disp.band_image_.get_array()[0]
    assert pixels.shape == (n, 4)
    for s in range(3):
        colour = pixels[np.flatnonzero(states == s)[0]]
        same = np.all(pixels == colour, axis=1)
        np.testing.assert_array_equal(same, states == s)
    assert tuple(disp.band_image_.get_extent()) == (-0.5, n - 0.5, 0, 1)
    # the envelope keeps every extreme of the series
    assert disp.line_.get_ydata().max() == X.max()
    assert disp.line_.get_ydata().min() == X.min()


def test_envelope_and_bin_means_against_loops(rng):
    y = rng.normal(size=1037)
    x = np.arange(y.size)
    xs, ys = _envelope(x, y, 100)
    edges = np.linspace(0, y.size, 51).astype(int)
    for b, (a, c) in enumerate(itertools.pairwise(edges)):
        assert ys[2 * b] == y[a:c].min() and ys[2 * b + 1] == y[a:c].max()
        assert xs[2 * b] == a and xs[2 * b + 1] == c - 1
    P = rng.dirichlet(np.ones(3), size=1037)
    _px, means = _bin_means(P, 40)
    edges = np.linspace(0, 1037, 41).astype(int)
    for b, (a, c) in enumerate(itertools.pairwise(edges)):
        np.testing.assert_allclose(means[b], P[a:c].mean(axis=0))
    np.testing.assert_allclose(means.sum(axis=1), 1.0)


def test_earthquake_counts_under_a_poisson_hmm():
    X = load_earthquakes()[["count"]].to_numpy()
    hmm = PoissonHMM(2, random_state=0).fit(X)
    years = load_earthquakes().index
    disp = StateSequenceDisplay.from_estimator(hmm, X, index=years)
    states = hmm.predict(X)
    # the time axis reads years, at the steps of its ticks
    disp.figure_.canvas.draw()
    for tick in disp.ax_posterior_.get_xticklabels():
        step = tick.get_position()[0]
        if 0 <= step < len(years):
            assert tick.get_text() == str(years[int(step)])
    assert disp.ax_posterior_.get_xlabel() == "year"
    for s in range(2):
        np.testing.assert_array_equal(
            covered_steps(disp.bands_[s]), np.flatnonzero(states == s)
        )


def test_transition_heat_map_holds_transmat(rng):
    X = rng.integers(0, 4, size=(300, 1))
    hmm = CategoricalHMM(3, random_state=0).fit(X)
    disp = TransitionDisplay.from_estimator(hmm, values_format=".3f")
    np.testing.assert_array_equal(disp.im_.get_array(), hmm.transmat_)
    for i in range(3):
        for j in range(3):
            assert disp.text_[i, j].get_text() == f"{hmm.transmat_[i, j]:.3f}"
            assert disp.text_[i, j].get_position() == (j, i)


def test_bad_arguments_name_the_parameter(rng):
    X = switching_series(rng, 100)
    hmm = GaussianHMM(2, random_state=0).fit(X)
    with pytest.raises(ValueError, match="feature"):
        StateSequenceDisplay.from_estimator(hmm, X, feature=1)
    with pytest.raises(ValueError, match="max_points"):
        StateSequenceDisplay.from_estimator(hmm, X, max_points=1)
    with pytest.raises(TypeError, match="ax"):
        StateSequenceDisplay.from_estimator(hmm, X, ax=object())


def _distance_to_circle(point, center, radius):
    return abs(np.hypot(*(np.asarray(point) - center)) - radius)


@pytest.mark.parametrize("seed", range(12))
def test_state_diagram_draws_the_transitions_above_the_threshold(seed):
    """On random transition matrices (sparse ones included), an arrow is
    drawn for exactly the entries at least the threshold, from the source's
    circle to the target's, wider for a larger probability, labelled with
    it; the positive entries below it are listed as hidden."""
    from bayeskit.plot import StateDiagramDisplay

    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 8))
    A = rng.dirichlet(np.full(k, 0.4), size=k)
    A[rng.random((k, k)) < 0.2] = 0.0
    A[A.sum(axis=1) == 0, 0] = 1.0
    A /= A.sum(axis=1, keepdims=True)
    threshold = float(rng.choice([0.0, 0.05, 0.2]))
    disp = StateDiagramDisplay(A, threshold=threshold).plot(values_format=".3f")
    expected = {(i, j) for i in range(k) for j in range(k) if A[i, j] >= threshold}
    expected -= {(i, j) for i in range(k) for j in range(k) if A[i, j] == 0}
    assert set(disp.arrows_) == expected
    assert set(disp.labels_) == expected
    assert sorted(disp.hidden_) == sorted(
        (i, j) for i in range(k) for j in range(k) if 0 < A[i, j] < threshold
    )
    c, r = disp.centers_, disp.radius_
    to_px = disp.ax_.transData.transform
    px_per_unit = to_px([1.0, 0.0])[0] - to_px([0.0, 0.0])[0]
    for i, node in disp.nodes_.items():
        np.testing.assert_allclose(node.center, c[i])
    for (i, j), arrow in disp.arrows_.items():
        pts = arrow.get_path().vertices
        assert _distance_to_circle(pts[0], c[i], r) < 1e-9  # leaves state i
        # the head ends on state j's circle (matplotlib pulls the tip back
        # by about a line width, here in data units)
        width = arrow.get_linewidth() * disp.figure_.dpi / 72 / px_per_unit
        tip = min(pts[1:], key=lambda p: _distance_to_circle(p, c[j], r))
        assert _distance_to_circle(tip, c[j], r) < width
        if i != j:  # outside both circles, from i's side to j's
            assert np.hypot(*(tip - c[i])) > r
            assert np.hypot(*(tip - c[j])) < np.hypot(*(pts[0] - c[j]))
        assert disp.labels_[(i, j)].get_text() == f"{A[i, j]:.3f}"
    # wider arrows for more probable transitions
    drawn = sorted(disp.arrows_, key=lambda e: A[e])
    widths = [disp.arrows_[e].get_linewidth() for e in drawn]
    assert widths == sorted(widths)
    for a, b, wa, wb in zip(drawn, drawn[1:], widths, widths[1:]):
        assert (A[a] < A[b]) == (wa < wb)


def test_state_diagram_of_a_fitted_hmm_beside_its_heat_map(rng):
    import matplotlib.pyplot as plt

    from bayeskit.plot import StateDiagramDisplay

    X = switching_series(rng, 400)
    hmm = GaussianHMM(3, random_state=0).fit(X)
    _, (left, right) = plt.subplots(1, 2)
    diagram = StateDiagramDisplay.from_estimator(hmm, threshold=0.02, ax=left)
    heat = TransitionDisplay.from_estimator(hmm, ax=right)
    assert diagram.ax_ is left and heat.ax_ is right
    A = hmm.transmat_
    assert set(diagram.arrows_) == set(zip(*np.nonzero(A >= 0.02)))
    for e, text in diagram.labels_.items():
        assert text.get_text() == f"{A[e]:.2f}" == heat.text_[e].get_text()


@pytest.mark.parametrize(
    ("threshold", "error"), [(-0.1, ValueError), (1.5, ValueError), ("x", TypeError)]
)
def test_state_diagram_threshold_is_checked(threshold, error):
    from bayeskit.plot import StateDiagramDisplay

    with pytest.raises(error, match="threshold"):
        StateDiagramDisplay(np.eye(2), threshold=threshold).plot()
