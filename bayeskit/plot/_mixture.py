"""Gaussian mixtures drawn: component ellipses, densities, the BIC table."""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_solve, cholesky, eigh
from scipy.special import logsumexp

from ._base import as_2d, check_fitted, check_matplotlib, feature_pair, get_axes

__all__ = [
    "MixtureDensityDisplay",
    "MixtureEllipsesDisplay",
    "MixtureSelectionDisplay",
    "component_covariances",
]


def component_covariances(est) -> np.ndarray:
    """Every component's full covariance, shape ``(n_components, d, d)``,
    whatever the covariance type (scikit-learn's and hmmlearn's layouts)."""
    means = np.asarray(est.means_, dtype=float)
    k, d = means.shape
    if hasattr(est, "covars_"):  # the Gaussian HMMs: always full, as hmmlearn
        return np.asarray(est.covars_, dtype=float).reshape(k, d, d)
    cov = np.asarray(est.covariances_, dtype=float)
    kind = getattr(est, "covariance_type", "full")
    if kind == "full":
        return cov.reshape(k, d, d)
    if kind == "tied":
        return np.broadcast_to(cov, (k, d, d)).copy()
    if kind == "diag":
        return cov[:, :, None] * np.eye(d)
    if kind == "spherical":
        return cov[:, None, None] * np.eye(d)
    raise ValueError(f"unknown covariance_type {kind!r}")


def _check_levels(n_std) -> tuple:
    levels = tuple(np.atleast_1d(np.asarray(n_std, dtype=float)))
    if not levels or not all(np.isfinite(v) and v > 0 for v in levels):
        raise ValueError(f"n_std must be positive numbers, got {n_std!r}")
    return levels


