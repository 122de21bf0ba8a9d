"""Hidden Markov models drawn: decoded states over the series, transitions."""

from __future__ import annotations

import numpy as np

from ._base import as_2d, check_fitted, check_matplotlib

__all__ = ["StateSequenceDisplay", "TransitionDisplay", "state_runs"]


def state_runs(states) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The runs of equal values: ``(starts, stops, values)``, each run being
    ``states[start:stop]``."""
    states = np.asarray(states)
    if states.size == 0:
        empty = np.zeros(0, dtype=np.intp)
        return empty, empty, states[:0]
    change = np.flatnonzero(states[1:] != states[:-1]) + 1
    starts = np.r_[0, change]
    stops = np.r_[change, states.size]
    return starts, stops, states[starts]


def _envelope(x: np.ndarray, y: np.ndarray, max_points: int):
    """The series itself, or its min/max envelope in ``max_points // 2`` bins:
    the drawn line then still reaches every extreme of the series (the peaks a
    plain subsample would miss)."""
    n = y.size
    if n <= max_points:
        return x, y
    bins = max(max_points // 2, 1)
    edges = np.linspace(0, n, bins + 1).astype(np.intp)
    lo = np.minimum.reduceat(y, edges[:-1])
    hi = np.maximum.reduceat(y, edges[:-1])
    # Each bin drawn as its minimum at its first step and its maximum at its
    # last: the order within a bin is lost, but a bin is narrower than a pixel.
    xs = np.repeat(x[edges[:-1]], 2).astype(float)
    xs[1::2] = x[edges[1:] - 1]
    ys = np.empty(2 * bins)
    ys[0::2] = lo
    ys[1::2] = hi
    return xs, ys


def _bin_means(P: np.ndarray, max_points: int):
    """Posteriors averaged over bins, when there are more steps than points."""
    n = P.shape[0]
    if n <= max_points:
        return np.arange(n), P
    edges = np.linspace(0, n, max_points + 1).astype(np.intp)
    sums = np.add.reduceat(P, edges[:-1], axis=0)
    means = sums / np.diff(edges)[:, None]
    return (edges[:-1] + edges[1:] - 1) / 2, means


class StateSequenceDisplay:
    """A series coloured by its decoded states, the state posteriors beneath.

    The top axes draw one feature of the series over bands, one per run of
    steps that the Viterbi path (``predict``) assigns to one state; each band
    spans its steps exactly, from half a step before the first to half a step
    after the last. The bottom axes stack the posterior state probabilities
    of every step (``predict_proba``, forward-backward; Rabiner 1989).

    Long series are drawn by grouping: the bands are the runs (exact, however
    long the series; a strip image of one pixel per step when there are more
    than ``max_points`` runs), the line is the min/max envelope of the series in bins
    when it has more than ``max_points`` steps, and the posteriors are the
    means over the bins.

    Parameters
    ----------
    series : ndarray of shape (n_samples,)
    states : ndarray of shape (n_samples,)
        The decoded state index of every step.
    posteriors : ndarray of shape (n_samples, n_components)
    lengths : ndarray of int or None
    feature_name : str
    max_points : int
    index : array-like of shape (n_samples,) or None
        Labels of the steps, written on the time axis.

    Attributes
    ----------
    bands_ : dict
        ``{state: PolyCollection}``, one rectangle per run of the state (empty
        when there are more than ``max_points`` runs).
    band_image_ : AxesImage or None
        With more than ``max_points`` runs, the bands as a strip image of one
        pixel per step (its colour that of the step's decoded state), which
        the renderer resamples; exact, and drawn at once.
    runs_ : tuple of ndarray
        ``(starts, stops, states)`` of the runs.
    line_ : Line2D
    posterior_ : list of PolyCollection
        The stacked posterior of every state.
    ax_ : matplotlib Axes
        The series.
    ax_posterior_ : matplotlib Axes
    figure_ : matplotlib Figure

    References
    ----------
    .. [1] L. R. Rabiner, "A tutorial on hidden Markov models and selected
       applications in speech recognition", Proceedings of the IEEE 77(2),
       1989, pp. 257-286.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit import GaussianHMM
    >>> from bayeskit.plot import StateSequenceDisplay
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(0, 1, 50), rng.normal(5, 1, 50)][:, None]
    >>> hmm = GaussianHMM(2, random_state=0).fit(X)
    >>> disp = StateSequenceDisplay.from_estimator(hmm, X)
    >>> sorted(len(b.get_paths()) for b in disp.bands_.values())
    [1, 1]
    """

    def __init__(
        self,
        series,
        states,
        posteriors,
        lengths=None,
        feature_name="x0",
        max_points=2000,
        index=None,
    ):
        self.series = series
        self.states = states
        self.posteriors = posteriors
        self.lengths = lengths
        self.feature_name = feature_name
        self.max_points = max_points
        self.index = index

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        lengths=None,
        *,
        feature=0,
        max_points=2000,
        index=None,
        ax=None,
    ):
        """Decode ``X`` with a fitted HMM and draw it.

        Parameters
        ----------
        estimator : fitted HMM
            Any bayeskit (or hmmlearn) HMM with ``predict`` and
            ``predict_proba``.
        X : array-like of shape (n_samples, n_features), or list of them
            Concatenated sequences (with ``lengths``), or a list of
            sequences, as for ``estimator.predict``.
        lengths : array-like of int, default=None
            Lengths of the sequences (None: one sequence); their boundaries
            are drawn as vertical lines.
        feature : int, default=0
            The column drawn.
        max_points : int, default=2000
            Longer series are drawn by their envelope in bins.
        index : array-like of shape (n_samples,), default=None
            Labels of the steps (dates, years) written on the time axis in
            place of the step numbers; a pandas Index names the axis.
        ax : pair of matplotlib Axes, default=None
            The series' axes and the posteriors' axes; a new figure when None.

        Returns
        -------
        StateSequenceDisplay
        """
        check_matplotlib("StateSequenceDisplay")
        check_fitted(estimator, ["transmat_"], "StateSequenceDisplay")
        if isinstance(X, (list, tuple)) and X and np.ndim(X[0]) == 2:
            # A list of sequences (one array each): drawn one after another.
            if lengths is not None:
                raise ValueError(
                    "lengths goes with concatenated rows; a list of sequences "
                    "carries its own lengths"
                )
            lengths = [len(x) for x in X]
            X = np.concatenate([np.asarray(x) for x in X])
        data = as_2d(X)
        if not (0 <= int(feature) < data.shape[1]):
            raise ValueError(
                f"feature must be a column index below {data.shape[1]}, got {feature!r}"
            )
        if int(max_points) < 2:
            raise ValueError(f"max_points must be at least 2, got {max_points!r}")
        if index is not None and len(index) != data.shape[0]:
            raise ValueError(
                f"index must have one label per step ({data.shape[0]}), "
                f"got {len(index)}"
            )
        states = np.asarray(estimator.predict(X, lengths))
        posteriors = np.asarray(estimator.predict_proba(X, lengths))
        names = getattr(estimator, "feature_names_in_", None)
        name = str(names[int(feature)]) if names is not None else f"x{int(feature)}"
        disp = cls(
            data[:, int(feature)],
            states,
            posteriors,
            lengths,
            name,
            int(max_points),
            index,
        )
        return disp.plot(ax=ax)

    def plot(self, ax=None):
        """Draw the display.

        Parameters
        ----------
        ax : pair of matplotlib Axes, default=None

        Returns
        -------
        self
        """
        from matplotlib.collections import PolyCollection

        plt = check_matplotlib("StateSequenceDisplay")
        if ax is None:
            _, (ax_top, ax_bottom) = plt.subplots(
                2,
                1,
                sharex=True,
                figsize=(9, 4.5),
                gridspec_kw={"height_ratios": [2, 1]},
                layout="constrained",
            )
        else:
            try:
                ax_top, ax_bottom = ax
            except (TypeError, ValueError):
                raise TypeError(
                    "ax must be a pair of Axes: the series' and the posteriors'"
                ) from None
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        n_states = self.posteriors.shape[1]
        starts, stops, values = state_runs(self.states)
        self.runs_ = (starts, stops, values)
        self.bands_ = {}
        transform = ax_top.get_xaxis_transform()  # x in steps, y in axes fraction
        self.band_image_ = None
        if starts.size <= self.max_points:
            for s in range(n_states):
                mine = values == s
                a = starts[mine] - 0.5
                b = stops[mine] - 0.5
                zero, one = np.zeros_like(a), np.ones_like(a)
                verts = np.stack(
                    [np.c_[a, zero], np.c_[b, zero], np.c_[b, one], np.c_[a, one]],
                    axis=1,
                )
                band = PolyCollection(
                    verts,
                    facecolors=colors[s % len(colors)],
                    alpha=0.25,
                    linewidths=0,
                    transform=transform,
                )
                ax_top.add_collection(band, autolim=False)
                self.bands_[s] = band
        else:
            # Too many runs to draw one by one: a strip image with one pixel
            # per step, exact, that the renderer resamples at once.
            from matplotlib.colors import to_rgba
            from matplotlib.image import AxesImage

            rgba = np.array(
                [to_rgba(colors[s % len(colors)], 0.25) for s in range(n_states)]
            )
            n = self.states.size
            self.band_image_ = AxesImage(
                ax_top,
                extent=(-0.5, n - 0.5, 0, 1),
                interpolation="nearest",
                transform=transform,
                origin="lower",
                zorder=0.5,
            )
            self.band_image_.set_data(
                rgba[np.asarray(self.states, dtype=np.intp)][None]
            )
            ax_top.add_image(self.band_image_)
        steps = np.arange(self.series.size)
        xs, ys = _envelope(steps, self.series, self.max_points)
        (self.line_,) = ax_top.plot(xs, ys, color="0.15", linewidth=0.8)
        if self.lengths is not None:
            for edge in np.cumsum(np.asarray(self.lengths))[:-1]:
                ax_top.axvline(edge - 0.5, color="k", linestyle=":", linewidth=1)
        ax_top.set_xlim(-0.5, self.series.size - 0.5)
        ax_top.set_ylabel(self.feature_name)
        from matplotlib.patches import Patch

        handles = [
            Patch(color=colors[s % len(colors)], alpha=0.25, label=f"state {s}")
            for s in range(n_states)
        ]
        ax_top.legend(
            handles=handles, loc="upper right", fontsize="small", ncols=min(n_states, 6)
        )
        px, P = _bin_means(self.posteriors, self.max_points)
        self.posterior_ = ax_bottom.stackplot(
            px,
            P.T,
            colors=[colors[s % len(colors)] for s in range(n_states)],
            alpha=0.8,
        )
        ax_bottom.set_ylim(0, 1)
        ax_bottom.set_ylabel("P(state | X)")
        ax_bottom.set_xlabel("step")
        if self.index is not None:
            # The bands stay in steps (exact); the ticks read the labels.
            from matplotlib.ticker import FuncFormatter, MaxNLocator

            labels = list(self.index)
            n = len(labels)

            def label(t, _pos):
                k = round(float(t))
                return str(labels[k]) if 0 <= k < n and abs(t - k) < 1e-9 else ""

            ax_bottom.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax_bottom.xaxis.set_major_formatter(FuncFormatter(label))
            name = getattr(self.index, "name", None)
            ax_bottom.set_xlabel(str(name) if name is not None else "")
        self.ax_ = ax_top
        self.ax_posterior_ = ax_bottom
        self.figure_ = ax_top.figure
        return self


class TransitionDisplay:
    """An HMM's transition matrix as a heat map, every probability written.

    Row :math:`i` is :math:`P(z_{t+1} \\mid z_t = i)`.

    Parameters
    ----------
    transmat : ndarray of shape (n_components, n_components)
    state_names : list of str

    Attributes
    ----------
    im_ : AxesImage
    text_ : ndarray of Text, shape (n_components, n_components)
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure
    """

    def __init__(self, transmat, state_names=None):
        self.transmat = transmat
        self.state_names = state_names

    @classmethod
    def from_estimator(cls, estimator, *, values_format=".2f", ax=None):
        """Draw a fitted HMM's ``transmat_``.

        Parameters
        ----------
        estimator : fitted HMM
        values_format : str, default='.2f'
            Format of the written probabilities.
        ax : matplotlib Axes, default=None

        Returns
        -------
        TransitionDisplay
        """
        check_matplotlib("TransitionDisplay")
        check_fitted(estimator, ["transmat_"], "TransitionDisplay")
        A = np.asarray(estimator.transmat_, dtype=float)
        names = [str(s) for s in range(A.shape[0])]
        return cls(A, names).plot(ax=ax, values_format=values_format)

    def plot(self, ax=None, *, values_format=".2f"):
        """Draw the display.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
        values_format : str, default='.2f'

        Returns
        -------
        self
        """
        plt = check_matplotlib("TransitionDisplay")
        if ax is None:
            k = self.transmat.shape[0]
            size = max(0.7 * k, 2.6)
            _, ax = plt.subplots(figsize=(size + 1.4, size + 0.6), layout="constrained")
        A = self.transmat
        k = A.shape[0]
        names = self.state_names or [str(s) for s in range(k)]
        self.im_ = ax.imshow(A, cmap="Blues", vmin=0, vmax=1)
        self.text_ = np.empty((k, k), dtype=object)
        for i in range(k):
            for j in range(k):
                self.text_[i, j] = ax.text(
                    j,
                    i,
                    format(A[i, j], values_format),
                    ha="center",
                    va="center",
                    color="white" if A[i, j] > 0.6 else "black",
                    fontsize="small",
                )
        ax.set_xticks(range(k), names)
        ax.set_yticks(range(k), names)
        ax.set_xlabel("to state")
        ax.set_ylabel("from state")
        ax.figure.colorbar(self.im_, ax=ax, shrink=0.8)
        self.ax_ = ax
        self.figure_ = ax.figure
        return self
