"""Classifiers drawn: decision regions, naive Bayes' per-feature densities."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import norm

from ._base import as_2d, check_fitted, check_matplotlib, feature_pair, get_axes

__all__ = ["DecisionRegionDisplay", "FeatureDensityDisplay"]


def _class_colors(n: int) -> np.ndarray:
    """``n`` RGB colours of the default cycle (repeated when too few)."""
    from matplotlib.colors import to_rgb

    plt = check_matplotlib("the class colours")
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    return np.array([to_rgb(cycle[k % len(cycle)]) for k in range(n)])


class DecisionRegionDisplay:
    """A classifier's decisions over two features, shaded by its posterior.

    Every point of a grid over the two features is coloured by the mixture
    of the class colours weighted by :math:`P(y = k \\mid x)`
    (``predict_proba``): pure colours where the classifier is sure, blends
    where it hesitates. The lines are the boundaries of ``predict``, the Bayes
    decision: the most probable class, or with ``costs`` the class of least
    expected cost, so that a cost-sensitive classifier's regions differ from
    the argmax of its posterior.

    With more than two features, the other features are held at their median
    over ``X`` (a slice through the decision function, not a projection).

    Parameters
    ----------
    xx, yy : ndarray of shape (grid_resolution, grid_resolution)
    proba : ndarray of shape (grid_resolution, grid_resolution, n_classes)
    prediction : ndarray of shape (grid_resolution, grid_resolution)
        The index in ``classes`` of the decision at every grid point.
    classes : ndarray of shape (n_classes,)
    X : ndarray of shape (n_samples, 2) or None
    y : ndarray of shape (n_samples,) or None
    feature_names : tuple of str

    Attributes
    ----------
    image_ : AxesImage
        The shading; its data is the posterior-weighted mix of the colours.
    contour_ : QuadContourSet
        The decision boundaries.
    scatter_ : PathCollection or None
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from bayeskit import GaussianNB
    >>> from bayeskit.plot import DecisionRegionDisplay
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = GaussianNB().fit(X[:, 2:], y)
    >>> disp = DecisionRegionDisplay.from_estimator(clf, X[:, 2:], y)
    >>> disp.image_.get_array().shape
    (200, 200, 3)
    """

    def __init__(
        self,
        xx,
        yy,
        proba,
        prediction,
        classes,
        X=None,
        y=None,
        feature_names=("x0", "x1"),
    ):
        self.xx = xx
        self.yy = yy
        self.proba = proba
        self.prediction = prediction
        self.classes = classes
        self.X = X
        self.y = y
        self.feature_names = feature_names

    @classmethod
    def from_estimator(
        cls, estimator, X, y=None, *, features=(0, 1), grid_resolution=200, ax=None
    ):
        """Draw a fitted classifier's decisions over the range of ``X``.

        Parameters
        ----------
        estimator : fitted classifier
            Any classifier with ``predict_proba`` and ``classes_``.
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), default=None
            Labels of the points drawn over the regions.
        features : pair of int, default=(0, 1)
            The columns drawn; the others are held at their median.
        grid_resolution : int, default=200
        ax : matplotlib Axes, default=None

        Returns
        -------
        DecisionRegionDisplay
        """
        check_matplotlib("DecisionRegionDisplay")
        check_fitted(estimator, ["classes_"], "DecisionRegionDisplay")
        if not hasattr(estimator, "predict_proba"):
            raise TypeError(
                "DecisionRegionDisplay needs predict_proba; "
                f"{type(estimator).__name__} has none"
            )
        frame = X if isinstance(X, pd.DataFrame) else None
        data = as_2d(frame.to_numpy(dtype=float) if frame is not None else X)
        i, j = feature_pair(features, data.shape[1])
        res = int(grid_resolution)
        if res < 2:
            raise ValueError(
                f"grid_resolution must be at least 2, got {grid_resolution!r}"
            )
        lo, hi = data[:, [i, j]].min(axis=0), data[:, [i, j]].max(axis=0)
        pad = 0.05 * np.where(hi > lo, hi - lo, 1.0)
        xs = np.linspace(lo[0] - pad[0], hi[0] + pad[0], res)
        ys = np.linspace(lo[1] - pad[1], hi[1] + pad[1], res)
        xx, yy = np.meshgrid(xs, ys)
        grid = np.tile(np.median(data, axis=0), (xx.size, 1))
        grid[:, i] = xx.ravel()
        grid[:, j] = yy.ravel()
        if frame is not None:
            grid = pd.DataFrame(grid, columns=frame.columns).astype(
                frame.dtypes.to_dict()
            )
        classes = np.asarray(estimator.classes_)
        proba = np.asarray(estimator.predict_proba(grid), dtype=float).reshape(
            res, res, -1
        )
        decided = np.asarray(estimator.predict(grid)).ravel()
        index = {c: k for k, c in enumerate(classes.tolist())}
        prediction = np.array([index[c] for c in decided.tolist()]).reshape(res, res)
        if frame is not None:
            names = (str(frame.columns[i]), str(frame.columns[j]))
        else:
            names = getattr(estimator, "feature_names_in_", None)
            names = (
                (str(names[i]), str(names[j]))
                if names is not None
                else (f"x{i}", f"x{j}")
            )
        disp = cls(
            xx,
            yy,
            proba,
            prediction,
            classes,
            data[:, [i, j]],
            None if y is None else np.asarray(y),
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
        from matplotlib.lines import Line2D

        ax = get_axes(ax, "DecisionRegionDisplay")
        k = self.classes.size
        colors = _class_colors(k)
        # Posterior-weighted mix of the class colours, lightened towards white.
        mix = self.proba @ colors
        shade = 0.55 * mix + 0.45
        extent = (self.xx[0, 0], self.xx[0, -1], self.yy[0, 0], self.yy[-1, 0])
        self.image_ = ax.imshow(
            shade, origin="lower", extent=extent, aspect="auto", interpolation="nearest"
        )
        self.contour_ = ax.contour(
            self.xx,
            self.yy,
            self.prediction,
            levels=np.arange(k - 1) + 0.5,
            colors="k",
            linewidths=1.0,
        )
        self.scatter_ = None
        if self.X is not None:
            if self.y is not None:
                index = {c: n for n, c in enumerate(self.classes.tolist())}
                c = colors[[index.get(v, 0) for v in self.y.tolist()]]
            else:
                c = "0.2"
            self.scatter_ = ax.scatter(
                self.X[:, 0], self.X[:, 1], c=c, s=14, edgecolors="k", linewidths=0.4
            )
        handles = [
            Line2D(
                [],
                [],
                marker="s",
                linestyle="none",
                markersize=9,
                color=colors[n],
                label=str(c),
            )
            for n, c in enumerate(self.classes.tolist())
        ]
        ax.legend(handles=handles, title="class", fontsize="small", loc="best")
        ax.set_xlabel(self.feature_names[0])
        ax.set_ylabel(self.feature_names[1])
        self.ax_ = ax
        self.figure_ = ax.figure
        return self


class FeatureDensityDisplay:
    """Naive Bayes' class-conditional distribution of every feature.

    One panel per feature: the Gaussian :math:`p(x_j \\mid y = k)` of every
    class for :class:`bayeskit.GaussianNB` (mean ``theta_``, variance
    ``var_``), or the table :math:`P(x_j = t \\mid y = k)` as grouped bars for
    :class:`bayeskit.CategoricalNB` (``feature_log_prob_``). Naive Bayes'
    model is exactly these per-feature distributions and the class prior
    (Mitchell 1997, section 6.9), so the panels show all it has learnt.

    Parameters
    ----------
    panels : list of dict
        One per feature: ``{'name', 'kind', 'x', 'values'}`` with ``values``
        of shape (n_classes, len(x)).
    classes : ndarray of shape (n_classes,)

    Attributes
    ----------
    artists_ : list of list
        ``artists_[feature][class]``: the Line2D (Gaussian) or BarContainer
        (categorical) of every class.
    axes_ : ndarray of matplotlib Axes
    figure_ : matplotlib Figure

    References
    ----------
    .. [1] T. M. Mitchell, "Machine Learning", McGraw-Hill, 1997, section 6.9.
    """

    def __init__(self, panels, classes):
        self.panels = panels
        self.classes = classes

    @classmethod
    def from_estimator(cls, estimator, *, features=None, n_points=200, axes=None):
        """Draw a fitted Gaussian or categorical naive Bayes.

        Parameters
        ----------
        estimator : fitted GaussianNB or CategoricalNB
        features : list of int, default=None
            The features drawn (None: all).
        n_points : int, default=200
            Points of every Gaussian curve.
        axes : array of matplotlib Axes, default=None
            One per feature drawn; a new figure when None.

        Returns
        -------
        FeatureDensityDisplay
        """
        check_matplotlib("FeatureDensityDisplay")
        check_fitted(estimator, ["classes_"], "FeatureDensityDisplay")
        names = getattr(estimator, "feature_names_in_", None)
        n_features = int(estimator.n_features_in_)
        chosen = range(n_features) if features is None else [int(f) for f in features]
        for f in chosen:
            if not 0 <= f < n_features:
                raise ValueError(
                    f"features must be column indices below {n_features}, got {f!r}"
                )
        panels = []
        if hasattr(estimator, "theta_") and hasattr(estimator, "var_"):
            theta = np.asarray(estimator.theta_, dtype=float)
            sd = np.sqrt(np.asarray(estimator.var_, dtype=float))
            for f in chosen:
                lo = np.min(theta[:, f] - 4 * sd[:, f])
                hi = np.max(theta[:, f] + 4 * sd[:, f])
                x = np.linspace(lo, hi, int(n_points))
                values = norm.pdf(x[None, :], theta[:, f, None], sd[:, f, None])
                panels.append({"name": f, "kind": "gaussian", "x": x, "values": values})
        elif hasattr(estimator, "feature_log_prob_") and hasattr(
            estimator, "categories_"
        ):
            for f in chosen:
                panels.append(
                    {
                        "name": f,
                        "kind": "categorical",
                        "x": np.asarray(estimator.categories_[f]),
                        "values": np.exp(
                            np.asarray(estimator.feature_log_prob_[f], dtype=float)
                        ),
                    }
                )
        else:
            raise TypeError(
                "FeatureDensityDisplay needs a Gaussian naive Bayes (theta_, var_) "
                "or a categorical one (feature_log_prob_, categories_); "
                f"{type(estimator).__name__} is neither"
            )
        for p in panels:
            p["name"] = str(names[p["name"]]) if names is not None else f"x{p['name']}"
        return cls(panels, np.asarray(estimator.classes_)).plot(axes=axes)

    def plot(self, axes=None):
        """Draw the display.

        Parameters
        ----------
        axes : array of matplotlib Axes, default=None

        Returns
        -------
        self
        """
        plt = check_matplotlib("FeatureDensityDisplay")
        n = len(self.panels)
        if axes is None:
            cols = min(n, 3)
            rows = -(-n // cols)
            _, axes = plt.subplots(
                rows,
                cols,
                figsize=(3.6 * cols, 2.8 * rows),
                squeeze=False,
                layout="constrained",
            )
            for extra in axes.ravel()[n:]:
                extra.set_visible(False)
        axes = np.asarray(axes, dtype=object).ravel()
        if axes.size < n:
            raise ValueError(
                f"axes must hold {n} Axes (one per feature), got {axes.size}"
            )
        colors = _class_colors(self.classes.size)
        self.artists_ = []
        for ax, panel in zip(axes, self.panels):
            row = []
            if panel["kind"] == "gaussian":
                for k, c in enumerate(self.classes.tolist()):
                    (line,) = ax.plot(
                        panel["x"], panel["values"][k], color=colors[k], label=str(c)
                    )
                    row.append(line)
                ax.set_ylabel("density")
            else:
                t = np.arange(len(panel["x"]))
                width = 0.8 / self.classes.size
                for k, c in enumerate(self.classes.tolist()):
                    bars = ax.bar(
                        t + (k - (self.classes.size - 1) / 2) * width,
                        panel["values"][k],
                        width,
                        color=colors[k],
                        label=str(c),
                    )
                    row.append(bars)
                ax.set_xticks(
                    t, [str(v) for v in panel["x"]], rotation=30 if len(t) > 4 else 0
                )
                ax.set_ylabel("probability")
                ax.set_ylim(0, 1)
            ax.set_title(panel["name"], fontsize="medium")
            self.artists_.append(row)
        axes[0].legend(title="class", fontsize="small")
        self.axes_ = axes[:n]
        self.figure_ = axes[0].figure
        return self