class MixtureEllipsesDisplay:
    """Ellipses of a Gaussian mixture's components over the data.

    The ellipse of component :math:`k` at :math:`c` standard deviations is
    the set of points :math:`x` of the chosen pair of features with
    :math:`(x - \\mu_k)^\\top \\Sigma_k^{-1} (x - \\mu_k) = c^2`, where
    :math:`\\mu_k` and :math:`\\Sigma_k` are the mean and covariance of the
    pair (the marginal of a Gaussian is the Gaussian of the sub-vector, Bishop
    2006, section 2.3.2). With two features it holds the probability
    :math:`1 - e^{-c^2/2}` of the component (0.39 at one standard deviation,
    0.86 at two).

    Build it with :meth:`from_estimator`; :meth:`plot` draws it again.

    Parameters
    ----------
    means : ndarray of shape (n_components, 2)
    covariances : ndarray of shape (n_components, 2, 2)
    weights : ndarray of shape (n_components,)
    n_std : tuple of float
    X : ndarray of shape (n_samples, 2) or None
    labels : ndarray of shape (n_samples,) or None
    feature_names : tuple of str

    Attributes
    ----------
    ellipses_ : list of list of matplotlib.patches.Ellipse
        ``ellipses_[k][i]``: component ``k`` at ``n_std[i]``.
    scatter_ : PathCollection or None
        The data points, coloured by their most probable component.
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    References
    ----------
    .. [1] C. M. Bishop, "Pattern Recognition and Machine Learning",
       Springer, 2006, sections 2.3 and 9.2.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit import GaussianMixture
    >>> from bayeskit.plot import MixtureEllipsesDisplay
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(c, 1.0, size=(100, 2)) for c in (0, 6)])
    >>> gmm = GaussianMixture(2, random_state=0).fit(X)
    >>> disp = MixtureEllipsesDisplay.from_estimator(gmm, X, n_std=(1, 2))
    >>> len(disp.ellipses_), len(disp.ellipses_[0])
    (2, 2)
    """

    def __init__(
        self,
        means,
        covariances,
        weights,
        n_std=(1.0, 2.0),
        X=None,
        labels=None,
        feature_names=("x0", "x1"),
    ):
        self.means = means
        self.covariances = covariances
        self.weights = weights
        self.n_std = n_std
        self.X = X
        self.labels = labels
        self.feature_names = feature_names

    @classmethod
    def from_estimator(
        cls, estimator, X=None, *, features=(0, 1), n_std=(1.0, 2.0), ax=None
    ):
        """Draw a fitted mixture's components (and the data, if given).

        Parameters
        ----------
        estimator : fitted GaussianMixture, GaussianHMM or any estimator
            with ``means_`` and ``covariances_`` (or ``covars_``).
        X : array-like of shape (n_samples, n_features), default=None
            Data to draw beneath, coloured by ``estimator.predict(X)`` when it
            predicts.
        features : pair of int, default=(0, 1)
            The columns to draw.
        n_std : float or tuple of float, default=(1.0, 2.0)
            The ellipses' sizes, in standard deviations.
        ax : matplotlib Axes, default=None
            Where to draw; a new figure when None.

        Returns
        -------
        MixtureEllipsesDisplay
        """
        check_matplotlib("MixtureEllipsesDisplay")
        check_fitted(estimator, ["means_"], "MixtureEllipsesDisplay")
        means = np.asarray(estimator.means_, dtype=float)
        i, j = feature_pair(features, means.shape[1])
        cov = component_covariances(estimator)[:, [i, j]][:, :, [i, j]]
        weights = getattr(estimator, "weights_", None)
        if weights is None:
            weights = np.full(means.shape[0], 1 / means.shape[0])
        data = labels = None
        if X is not None:
            full = as_2d(X)
            data = full[:, [i, j]]
            if hasattr(estimator, "predict"):
                labels = np.asarray(estimator.predict(X))
        names = getattr(estimator, "feature_names_in_", None)
        names = (
            (str(names[i]), str(names[j])) if names is not None else (f"x{i}", f"x{j}")
        )
        disp = cls(
            means[:, [i, j]],
            cov,
            np.asarray(weights),
            _check_levels(n_std),
            data,
            labels,
            names,
        )
        return disp.plot(ax=ax)

    def plot(self, ax=None):
        """Draw the display.

        Parameters
        ----------
        ax : matplotlib Axes, default=None

        Returns
        -------
        self
        """
        from matplotlib.patches import Ellipse

        plt = check_matplotlib("MixtureEllipsesDisplay")
        ax = get_axes(ax, "MixtureEllipsesDisplay")
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        self.scatter_ = None
        if self.X is not None:
            c = (
                [colors[int(k) % len(colors)] for k in self.labels]
                if self.labels is not None
                and np.issubdtype(np.asarray(self.labels).dtype, np.integer)
                else "0.5"
            )
            self.scatter_ = ax.scatter(
                self.X[:, 0], self.X[:, 1], s=8, c=c, alpha=0.4, linewidths=0
            )
        self.ellipses_ = []
        for k, (mu, cov) in enumerate(zip(self.means, self.covariances)):
            # Axes of the ellipse: the eigenvectors of the covariance, half
            # lengths c times the square roots of the eigenvalues.
            vals, vecs = eigh(cov)
            angle = np.degrees(np.arctan2(vecs[1, 1], vecs[0, 1]))
            color = colors[k % len(colors)]
            row = []
            for level in _check_levels(self.n_std):
                e = Ellipse(
                    mu,
                    width=2 * level * np.sqrt(max(vals[1], 0.0)),
                    height=2 * level * np.sqrt(max(vals[0], 0.0)),
                    angle=angle,
                    fill=False,
                    edgecolor=color,
                    linewidth=1.5 + 2 * float(self.weights[k]),
                    label=f"component {k} (weight {float(self.weights[k]):.2f})"
                    if not row
                    else None,
                )
                ax.add_patch(e)
                row.append(e)
            ax.plot(*mu, marker="+", color=color, markersize=10, mew=2)
            self.ellipses_.append(row)
        ax.set_xlabel(self.feature_names[0])
        ax.set_ylabel(self.feature_names[1])
        ax.autoscale_view()
        ax.legend(loc="best", fontsize="small")
        self.ax_ = ax
        self.figure_ = ax.figure
        return self


