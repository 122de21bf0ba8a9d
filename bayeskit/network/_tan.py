"""Chow-Liu trees and tree-augmented naive Bayes.

:func:`chow_liu_tree` learns the best tree-shaped structure from data (a
network for :class:`~bayeskit.BayesianNetwork`), and :class:`TreeAugmentedNB`
is naive Bayes whose features form such a tree given the class. Both are
built from pairwise weighted counts that add (:class:`TreeStats`) and their
mutual information. TAN's emission family, :class:`TreeTables`, turns those
counts into a tree and its m-estimated tables, and scores rows by a gather
per feature (complete rows) or belief propagation on the tree (rows with
missing features).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._base.categorical import CATEGORICAL_CONSTRAINTS, MEstimate, read_categorical
from .._base.classifier import Triple
from .._base.encoding import CategoryEncoder, categorical_input_tags
from .._base.triple import TripleClassifier
from .._validation import check_sample_weight
from ..graph import LatentNode, TreeBP
from ..graph.spanning_tree import maximum_spanning_tree
from ..priors import log_m_estimate
from ._scores import split_frame

__all__ = ["TreeAugmentedNB", "TreeParams", "TreeStats", "TreeTables", "chow_liu_tree"]


# ---------------------------------------------------------------------------
# Statistics


@dataclass(frozen=True)
class TreeStats:
    """Pairwise weighted counts of categorical features, per class.

    ``pair_counts[k, off_i + a, off_j + b]`` is the weight of the rows of
    class ``k`` with ``x_i = a`` and ``x_j = b`` (both observed); the diagonal
    blocks hold the counts of single features. Counts of chunks add.
    """

    pair_counts: np.ndarray

    def __add__(self, other: TreeStats) -> TreeStats:
        return TreeStats(self.pair_counts + other.pair_counts)


# ---------------------------------------------------------------------------
# Helpers: pairwise counts, mutual information, trees


def _one_hot(codes: np.ndarray, offsets: np.ndarray) -> sp.csr_matrix:
    """Sparse indicators ``(n, sum_j t_j)`` of the observed codes (-1: missing)."""
    n = codes.shape[0]
    observed = codes >= 0
    indices = (codes + offsets[:-1])[observed]
    indptr = np.concatenate([[0], np.cumsum(observed.sum(axis=1))])
    data = np.ones(indices.shape[0])
    return sp.csr_matrix((data, indices, indptr), shape=(n, int(offsets[-1])))


def _pair_counts(codes: np.ndarray, offsets: np.ndarray, weights: np.ndarray):
    """Weighted pairwise counts ``(K, T, T)`` under ``weights`` of shape (n, K)."""
    onehot = _one_hot(codes, offsets)
    onehot_t = onehot.T.tocsr()
    total = int(offsets[-1])
    pair = np.empty((weights.shape[1], total, total))
    for k in range(weights.shape[1]):
        weighted = onehot.multiply(weights[:, k : k + 1]).tocsr()
        pair[k] = (onehot_t @ weighted).toarray()
    return pair


def _mutual_information(pair_counts: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Mutual information (conditional on a leading class axis) of every pair.

    ``pair_counts`` has shape ``(K, T, T)`` (see :class:`TreeStats`); returns
    ``(d, d)`` with ``I(X_i; X_j | C)`` estimated by maximum likelihood from
    the rows where both features are observed (0 on the diagonal).
    """
    d = len(offsets) - 1
    mi = np.zeros((d, d))
    for i, j in itertools.combinations(range(d), 2):
        block = pair_counts[:, offsets[i] : offsets[i + 1], offsets[j] : offsets[j + 1]]
        total = block.sum()
        if total <= 0:
            continue
        n_c = block.sum(axis=(1, 2), keepdims=True)
        n_a = block.sum(axis=2, keepdims=True)
        n_b = block.sum(axis=1, keepdims=True)
        pos = block > 0
        ratio = (block * n_c)[pos] / (n_a * n_b * np.ones_like(block))[pos]
        mi[i, j] = mi[j, i] = max(float(block[pos] @ np.log(ratio)) / total, 0.0)
    return mi


