"""A hidden semi-Markov model's duration distributions drawn."""

from __future__ import annotations

import numpy as np

from ._base import check_fitted, check_matplotlib

__all__ = ["DurationDisplay"]


class DurationDisplay:
    """Every state's duration distribution :math:`p_j(d)`, one line per state.

    Parameters
    ----------
    pmf : ndarray of shape (n_components, max_duration)
        ``pmf[j, d - 1] = p_j(d)``.
    state_names : list of str, default=None

    Attributes
    ----------
    lines_ : list of Line2D
        One per state: durations ``1 .. max_duration`` against their
        probabilities.
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure
    """

    def __init__(self, pmf, state_names=None):
        self.pmf = pmf
        self.state_names = state_names

    @classmethod
    def from_estimator(cls, estimator, *, ax=None):
        """Draw a fitted :class:`~bayeskit.HiddenSemiMarkovModel`'s
        ``duration_pmf_``.

        Parameters
        ----------
        estimator : fitted HiddenSemiMarkovModel
        ax : matplotlib Axes, default=None

        Returns
        -------
        DurationDisplay
        """
        check_matplotlib("DurationDisplay")
        check_fitted(estimator, ["duration_pmf_"], "DurationDisplay")
        pmf = np.asarray(estimator.duration_pmf_, dtype=float)
        names = [str(s) for s in range(pmf.shape[0])]
        return cls(pmf, names).plot(ax=ax)

    def plot(self, ax=None):
        """Draw the display.

        Parameters
        ----------
        ax : matplotlib Axes, default=None

        Returns
        -------
        self
        """
        plt = check_matplotlib("DurationDisplay")
        if ax is None:
            _, ax = plt.subplots(figsize=(6.0, 3.2), layout="constrained")
        pmf = np.asarray(self.pmf, dtype=float)
        names = self.state_names or [str(s) for s in range(pmf.shape[0])]
        d = np.arange(1, pmf.shape[1] + 1)
        self.lines_ = [
            ax.plot(d, row, "o-", markersize=3, label=f"state {name}")[0]
            for row, name in zip(pmf, names)
        ]
        ax.set_xlabel("duration d (steps)")
        ax.set_ylabel("p(d)")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize="small")
        self.ax_ = ax
        self.figure_ = ax.figure
        return self