def _marginal_log_density(means, covs, weights, grid) -> np.ndarray:
    """Log density of a Gaussian mixture's marginal at ``grid`` (m, 2),
    by Cholesky solves (no inverse)."""
    out = np.empty((grid.shape[0], means.shape[0]))
    for k, (mu, cov) in enumerate(zip(means, covs)):
        L = cholesky(cov, lower=True)
        diff = grid - mu
        z = cho_solve((L, True), diff.T)
        maha = np.einsum("ij,ji->i", diff, z)
        logdet = 2 * np.log(np.diag(L)).sum()
        out[:, k] = -0.5 * (maha + logdet + 2 * np.log(2 * np.pi))
    return logsumexp(out + np.log(weights), axis=1)


class MixtureDensityDisplay:
    """Contours of a Gaussian mixture's density over two features.

    With more than two features, the density drawn is the marginal of the
    pair, exact for a Gaussian mixture (each component's marginal is the
    Gaussian of the sub-vector, Bishop 2006, section 2.3.2).

    Parameters
    ----------
    xx, yy : ndarray of shape (grid_resolution, grid_resolution)
        The grid.
    log_density : ndarray of shape (grid_resolution, grid_resolution)
    X : ndarray of shape (n_samples, 2) or None
    feature_names : tuple of str

    Attributes
    ----------
    contour_ : QuadContourSet
    scatter_ : PathCollection or None
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure
    """

    def __init__(self, xx, yy, log_density, X=None, feature_names=("x0", "x1")):
        self.xx = xx
        self.yy = yy
        self.log_density = log_density
        self.X = X
        self.feature_names = feature_names

    @classmethod
    def from_estimator(
        cls, estimator, X, *, features=(0, 1), grid_resolution=100, levels=12, ax=None
    ):
        """Contours of the (marginal) log density over the range of ``X``.

        Parameters
        ----------
        estimator : fitted GaussianMixture
        X : array-like of shape (n_samples, n_features)
            Sets the range of the grid, and is drawn beneath.
        features : pair of int, default=(0, 1)
        grid_resolution : int, default=100
        levels : int, default=12
            Number of contour levels of the log density.
        ax : matplotlib Axes, default=None

        Returns
        -------
        MixtureDensityDisplay
        """
        check_matplotlib("MixtureDensityDisplay")
        check_fitted(estimator, ["means_", "weights_"], "MixtureDensityDisplay")
        means = np.asarray(estimator.means_, dtype=float)
        i, j = feature_pair(features, means.shape[1])
        if int(grid_resolution) < 2:
            raise ValueError(
                f"grid_resolution must be at least 2, got {grid_resolution!r}"
            )
        data = as_2d(X)[:, [i, j]]
        lo, hi = data.min(axis=0), data.max(axis=0)
        pad = 0.1 * np.where(hi > lo, hi - lo, 1.0)
        xs = np.linspace(lo[0] - pad[0], hi[0] + pad[0], int(grid_resolution))
        ys = np.linspace(lo[1] - pad[1], hi[1] + pad[1], int(grid_resolution))
        xx, yy = np.meshgrid(xs, ys)
        covs = component_covariances(estimator)[:, [i, j]][:, :, [i, j]]
        log_density = _marginal_log_density(
            means[:, [i, j]],
            covs,
            np.asarray(estimator.weights_, dtype=float),
            np.c_[xx.ravel(), yy.ravel()],
        ).reshape(xx.shape)
        names = getattr(estimator, "feature_names_in_", None)
        names = (
            (str(names[i]), str(names[j])) if names is not None else (f"x{i}", f"x{j}")
        )
        disp = cls(xx, yy, log_density, data, names)
        return disp.plot(ax=ax, levels=levels)

    def plot(self, ax=None, *, levels=12):
        """Draw the display.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
        levels : int, default=12

        Returns
        -------
        self
        """
        ax = get_axes(ax, "MixtureDensityDisplay")
        self.scatter_ = None
        if self.X is not None:
            self.scatter_ = ax.scatter(
                self.X[:, 0], self.X[:, 1], s=6, c="0.4", alpha=0.4, linewidths=0
            )
        finite = self.log_density[np.isfinite(self.log_density)]
        top = finite.max()
        # Levels spread over the upper part of the log density, where the mass is.
        lv = np.linspace(max(finite.min(), top - 12.0), top, int(levels) + 1)[:-1]
        self.contour_ = ax.contour(
            self.xx, self.yy, self.log_density, levels=lv, cmap="viridis"
        )
        ax.clabel(self.contour_, fontsize="x-small", fmt="%.1f")
        ax.set_xlabel(self.feature_names[0])
        ax.set_ylabel(self.feature_names[1])
        ax.set_title("log density", fontsize="medium")
        self.ax_ = ax
        self.figure_ = ax.figure
        return self


