"""The Normal-inverse-Wishart prior of a Gaussian's means and covariances.

A Gaussian state with mean ``mu`` and covariance ``Sigma`` has the conjugate
prior (Murphy 2012, section 4.6.3; Bishop 2006, section 2.3.6)

.. math::

    \\log p(\\mu, \\Sigma) = -\\frac{c}{2} \\log|\\Sigma|
        - \\frac12 \\operatorname{tr}\\big(\\Sigma^{-1} [\\Psi
        + \\kappa (\\mu - m_0)(\\mu - m_0)^T]\\big) + \\text{const},

with ``Psi`` the prior scatter (the sum of squares of virtual samples), ``c``
the weight of the covariance part, ``m_0`` the prior mean and ``kappa`` its
weight. Murphy's ``NIW(m_0, kappa_0, nu_0, S_0)`` is the case ``Psi = S_0``,
``kappa = kappa_0``, ``c = nu_0 + d + 2`` (:meth:`NormalInverseWishart.conjugate`).
Its mode given a state's weighted statistics (weight ``n``, mean ``xbar``,
centred scatter ``S``) is

.. math::

    \\hat\\mu = \\bar x - \\frac{\\kappa}{\\kappa + n} (\\bar x - m_0), \\qquad
    \\hat\\Sigma = \\frac{\\Psi + S + n (\\bar x - \\hat\\mu)(\\bar x - \\hat\\mu)^T
        + \\kappa (\\hat\\mu - m_0)(\\hat\\mu - m_0)^T}{c + n}

(Murphy 2012, eq. 4.215, for ``c = nu_0 + d + 2``). ``Psi = 0, c = kappa =
0`` is the flat prior: the maximum-likelihood estimate, exactly. The same
object expresses

- the MAP covariance prior of bayeskit's mixtures and QDA (Fraley and Raftery
  2007): ``eta`` virtual samples of covariance ``S``, ``Psi = eta S``, ``c =
  eta`` (:meth:`NormalInverseWishart.from_covariance`);
- hmmlearn's priors of ``GaussianHMM`` (Huang, Acero and Hon 2001, pp.
  443-445): ``means_prior`` ``m_0``, ``means_weight`` ``kappa``,
  ``covars_prior`` ``Psi`` and ``covars_weight`` ``a``, whose covariance weight
  is ``c = max(a - p, 0)`` with ``p`` the dimension of each covariance block
  (:meth:`NormalInverseWishart.from_hmmlearn`).

Two estimates that are not part of the density can be added after the mode, as
named parameters for parity with scikit-learn: ``shrink`` pulls the
covariance toward the identity, ``(1 - shrink) Sigma + shrink I`` (QDA's
``reg_param``), and ``reg`` is added to its diagonal (the mixtures'
``reg_covar``).

Variational Bayes keeps the whole posterior instead of its mode
(:meth:`NormalInverseWishart.posterior`, full covariance blocks): with
``nu_0 = c - d - 2`` degrees of freedom and Murphy's update (eqs.
4.209-4.214) ``kappa_n = kappa_0 + n``, ``m_n = (kappa_0 m_0 + n xbar) /
kappa_n``, ``nu_n = nu_0 + n``, ``Psi_n = Psi + S + kappa_0 n / kappa_n (xbar
- m_0)(xbar - m_0)^T``. Its messages are the expected log-density of a point,

.. math::

    E[\\log N(x \\mid \\mu, \\Sigma)] = \\tfrac12 E[\\log|\\Lambda|]
        - \\tfrac d2 \\log 2\\pi - \\tfrac12 \\big(d / \\kappa
        + \\nu (x - m)^T \\Psi^{-1} (x - m)\\big), \\qquad
    E[\\log|\\Lambda|] = \\sum_{i=1}^{d} \\psi\\big(\\tfrac{\\nu + 1 - i}{2}\\big)
        + d \\log 2 - \\log|\\Psi|

(Bishop 2006, eqs. 10.64-10.65, with ``W = Psi^{-1}``), and
:meth:`NormalInverseWishart.kl` its Kullback-Leibler divergence from the prior.

The update works for every covariance structure (full, tied, diagonal,
spherical): the structure object (:mod:`bayeskit.emissions.covariance`) says
how its scatter is pooled and which part of ``Psi`` it reads (the diagonal for
diagonal covariances, its mean for spherical ones). This module knows the
structures only through those methods.

References
----------
.. [1] K. P. Murphy, *Machine Learning: A Probabilistic Perspective*, MIT
   Press, 2012, section 4.6.3 (the Normal-inverse-Wishart distribution, its
   posterior and mode).
.. [2] C. M. Bishop, *Pattern Recognition and Machine Learning*, Springer,
   2006, section 2.3.6 (Bayesian inference for the Gaussian).
.. [3] C. Fraley and A. E. Raftery, "Bayesian regularization for normal
   mixture estimation and model-based clustering", *Journal of
   Classification* 24, 2007, pp. 155-181.
.. [4] X. Huang, A. Acero and H.-W. Hon, *Spoken Language Processing*,
   Prentice Hall, 2001, pp. 443-445.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from numbers import Real

import numpy as np

from ._niw_variational import NormalWishartPosterior

__all__ = ["NormalInverseWishart"]


def _array(value, name: str) -> np.ndarray:
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number or an array of numbers") from None
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite, got {arr.tolist()!r}")
    arr.setflags(write=False)
    return arr


def _scalar(value, name: str, upper: float = np.inf) -> float:
    if not isinstance(value, Real) or isinstance(value, bool):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not 0.0 <= value <= upper:
        bound = "in [0, 1]" if upper == 1.0 else "non-negative and finite"
        raise ValueError(f"{name} must be {bound}, got {value!r}")
    return value


def _check_psd(scatter: np.ndarray) -> None:
    """ValueError unless the (stacked) matrices ``scatter`` are symmetric and
    positive semi-definite."""
    if not np.allclose(scatter, np.swapaxes(scatter, -1, -2)):
        raise ValueError("scatter must be symmetric")
    evals = np.linalg.eigvalsh(scatter)
    scale = max(np.abs(evals).max(initial=0.0), np.finfo(float).tiny)
    if evals.min(initial=0.0) < -1e-12 * scale:
        raise ValueError("scatter must be positive semi-definite")


_HMMLEARN_NAMES = {
    "covariance_weight": "covars_weight",
    "mean_weight": "means_weight",
    "mean": "means_prior",
}


def _renamed(cls, scatter_name, **values):
    """``cls(**values)``, its errors naming hmmlearn's parameters (the scatter
    as ``scatter_name``)."""
    try:
        return cls(**values)
    except (TypeError, ValueError) as exc:
        message = str(exc)
        for ours, theirs in {"scatter": scatter_name, **_HMMLEARN_NAMES}.items():
            if message.startswith(ours + " "):
                message = theirs + message[len(ours) :]
                break
        raise type(exc)(message) from None


@dataclass(frozen=True, eq=False)
class NormalInverseWishart(NormalWishartPosterior):
    """A Normal-inverse-Wishart prior on Gaussian states, applied by its mode.

    All parameters default to zero: the flat prior, whose update is the
    maximum-likelihood estimate exactly. The values are checked when the
    object is made; their shapes against a model by :meth:`check`.

    Parameters
    ----------
    scatter : float or array-like, default=0.0
        The prior scatter ``Psi``: a number (that multiple of the identity),
        shape ``(n_features,)`` (a diagonal matrix), ``(n_features,
        n_features)`` (one matrix for every state) or ``(n_states, n_features,
        n_features)`` (one per state). Symmetric positive semi-definite.
    covariance_weight : float or array-like of shape (n_states,), default=0.0
        ``c``: the weight of the covariance part (non-negative), the number
        added to each state's weight in the covariance's denominator.
    mean : float or array-like, default=0.0
        The prior mean ``m_0``: a number, shape ``(n_features,)`` or
        ``(n_states, n_features)``.
    mean_weight : float or array-like, default=0.0
        ``kappa`` (non-negative): a number, one per state ``(n_states,)``, or
        with a diagonal or spherical structure one per state and feature
        ``(n_states, n_features)``.
    reg : float, default=0.0
        Added to the diagonal of every covariance after the mode (a ridge,
        not part of the density).
    shrink : float in [0, 1], default=0.0
        The covariance becomes ``(1 - shrink) Sigma + shrink I`` before
        ``reg`` is added (not part of the density).
    min_denominator : float, default=0.0
        A lower bound on the denominator ``c + n`` of the covariance's mode
        (hmmlearn's GaussianHMM bounds it by ``1e-5`` for diagonal and
        spherical covariances, so that a state of almost no weight gets a
        large variance instead of a division by zero). Not part of the
        density; 0 leaves the mode exact.
    keep_unvisited : bool, default=False
        Whether a state of zero weight keeps ``previous``'s covariance (given
        to :meth:`map`) whatever the prior's mode would be (hmmlearn's
        GaussianHMM, whose update divides by that zero weight, leaves such a
        state to bayeskit's rule of keeping what no data reached). States of a
        shared covariance have none of their own to keep.

    See Also
    --------
    bayeskit.priors.Dirichlet : the prior of the categorical tables.

    Notes
    -----
    See the module for the density, the mode and the references. For a
    diagonal structure every variance is a one-dimensional block, and for a
    spherical one the variance is shared by the ``d`` features of its state
    (each feature one block of ``c`` weight).

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit.emissions import FULL, Gaussian
    >>> from bayeskit.priors import NormalInverseWishart
    >>> X = np.array([[0.0, 1.0], [2.0, 1.0], [1.0, 4.0]])
    >>> g = Gaussian(FULL)
    >>> stats = g.stats(X, np.ones((3, 1)))
    >>> prior = NormalInverseWishart.from_covariance(np.eye(2), weight=1.0)
    >>> g.map_params(stats, prior).covariances[0]
    array([[0.75, 0.  ],
           [0.  , 1.75]])
    """

    scatter: np.ndarray = 0.0
    covariance_weight: np.ndarray = 0.0
    mean: np.ndarray = 0.0
    mean_weight: np.ndarray = 0.0
    reg: float = 0.0
    shrink: float = 0.0
    min_denominator: float = 0.0
    keep_unvisited: bool = False

    def __post_init__(self):
        scatter = _array(self.scatter, "scatter")
        if scatter.ndim > 3:
            raise ValueError(
                "scatter must be a number or have shape (n_features,), "
                f"(n_features, n_features) or (n_states, n_features, n_features), "
                f"got shape {scatter.shape}"
            )
        if scatter.ndim >= 2:
            if scatter.shape[-1] != scatter.shape[-2]:
                raise ValueError(
                    "scatter matrices must be square, got shape "
                    f"{scatter.shape} (give per-state diagonal scatters as "
                    "diagonal matrices)"
                )
            # Zeros (the flat prior of every default fit) are valid as they are.
            if scatter.any():
                _check_psd(scatter)
        elif (scatter < 0).any():
            raise ValueError("scatter must be non-negative on its diagonal")
        weights = {}
        for name in ("covariance_weight", "mean_weight"):
            w = _array(getattr(self, name), name)
            if (w < 0).any():
                raise ValueError(f"{name} must be non-negative, got {w.tolist()!r}")
            if w.ndim > (1 if name == "covariance_weight" else 2):
                raise ValueError(f"{name} has too many dimensions: {w.shape}")
            weights[name] = w
        mean = _array(self.mean, "mean")
        if mean.ndim > 2:
            raise ValueError(f"mean has too many dimensions: {mean.shape}")
        object.__setattr__(self, "scatter", scatter)
        object.__setattr__(self, "mean", mean)
        for name, w in weights.items():
            object.__setattr__(self, name, w)
        object.__setattr__(self, "reg", _scalar(self.reg, "reg"))
        object.__setattr__(self, "shrink", _scalar(self.shrink, "shrink", 1.0))
        object.__setattr__(
            self, "min_denominator", _scalar(self.min_denominator, "min_denominator")
        )
        if not isinstance(self.keep_unvisited, (bool, np.bool_)):
            raise TypeError(
                f"keep_unvisited must be True or False, got {self.keep_unvisited!r}"
            )
        object.__setattr__(self, "keep_unvisited", bool(self.keep_unvisited))

    def __repr__(self):
        fields = ("scatter", "covariance_weight", "mean", "mean_weight")
        parts = [
            f"{name}={np.asarray(getattr(self, name)).tolist()!r}"
            for name in fields
            if np.any(getattr(self, name))
        ]
        parts += [
            f"{n}={getattr(self, n)!r}"
            for n in ("reg", "shrink", "min_denominator", "keep_unvisited")
            if getattr(self, n)
        ]
        return f"NormalInverseWishart({', '.join(parts)})"

    @classmethod
    def _unchecked(cls, scatter=0.0, covariance_weight=0.0, reg=0.0, shrink=0.0):
        """A prior from values known to be valid (no checks: for the keyword
        form of the Gaussian family's ``map_params``, called in every fit)."""
        prior = object.__new__(cls)
        values = {
            "scatter": np.asarray(scatter, dtype=float),
            "covariance_weight": np.asarray(covariance_weight, dtype=float),
            "mean": np.zeros(()),
            "mean_weight": np.zeros(()),
            "reg": float(reg),
            "shrink": float(shrink),
            "min_denominator": 0.0,
            "keep_unvisited": False,
        }
        for name, value in values.items():
            object.__setattr__(prior, name, value)
        return prior

    # -- constructors --------------------------------------------------------------
    @classmethod
    def from_covariance(cls, covariance, weight: float, *, reg=0.0, shrink=0.0):
        """``weight`` virtual samples whose covariance is ``covariance``.

        The MAP covariance prior of bayeskit's mixtures and QDA (Fraley and
        Raftery 2007): ``Sigma = (S_k + eta S) / (n_k + eta)``, that is
        ``Psi = eta S`` and ``c = eta``, with no prior on the means.

        Parameters
        ----------
        covariance : float or array-like
            ``S``, in any form ``scatter`` takes.
        weight : float
            ``eta >= 0``; 0 is the maximum-likelihood estimate.
        reg, shrink : float
            As the class.

        Returns
        -------
        prior : NormalInverseWishart
        """
        eta = _scalar(weight, "weight")
        S = _array(covariance, "covariance")
        return cls(scatter=eta * S, covariance_weight=eta, reg=reg, shrink=shrink)

    @classmethod
    def conjugate(cls, *, mean, mean_weight, dof, scale, structure, n_features):
        """Murphy's ``NIW(m_0, kappa_0, nu_0, S_0)`` (Murphy 2012, eq. 4.200).

        Its density is ``|Sigma|^{-(nu_0 + p + 2) / 2} exp(-tr(Sigma^{-1} [S_0 +
        kappa_0 (mu - m_0)(mu - m_0)^T]) / 2)`` for each covariance block of
        dimension ``p`` (``p = d`` for full and tied matrices, 1 for each
        variance of a diagonal or spherical structure), so ``c = nu_0 + p +
        2`` and the update is the joint posterior mode (eq. 4.215).

        Parameters
        ----------
        mean, mean_weight : float or array-like
            ``m_0`` and ``kappa_0``.
        dof : float
            ``nu_0``, with ``nu_0 + p + 2 >= 0``.
        scale : float or array-like
            ``S_0``, in any form ``scatter`` takes.
        structure : Covariance
            The covariance structure of :mod:`bayeskit.emissions.covariance`.
        n_features : int

        Returns
        -------
        prior : NormalInverseWishart
        """
        c = float(dof) + structure.block_size(n_features) + 2.0
        return cls(
            scatter=scale, covariance_weight=c, mean=mean, mean_weight=mean_weight
        )

    @classmethod
    def from_hmmlearn(
        cls,
        structure,
        n_features: int,
        *,
        means_prior=0.0,
        means_weight=0.0,
        covars_prior=1e-2,
        covars_weight=1.0,
        covariance_prior=None,
        covariance_prior_weight=0.0,
        reg_covar=0.0,
    ):
        """hmmlearn's ``GaussianHMM`` priors (its M-step, ``_do_mstep``).

        ``means_prior`` and ``means_weight`` are ``m_0`` and ``kappa``;
        ``covars_prior`` is ``Psi`` in the covariance type's own form (for
        'full' and 'tied' a number is added to every entry of the matrix,
        for 'diag' and 'spherical' to every variance; per-state diagonals of
        shape ``(n_states, n_features)`` are read as such); ``covars_weight``
        ``a`` gives ``c = max(a - p, 0)``, ``p = d`` for full and tied
        matrices and 1 for variances (Huang, Acero and Hon 2001, pp. 443-445).
        bayeskit's ``GaussianHMM`` adds ``covariance_prior_weight`` virtual
        samples of ``covariance_prior`` (``Psi + eta S``, ``c + eta``) and
        the ridge ``reg_covar``.

        Two rules of hmmlearn's update that are not part of the density come
        with it: the denominator of every variance (``p = 1``) is at least
        ``1e-5`` (``min_denominator``), and a state of zero weight keeps its
        previous covariance (``keep_unvisited``; hmmlearn would divide by
        zero).

        Parameters
        ----------
        structure : Covariance
            The structure of the HMM's ``covariance_type``.
        n_features : int
        means_prior, means_weight, covars_prior, covars_weight
            hmmlearn's parameters of the same names.
        covariance_prior : array-like of shape (n_features, n_features), \
default=None
            ``S``; None is the identity.
        covariance_prior_weight : float, default=0.0
            ``eta``.
        reg_covar : float, default=0.0
            Added to the diagonal of every covariance after the mode.

        Returns
        -------
        prior : NormalInverseWishart
        """
        d = int(n_features)
        p = structure.block_size(d)
        P = _array(covars_prior, "covars_prior")
        if P.ndim > 3:
            raise ValueError(f"covars_prior has too many dimensions: {P.shape}")
        if p == 1:
            if P.ndim == 2 and P.shape[-1] == d:  # per-state diagonals
                P = P[:, :, None] * np.eye(d)
            elif P.ndim == 0:
                P = np.full(d, float(P))
        elif P.ndim < 2:  # broadcast over the matrix's rows, as hmmlearn
            P = np.broadcast_to(P, (d, d))
        c = np.maximum(_array(covars_weight, "covars_weight") - p, 0.0)
        eta = _scalar(covariance_prior_weight, "covariance_prior_weight")
        if eta:
            S = (
                np.eye(d)
                if covariance_prior is None
                else _array(covariance_prior, "covariance_prior")
            )
            P = _renamed(cls, "covars_prior", scatter=P).scatter_matrix(d) + eta * S
            c = c + eta
        return _renamed(
            cls,
            "covars_prior",
            scatter=P,
            covariance_weight=c,
            mean=means_prior,
            mean_weight=means_weight,
            reg=reg_covar,
            min_denominator=1e-5 if p == 1 else 0.0,
            keep_unvisited=True,
        )

    # -- the parts a structure reads -----------------------------------------------
    @cached_property
    def is_flat(self) -> bool:
        """Whether the density is flat (``Psi = 0``, ``c = kappa = 0``): the
        mode is then the maximum-likelihood estimate."""
        return not (
            self.scatter.any() or self.covariance_weight.any() or self._has_mean_prior
        )

    @cached_property
    def _has_mean_prior(self) -> bool:
        """Whether some ``kappa`` is positive (the means are then shrunk)."""
        return bool(self.mean_weight.any())

    def scatter_matrix(self, n_features: int) -> np.ndarray:
        """``Psi`` as matrices: ``(d, d)``, or ``(n_states, d, d)`` per state."""
        s = self.scatter
        if s.ndim == 0:
            return float(s) * np.eye(n_features)
        if s.ndim == 1:
            return np.diag(s)
        return s

    def scatter_diagonal(self, n_features: int) -> np.ndarray:
        """The diagonal of ``Psi``: ``(d,)``, or ``(n_states, d)`` per state."""
        s = self.scatter
        if s.ndim == 0:
            return np.full(n_features, float(s))
        if s.ndim == 1:
            return s
        return np.diagonal(s, axis1=-2, axis2=-1)

    def _per_state(self, value: np.ndarray, n_states: int) -> np.ndarray:
        return value if value.ndim == 2 else np.broadcast_to(value, (n_states,))

    def _covariance_weight(self, n_states: int):
        """``c``: a number, or one per state."""
        c = self.covariance_weight
        return float(c) if c.ndim == 0 else np.broadcast_to(c, (n_states,))

    def check(self, structure, n_states: int, n_features: int):
        """Raise a ValueError naming the parameter whose shape does not fit a
        model of ``n_states`` states, ``n_features`` features and covariance
        ``structure``; return the prior.
        """
        k, d = n_states, n_features
        s = self.scatter
        allowed = {0: [()], 1: [(d,)], 2: [(d, d)], 3: [(k, d, d)]}[s.ndim]
        if s.shape not in allowed or (s.ndim == 3 and structure.shared):
            raise ValueError(
                f"scatter of shape {s.shape} does not fit {k} states of {d} "
                f"features with the {structure.name} structure"
            )
        c = self.covariance_weight
        if c.shape not in ((),) + (((k,),) if not structure.shared else ()):
            raise ValueError(
                f"covariance_weight must be a number or have shape ({k},) (not "
                f"with a shared covariance), got shape {c.shape}"
            )
        if self.mean.shape not in ((), (d,), (k, d)):
            raise ValueError(
                f"mean must be a number or have shape ({d},) or ({k}, {d}), got "
                f"shape {self.mean.shape}"
            )
        w = self.mean_weight
        per_feature = structure.block_size(d) == 1
        if w.shape not in ((), (k,)) + (((k, d),) if per_feature else ()):
            raise ValueError(
                f"mean_weight must be a number or have shape ({k},)"
                + (f" or ({k}, {d})" if per_feature else "")
                + f", got shape {w.shape}"
            )
        return self

    # -- the mode ------------------------------------------------------------------
    def map_means(self, stats, previous=None) -> np.ndarray:
        """``mu = xbar - kappa / (kappa + n) (xbar - m_0)`` for every state.

        ``stats`` are Gaussian statistics (:class:`bayeskit.emissions.
        GaussianStats`). Where a state (or, with missing values, one of its
        features) has no weight and ``kappa = 0``, the mean is ``previous``'s
        (an object with ``means``) or, without one, the mean over all states.
        With ``kappa = 0`` the result is the statistics' mean exactly.
        """
        n = stats.feature_weight()
        xbar = stats.mean
        k = xbar.shape[0]
        if self._has_mean_prior:
            kappa = self._per_state(self.mean_weight, k)
            kappa = kappa if kappa.ndim == 2 else kappa[:, None]
            total = kappa + n
            frac = np.divide(
                kappa,
                total,
                out=np.zeros(np.broadcast(kappa, n).shape),
                where=total > 0,
            )
            means = xbar - frac * (xbar - self.mean)
        else:
            total = n
            means = xbar.copy()
        empty = total == 0
        if empty.any():
            fill = stats.grand_mean() if previous is None else previous.means
            means = np.where(empty, np.broadcast_to(fill, means.shape), means)
        return means

    def map_covariances(self, structure, stats, means, previous=None) -> np.ndarray:
        """The covariances of the mode given the means ``means`` (usually
        :meth:`map_means`'s; hmmlearn keeps the previous means when it does
        not update them), in ``structure``'s own shape.

        A state (or a feature of it) with no weight and ``c = 0`` keeps
        ``previous``'s covariance (an object with ``covariances``); without
        ``previous`` that is a :class:`numpy.linalg.LinAlgError`. With
        ``keep_unvisited`` every state of no weight keeps it. ``shrink`` and
        ``reg`` are applied last.
        """
        d = stats.mean.shape[1]
        k = stats.mean.shape[0]
        scatter = stats.scatter
        shift = stats.mean - means
        if shift.any():
            scatter = scatter + structure.outer(shift, stats.weight)
        if self._has_mean_prior:
            kappa = self._per_state(self.mean_weight, k)
            scatter = scatter + structure.outer(means - self.mean, kappa)
        cov = structure.map_covariances(
            scatter,
            stats.weight,
            structure.prior_scatter(self, d),
            self._covariance_weight(k),
            d,
            None if previous is None else previous.covariances,
            self.min_denominator,
        )
        if self.keep_unvisited and previous is not None and not structure.shared:
            empty = stats.state_weight() <= 0
            if empty.any():
                empty = empty.reshape((k,) + (1,) * (np.ndim(cov) - 1))
                cov = np.where(empty, previous.covariances, cov)
        if self.shrink:
            cov *= 1.0 - self.shrink
        if self.shrink + self.reg:
            cov = structure.add_to_diagonal(cov, self.shrink + self.reg)
        return cov

    def map(self, structure, stats, previous=None) -> tuple[np.ndarray, np.ndarray]:
        """The mode ``(means, covariances)`` of the posterior given ``stats``.

        Parameters
        ----------
        structure : Covariance
            The covariance structure (:mod:`bayeskit.emissions.covariance`).
        stats : GaussianStats
            Weighted statistics of every state.
        previous : object with ``means`` and ``covariances``, default=None
            What a state that neither data nor prior reached keeps.

        Returns
        -------
        means : ndarray of shape (n_states, n_features)
        covariances : ndarray
            In the structure's shape.
        """
        means = self.map_means(stats, previous)
        return means, self.map_covariances(structure, stats, means, previous)

    def log_density(self, structure, means, precisions_cholesky) -> float:
        """``log p(mu, Sigma)`` up to its constant (see the module), from the
        precision factors ``P`` (``P P^T = Sigma^{-1}``) in ``structure``'s
        shape; ``shrink`` and ``reg`` are not part of it. 0 for the flat prior.
        """
        if self.is_flat:
            return 0.0
        means = np.asarray(means, dtype=float)
        k, d = means.shape
        P = precisions_cholesky
        # log|Sigma| = -2 log det P, per covariance block.
        log_det = -2.0 * structure.log_det_precision_cholesky(P, d)
        c = self._covariance_weight(k)
        total = -0.5 * np.sum(c * log_det)
        total -= 0.5 * np.sum(
            structure.trace_precision(P, structure.prior_scatter(self, d), d)
        )
        if self._has_mean_prior:
            kappa = self._per_state(self.mean_weight, k)
            outer = structure.outer(means - self.mean, kappa)
            total -= 0.5 * np.sum(structure.trace_precision(P, outer, d))
        return float(total)
