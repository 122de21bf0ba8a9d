"""An HMM's transition matrix as a state diagram: states as nodes, arrows
weighted by probability."""

from __future__ import annotations

from numbers import Real

import numpy as np

from ._base import check_fitted, check_matplotlib

__all__ = ["StateDiagramDisplay"]

# The states sit on a circle of radius 1 (data units; the axes are square).
_ARROW = "-|>,head_length=0.5,head_width=0.25"


def _rotate(u: np.ndarray, angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([c * u[0] - s * u[1], s * u[0] + c * u[1]])


def _check_threshold(threshold) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, Real):
        raise TypeError(
            f"threshold must be a number in [0, 1], got {type(threshold).__name__}"
        )
    if not 0 <= threshold <= 1:
        raise ValueError(f"threshold must be in [0, 1], got {threshold!r}")
    return float(threshold)


class StateDiagramDisplay:
    """An HMM's transition matrix as a state diagram.

    Each state is a circle; each transition :math:`i \\to j` of probability
    :math:`a_{ij} = P(z_{t+1} = j \\mid z_t = i)` at least ``threshold`` is
    an arrow whose width grows with :math:`a_{ij}` and which is labelled with
    it (on the arrow, nearer its tail); a state's probability of staying is
    a loop. The two directions between two states are parallel arrows, side
    by side. This is the
    picture of a Markov chain in Rabiner (1989), figure 1; beside it,
    :class:`TransitionDisplay` draws the same matrix as a heat map with every
    entry.

    Parameters
    ----------
    transmat : ndarray of shape (n_components, n_components)
    state_names : list of str, default=None
    threshold : float, default=0.05
        Transitions less probable than this are not drawn.

    Attributes
    ----------
    centers_ : ndarray of shape (n_components, 2)
        Where the states are (data coordinates).
    radius_ : float
        The states' circles' radius.
    nodes_ : dict
        ``{state: Circle}``.
    arrows_ : dict
        ``{(i, j): FancyArrowPatch}``: one per transition at least
        ``threshold`` (``i == j``: the loop).
    labels_ : dict
        ``{(i, j): Text}``, the probability written by each arrow.
    hidden_ : list of (i, j)
        The transitions of positive probability below ``threshold``.
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    References
    ----------
    .. [1] L. R. Rabiner, "A tutorial on hidden Markov models and selected
       applications in speech recognition", Proceedings of the IEEE 77(2),
       1989, pp. 257-286.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit.plot import StateDiagramDisplay
    >>> A = np.array([[0.9, 0.1, 0.0], [0.02, 0.8, 0.18], [0.3, 0.0, 0.7]])
    >>> disp = StateDiagramDisplay(A, threshold=0.05).plot()
    >>> sorted(disp.arrows_)
    [(0, 0), (0, 1), (1, 1), (1, 2), (2, 0), (2, 2)]
    >>> disp.hidden_
    [(1, 0)]
    """

    def __init__(self, transmat, state_names=None, threshold=0.05):
        self.transmat = transmat
        self.state_names = state_names
        self.threshold = threshold

    @classmethod
    def from_estimator(cls, estimator, *, threshold=0.05, values_format=".2f", ax=None):
        """Draw a fitted HMM's ``transmat_`` as a state diagram.

        Parameters
        ----------
        estimator : fitted HMM
        threshold : float, default=0.05
            Transitions less probable than this are not drawn.
        values_format : str, default='.2f'
            Format of the written probabilities.
        ax : matplotlib Axes, default=None

        Returns
        -------
        StateDiagramDisplay
        """
        check_matplotlib("StateDiagramDisplay")
        check_fitted(estimator, ["transmat_"], "StateDiagramDisplay")
        A = np.asarray(estimator.transmat_, dtype=float)
        names = [str(s) for s in range(A.shape[0])]
        return cls(A, names, threshold).plot(ax=ax, values_format=values_format)

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
        from matplotlib.patches import Circle, FancyArrowPatch
        from matplotlib.path import Path

        plt = check_matplotlib("StateDiagramDisplay")
        threshold = _check_threshold(self.threshold)
        A = np.asarray(self.transmat, dtype=float)
        if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] == 0:
            raise ValueError(
                f"transmat must be a square matrix, got shape {np.shape(self.transmat)}"
            )
        k = A.shape[0]
        names = self.state_names or [str(s) for s in range(k)]
        if k == 1:
            centers = np.zeros((1, 2))
            r = 0.3
        else:
            # the first state at the top, the others clockwise
            angles = np.pi / 2 - 2 * np.pi * np.arange(k) / k
            centers = np.c_[np.cos(angles), np.sin(angles)]
            r = min(0.25, 0.45 * np.sin(np.pi / k))
        gap = 0.3 * r  # between the two directions of a pair
        if ax is None:
            size = min(max(3.2, 0.9 * k), 9.0)
            _, ax = plt.subplots(figsize=(size, size))
        reach = (1.0 if k > 1 else 0.0) + 4.2 * r  # room for the loops' labels
        ax.set_xlim(-reach, reach)
        ax.set_ylim(-reach, reach)
        ax.set_aspect("equal")
        ax.set_axis_off()
        self.centers_, self.radius_ = centers, r
        self.nodes_, self.arrows_, self.labels_ = {}, {}, {}
        font = "small" if k <= 8 else "x-small"
        for i, (x, y) in enumerate(centers):
            node = Circle((x, y), r, facecolor="#eef3fb", edgecolor="#34558b", zorder=2)
            ax.add_artist(node)  # the limits are set: no update
            self.nodes_[i] = node
            ax.text(x, y, names[i], ha="center", va="center", zorder=3)
        for i in range(k):
            for j in range(k):
                p = A[i, j]
                if p < threshold or p <= 0:
                    continue
                if i == j:
                    out = centers[i] / np.hypot(*centers[i]) if k > 1 else np.r_[0, 1]
                    pts = [
                        centers[i] + r * _rotate(out, 0.6),
                        centers[i] + 3.2 * r * _rotate(out, 0.7),
                        centers[i] + 3.2 * r * _rotate(out, -0.7),
                        centers[i] + r * _rotate(out, -0.6),
                    ]
                    codes = [Path.MOVETO] + [Path.CURVE4] * 3
                    where = centers[i] + out * 3.05 * r
                else:
                    d = centers[j] - centers[i]
                    d /= np.hypot(*d)
                    n = np.array([d[1], -d[0]])  # to the right of i -> j
                    along = np.sqrt(r**2 - gap**2)
                    pts = [
                        centers[i] + n * gap + d * along,
                        centers[j] + n * gap - d * along,
                    ]
                    codes = [Path.MOVETO, Path.LINETO]
                    # on the arrow, nearer its tail: the labels of the two
                    # directions of a pair do not meet
                    where = pts[0] + 0.3 * (pts[1] - pts[0])
                arrow = FancyArrowPatch(
                    path=Path(np.array(pts), codes),
                    arrowstyle=_ARROW,
                    mutation_scale=10 + 8 * p,
                    shrinkA=0,
                    shrinkB=0,
                    linewidth=0.6 + 3.4 * p,
                    color="0.25",
                    zorder=1,
                )
                ax.add_artist(arrow)
                self.arrows_[(i, j)] = arrow
                self.labels_[(i, j)] = ax.text(
                    *where,
                    format(p, values_format),
                    ha="center",
                    va="center",
                    fontsize=font,
                    zorder=3,
                    bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none"},
                )
        self.hidden_ = [
            (i, j) for i in range(k) for j in range(k) if 0 < A[i, j] < threshold
        ]
        if self.hidden_:
            ax.set_title(
                f"{len(self.hidden_)} transition{'s' * (len(self.hidden_) > 1)} "
                f"below {threshold:g} not drawn",
                fontsize="small",
            )
        self.ax_ = ax
        self.figure_ = ax.figure
        return self