class MixtureSelectionDisplay:
    """The information criterion of every candidate mixture, as mclust draws it.

    One line per covariance type against the number of components, from the
    table of :func:`bayeskit.select_mixture`; the best candidate (the lowest
    criterion: bayeskit's BIC is :math:`-2 \\log L + p \\log n`, lower is
    better, the negative of mclust's) is marked.

    Parameters
    ----------
    table : DataFrame
        Columns ``n_components``, ``covariance_type`` and the criterion.
    criterion : {'bic', 'aic'}

    Attributes
    ----------
    lines_ : dict
        ``{covariance_type: Line2D}``, the points sorted by ``n_components``.
    best_ : Line2D
        The marker on the best candidate.
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    References
    ----------
    .. [1] C. Fraley and A. E. Raftery, "Model-based clustering, discriminant
       analysis, and density estimation", Journal of the American
       Statistical Association 97(458), 2002, pp. 611-631.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit import select_mixture
    >>> from bayeskit.plot import MixtureSelectionDisplay
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(c, 0.5, size=(60, 2)) for c in (0, 5)])
    >>> table, best = select_mixture(X, range(1, 4), ["full", "diag"], random_state=0)
    >>> disp = MixtureSelectionDisplay.from_table(table)
    >>> sorted(disp.lines_)
    ['diag', 'full']
    """

    def __init__(self, table, criterion="bic"):
        self.table = table
        self.criterion = criterion

    @classmethod
    def from_table(cls, table, *, criterion="bic", ax=None):
        """Draw the table of :func:`bayeskit.select_mixture`.

        Parameters
        ----------
        table : DataFrame
        criterion : {'bic', 'aic'}, default='bic'
        ax : matplotlib Axes, default=None

        Returns
        -------
        MixtureSelectionDisplay
        """
        check_matplotlib("MixtureSelectionDisplay")
        if criterion not in ("bic", "aic"):
            raise ValueError(f"criterion must be 'bic' or 'aic', got {criterion!r}")
        needed = {"n_components", "covariance_type", criterion}
        columns = set(getattr(table, "columns", ()))
        if not needed <= columns:
            raise ValueError(
                f"table must have the columns {sorted(needed)} (select_mixture's "
                f"table); missing {sorted(needed - columns)}"
            )
        return cls(table, criterion).plot(ax=ax)

    def plot(self, ax=None):
        """Draw the display.

        Parameters
        ----------
        ax : matplotlib Axes, default=None

        Returns
        -------
        self
        """
        ax = get_axes(ax, "MixtureSelectionDisplay")
        table = self.table
        self.lines_ = {}
        markers = "osD^vP*X"
        for n, (kind, group) in enumerate(table.groupby("covariance_type", sort=False)):
            group = group.sort_values("n_components")
            (self.lines_[kind],) = ax.plot(
                group["n_components"].to_numpy(),
                group[self.criterion].to_numpy(dtype=float),
                marker=markers[n % len(markers)],
                label=str(kind),
            )
        best = table.iloc[int(np.argmin(table[self.criterion].to_numpy(dtype=float)))]
        (self.best_,) = ax.plot(
            [best["n_components"]],
            [best[self.criterion]],
            marker="o",
            markersize=16,
            markerfacecolor="none",
            markeredgecolor="crimson",
            markeredgewidth=2,
            linestyle="none",
            label=f"best: {best['covariance_type']}, K={best['n_components']}",
        )
        ax.set_xlabel("number of components K")
        ax.set_ylabel(f"{self.criterion.upper()} (lower is better)")
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.legend(title="covariance", fontsize="small")
        self.ax_ = ax
        self.figure_ = ax.figure
        return self