def _orient(d: int, edges, root: int = 0) -> np.ndarray:
    """Parent of every node of an undirected forest rooted at ``root`` (-1: root)."""
    neighbours: list[list[int]] = [[] for _ in range(d)]
    for i, j in edges:
        neighbours[i].append(j)
        neighbours[j].append(i)
    parent = np.full(d, -1, dtype=np.intp)
    seen = [False] * d
    for start in [root, *range(d)]:
        if seen[start]:
            continue
        seen[start] = True
        queue = [start]
        while queue:
            node = queue.pop(0)
            for nb in neighbours[node]:
                if not seen[nb]:
                    seen[nb] = True
                    parent[nb] = node
                    queue.append(nb)
    return parent


def chow_liu_tree(X, *, root=None, sample_weight=None) -> list[tuple]:
    """The Chow-Liu tree: the best tree-shaped Bayesian network for the data.

    Parameters
    ----------
    X : DataFrame or array-like of shape (n_samples, n_variables)
        Categorical data (any labels); missing values (NaN, None) are left out
        of the counts of the pairs they touch. The variables are the columns
        of a DataFrame, or ``0 .. n_variables - 1`` for an array.
    root : hashable, default=None
        The variable the edges point away from; ``None`` takes the first.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights of the rows.

    Returns
    -------
    edges : list of (parent, child)
        ``n_variables - 1`` edges, each variable but the root with one parent,
        ready for ``BayesianNetwork(edges=...)``.

    Notes
    -----
    Among all distributions that factorise along a tree, the one closest to
    the empirical distribution in Kullback-Leibler divergence (the maximum-
    likelihood tree) is the maximum-weight spanning tree of the pairwise
    mutual information

    .. math::

        I(X_i; X_j) = \\sum_{a, b} \\hat P(a, b)
            \\log \\frac{\\hat P(a, b)}{\\hat P(a) \\hat P(b)}

    (Chow and Liu, 1968). The direction of the edges does not change the
    distribution; they point away from ``root``.

    References
    ----------
    .. [1] C. Chow and C. Liu, "Approximating discrete probability
       distributions with dependence trees", IEEE Transactions on Information
       Theory, 14(3), 1968.

    Examples
    --------
    >>> import pandas as pd
    >>> from bayeskit import chow_liu_tree
    >>> df = pd.DataFrame({"a": list("xxyyxy"), "b": list("xxyyxy"),
    ...                    "c": list("uvuvvu")})
    >>> chow_liu_tree(df)
    [('a', 'b'), ('a', 'c')]
    """
    cols, dtypes, names = split_frame(X)
    n = len(cols[0])
    sw = check_sample_weight(sample_weight, np.empty((n, 0)))
    if root is None:
        root_index = 0
    elif root in names:
        root_index = names.index(root)
    else:
        raise ValueError(f"root {root!r} is not a column of X; the columns are {names}")
    encoder = CategoryEncoder.fit(
        cols, [repr(v) for v in names], dtypes=dtypes, allow_empty=True
    )
    codes = encoder.encode(cols)
    sizes = np.maximum(encoder.n_categories, 1)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    mi = _mutual_information(_pair_counts(codes, offsets, sw[:, None]), offsets)
    d = len(names)
    tree = maximum_spanning_tree(
        d, [(i, j, mi[i, j]) for i, j in itertools.combinations(range(d), 2)]
    )
    parent = _orient(d, tree, root_index)
    order = _bfs_order(parent, root_index)
    return [(names[parent[j]], names[j]) for j in order if parent[j] >= 0]


def _bfs_order(parent: np.ndarray, root: int) -> list[int]:
    children: list[list[int]] = [[] for _ in parent]
    for j, p in enumerate(parent):
        if p >= 0:
            children[p].append(j)
    roots = [root] + [j for j in range(len(parent)) if parent[j] < 0 and j != root]
    order, queue = [], list(roots)
    while queue:
        node = queue.pop(0)
        order.append(node)
        queue.extend(children[node])
    return order


# ---------------------------------------------------------------------------
# The emission family of TAN


@dataclass(frozen=True)
class TreeParams:
    """A tree over the features and its tables, for every class.

    Attributes
    ----------
    parents : ndarray of shape (d,)
        The feature each feature depends on besides the class (-1: the root,
        feature 0).
    log_tables : list of ndarray
        ``log P(x_j | y)`` of shape ``(n_states, t_j)`` for the root and
        ``log P(x_j | x_parent, y)`` of shape ``(n_states, t_parent, t_j)``
        for the others.
    mutual_information : ndarray of shape (d, d)
        ``I(x_i; x_j | y)``, the weights the tree maximises.
    trees : list of TreeBP
        The tree of every class, to sum out missing features.
    """

    parents: np.ndarray
    log_tables: list
    mutual_information: np.ndarray
    trees: list


class TreeTables:
    """Categorical features on a tree given the latent state (TAN's emission).

    Parameters
    ----------
    n_categories : sequence of int
        Number of categories ``t_j`` of every feature; codes are
        ``0 .. t_j - 1``, ``-1`` for missing.

    Notes
    -----
    The statistics are the pairwise counts (:class:`TreeStats`); the
    parameters are the maximum-weight spanning tree of the conditional mutual
    information (Friedman, Geiger and Goldszmidt 1997) and the m-estimated
    tables of every feature given its parent in the tree and the state.
    """

    def __init__(self, n_categories) -> None:
        self.n_categories = np.asarray(n_categories, dtype=np.intp)
        self.offsets = np.zeros(len(self.n_categories) + 1, dtype=np.intp)
        np.cumsum(self.n_categories, out=self.offsets[1:])

    def stats(self, codes, weights, labels=None) -> TreeStats:
        return TreeStats(_pair_counts(codes, self.offsets, weights))

    def zeros(self, n_states: int) -> TreeStats:
        total = int(self.offsets[-1])
        return TreeStats(np.zeros((n_states, total, total)))

    def map_params(
        self,
        stats: TreeStats,
        prior: MEstimate | None = None,
        previous=None,
        parents=None,
    ):
        """The tree of the conditional mutual information and its m-estimates
        (``parents``: this tree instead, its tables estimated)."""
        if prior is None:
            prior = MEstimate.maximum_likelihood(self.n_categories)
        off = self.offsets
        d = len(off) - 1
        pair = stats.pair_counts
        cmi = _mutual_information(pair, off)
        if parents is None:
            edges = maximum_spanning_tree(
                d, [(i, j, cmi[i, j]) for i, j in itertools.combinations(range(d), 2)]
            )
            parent = _orient(d, edges, 0)
        else:
            parent = np.asarray(parents)
        tables = []
        for j in range(d):
            own = slice(off[j], off[j + 1])
            if parent[j] < 0:
                counts = np.diagonal(pair[:, own, own], axis1=1, axis2=2)
            else:
                i = parent[j]
                counts = pair[:, off[i] : off[i + 1], own]
            tables.append(
                log_m_estimate(
                    counts, counts.sum(axis=-1, keepdims=True), prior.m[j], prior.p[own]
                )
            )
        order = _bfs_order(parent, 0)
        cards = {j: int(self.n_categories[j]) for j in range(d)}
        tree_edges = [(int(parent[j]), j) for j in order if parent[j] >= 0]
        trees = [
            TreeBP(
                cards,
                tree_edges,
                [np.exp(tables[j][k]) for _, j in tree_edges],
                {0: np.exp(tables[0][k])},
            )
            for k in range(pair.shape[0])
        ]
        return TreeParams(parent, tables, cmi, trees)

    def n_parameters(self, n_states: int, params: TreeParams) -> int:
        """Free scalars of the tables of the tree of ``params``."""
        t = self.n_categories
        per_state = sum(
            (t[j] - 1) * (1 if p < 0 else t[p]) for j, p in enumerate(params.parents)
        )
        return int(n_states * per_state)

    def log_likelihood(self, codes: np.ndarray, params: TreeParams) -> np.ndarray:
        """``log p(x | z = k)``, the missing features summed out, ``(n, K)``."""
        out = np.zeros((codes.shape[0], len(params.trees)))
        complete = (codes >= 0).all(axis=1)
        rows = np.flatnonzero(complete)
        if rows.size:
            out[rows] = self._complete(codes[rows], params)
        rows = np.flatnonzero(~complete)
        if rows.size:
            out[rows] = self._summed_out(codes[rows], params)
        return out

    @staticmethod
    def _complete(codes: np.ndarray, params: TreeParams) -> np.ndarray:
        """Rows with every feature observed: one gather per feature."""
        total = np.zeros((len(params.trees), codes.shape[0]))
        for j, table in enumerate(params.log_tables):
            parent = params.parents[j]
            if parent < 0:
                total += table[:, codes[:, j]]
            else:
                total += table[:, codes[:, parent], codes[:, j]]
        return total.T

    @staticmethod
    def _summed_out(codes: np.ndarray, params: TreeParams) -> np.ndarray:
        """Rows with missing features: sum-product on every class's tree."""
        evidence = {j: codes[:, j] for j in range(codes.shape[1])}
        return np.column_stack(
            [tree.sum_product(evidence=evidence).log_evidence for tree in params.trees]
        )


# ---------------------------------------------------------------------------
# Tree-augmented naive Bayes


class TreeAugmentedNB(TripleClassifier):
    """Tree-augmented naive Bayes (TAN): features form a Chow-Liu tree given the class.

    Naive Bayes assumes the features independent given the class; TAN lets
    every feature but one depend on one other feature as well, along the tree
    that maximises the conditional mutual information given the class. It
    takes categorical data as :class:`CategoricalNB` does (any labels,
    missing values marginalised).

    Parameters
    ----------
    m : float or array-like of shape (n_features,), default=1.0
        Equivalent sample size of the m-estimate of every table (per feature
        for an array). ``m=0`` is the maximum-likelihood estimate.
    p : list of array-like, default=None
        Prior distribution of each feature's categories (in the order of
        ``categories_``); None is uniform.
    priors : array-like of shape (n_classes,), default=None
        Class prior probabilities. None estimates them from the class counts.
    prior_m : float, default=0.0
        m-estimate of the class prior (see :class:`CategoricalNB`).
    costs : array-like of shape (n_classes,) or (n_classes, n_classes), default=None
        Misclassification costs for :meth:`predict` (see :class:`CategoricalNB`).
    categories : {'auto', 'observed'} or list of array-like, default='auto'
        The categories of each feature; 'auto' and 'observed' both take the
        values seen in fit, sorted (a pandas categorical: its own categories in
        their order, those absent from the data included); a list: these
        labels, in this order.
    min_categories : int or array-like of shape (n_features,), default=None
        For features coded ``0, 1, 2, ...``: at least this many categories,
        so that codes unseen in fit are known categories.
    handle_unknown : {'ignore', 'error'}, default='ignore'
        A value never seen in fit at predict time: treat it as missing, or
        raise a ValueError.
    unlabeled : object, default=None
        The label that marks a row of ``y`` as unlabelled: -1 as in
        scikit-learn's ``sklearn.semi_supervised``, a string such as ``"?"``
        for string labels, or ``np.nan`` for NaN and None. None (the default):
        every label is a class. Unlabelled rows are fitted by semi-supervised
        EM (see :ref:`semi_supervised`); ``classes_`` never holds the marker.
    unlabeled_weight : float, default=1.0
        The weight lambda of the unlabelled rows' statistics in that EM
        (Nigam et al., 2000): 1 counts an unlabelled row as a labelled one, 0
        leaves the unlabelled rows out.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_count_ : ndarray of shape (n_classes,)
    class_log_prior_ : ndarray of shape (n_classes,)
    categories_ : list of ndarray
        Categories of each feature.
    feature_parents_ : ndarray of shape (n_features,)
        The feature each feature depends on besides the class (-1 for the
        root of the tree, feature 0).
    feature_log_prob_ : list of ndarray
        ``log P(x_j | y)`` of shape ``(n_classes, t_j)`` for the root and
        ``log P(x_j | x_parent, y)`` of shape ``(n_classes, t_parent, t_j)``
        for the others.
    conditional_mutual_information_ : ndarray of shape (n_features, n_features)
        ``I(x_i; x_j | y)``, the weights of the tree.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
    stats_ : ClassifierStats
        Class weights and the pairwise counts (``TreeStats``), which add.
    em_n_iter_ : int
        Iterations of semi-supervised EM, after a fit with unlabelled rows (see
        :ref:`semi_supervised`).
    em_lower_bound_ : float
        Its objective at the fitted parameters.
    em_lower_bounds_ : list of float
        The objective of the labelled start and after every iteration.
    em_converged_ : bool
        Whether EM stopped at its tolerance rather than its iteration limit.

    See Also
    --------
    CategoricalNB : The same without the tree.
    chow_liu_tree : The tree without a class.

    Notes
    -----
    The model is

    .. math::

        P(y, x) = P(y)\\, P(x_r \\mid y) \\prod_{j \\ne r}
            P(x_j \\mid x_{\\pi(j)}, y),

    with the tree :math:`\\pi` the maximum-weight spanning tree of
    :math:`I(x_i; x_j \\mid y)`, estimated from the rows where both features
    are observed, and the tables m-estimates from the same pairwise counts.
    The structure and the tables are derived from counts that add, so
    ``partial_fit`` may change the tree. A missing feature is summed out by
    belief propagation on the tree, per class. With unlabelled rows
    (``unlabeled``), the tree is learnt from the labelled rows and kept: EM
    fits its tables, and a later ``partial_fit`` keeps it too.

    References
    ----------
    .. [1] N. Friedman, D. Geiger and M. Goldszmidt, "Bayesian network
       classifiers", Machine Learning, 29, 1997.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeskit import TreeAugmentedNB
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(2, size=400)
    >>> a = np.where(rng.random(400) < 0.8, y, 1 - y)
    >>> b = np.where(rng.random(400) < 0.9, a, 1 - a)  # a copy of a, mostly
    >>> X = np.column_stack([a, b])
    >>> clf = TreeAugmentedNB().fit(X, y)
    >>> clf.feature_parents_
    array([-1,  0])
    >>> clf.predict([[1, 1], [0, 0]])
    array([1, 0])
    """

    _parameter_constraints: dict = CATEGORICAL_CONSTRAINTS

    _numeric_codes = False  # every feature's categories are the values seen
    _read = read_categorical  # categorical data in, as CategoricalNB takes it

    def _encoded_columns(self, X) -> list:
        """Every column is categorical."""
        return list(range(X.shape[1]))

    def __init__(
        self,
        *,
        m=1.0,
        p=None,
        priors=None,
        prior_m=0.0,
        costs=None,
        categories="auto",
        min_categories=None,
        handle_unknown="ignore",
        unlabeled=None,
        unlabeled_weight=1.0,
    ):
        self.m = m
        self.p = p
        self.priors = priors
        self.prior_m = prior_m
        self.costs = costs
        self.categories = categories
        self.min_categories = min_categories
        self.unlabeled = unlabeled
        self.unlabeled_weight = unlabeled_weight
        self.handle_unknown = handle_unknown

    def _make_components(self) -> Triple:
        categories = self._encoder.categories
        return Triple(
            LatentNode(len(self.classes_)),
            TreeTables([len(c) for c in categories]),
            MEstimate.of(self.m, self.p, categories),
        )

    def _prepare_X(self, X, reset, sample_weight=None):
        if reset:
            self._fixed_parents = None
        return super()._prepare_X(X, reset, sample_weight)

    def _freeze_structure(self) -> None:
        # With unlabelled rows, the tree is the labelled rows' and EM fits
        # the tables.
        self._fixed_parents = self._params.parents

    def _set_emission_params(self, stats) -> None:
        triple = self._components()
        self._params = triple.emission.map_params(
            stats, triple.prior, parents=getattr(self, "_fixed_parents", None)
        )

    def _emission_log_prior(self) -> float:
        # ``sum m_j p_ja log theta``: the Dirichlet of every table whose mode
        # is its m-estimate.
        prior, off = self._triple.prior, self._triple.emission.offsets
        total = 0.0
        for j, table in enumerate(self._params.log_tables):
            weight = prior.m[j] * prior.p[off[j] : off[j + 1]]
            with np.errstate(invalid="ignore"):
                total += float(np.where(weight > 0, weight * table, 0.0).sum())
        return total

    @property
    def categories_(self) -> list:
        return self._encoder.categories

    @property
    def feature_parents_(self) -> np.ndarray:
        return self._params.parents

    @property
    def feature_log_prob_(self) -> list:
        return self._params.log_tables

    @property
    def conditional_mutual_information_(self) -> np.ndarray:
        return self._params.mutual_information

    def __sklearn_tags__(self):
        return categorical_input_tags(super().__sklearn_tags__())
