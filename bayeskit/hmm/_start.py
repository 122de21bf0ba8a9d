"""How a hidden Markov model starts, as hmmlearn's ``_init`` draws it.

Which parameters ``fit`` sets first (those in ``init_params`` and those not
set by hand), their first values drawn from ``random_state`` as hmmlearn
0.3.3 draws them (so that both libraries start a fit from the same numbers),
the restarts of ``n_init`` and the generator hmmlearn's models keep for
``sample``.
"""

from __future__ import annotations

import logging
from numbers import Integral

import numpy as np
from sklearn.utils import check_random_state

from .._base.em import LatentParams
from .._base.sequences import _complete_steps

__all__ = ["HMMStart"]

_log = logging.getLogger("bayeskit.hmm")


class HMMStart:
    """The start of :class:`~bayeskit.hmm._base.BaseHMM`'s fit (a mixin)."""

    def _plan_init(self, n_values):
        """Which parameters ``fit`` initialises, as hmmlearn: those in
        ``init_params`` (a logged warning when one was set by hand) and those
        not set yet."""
        self._to_init = set()
        for code, name in self._param_names.items():
            if code in self.init_params:
                if hasattr(self, name):
                    _log.warning(
                        "Even though the %r attribute is set, it will be "
                        "overwritten during initialization because 'init_params' "
                        "contains %r",
                        name,
                        code,
                    )
                self._to_init.add(code)
            elif not hasattr(self, name):
                self._to_init.add(code)
        n_free = self._n_parameters(self._components())
        if n_values < n_free:
            _log.warning(
                "Fitting a model with %d free scalar parameters with only %d data "
                "points will result in a degenerate solution.",
                n_free,
                n_values,
            )

    def _initialize(self, X, row_weight, random_state, components) -> LatentParams:
        """Set the parameters ``_plan_init`` chose to their first values, as
        hmmlearn's ``_init`` draws them; return all the parameters, validated.

        ``random_state`` is the value hmmlearn's ``_init`` reads from its
        ``random_state`` (an int, a ``RandomState`` or None), not a generator
        made from it: as hmmlearn, the chain's tables come from
        ``check_random_state(random_state)`` (the start distribution, then
        every row of the transitions, each from a Dirichlet with every
        concentration ``1 / n_components``), and the family's start reads
        ``random_state`` again (:meth:`_emission_start`): an int seeds a new
        generator there, a ``RandomState`` goes on drawing.
        """
        _, emission, _ = components
        rng = check_random_state(random_state)
        k = self.n_components
        alpha = np.full(k, 1.0 / k)
        if "s" in self._to_init:
            self.startprob_ = rng.dirichlet(alpha)
        if "t" in self._to_init:
            self.transmat_ = rng.dirichlet(alpha, size=k)
        letters = self._emission_letters & self._to_init
        if letters:
            complete = _complete_steps(X)
            if complete is not None:  # the family starts from complete steps
                if not complete.any():
                    raise ValueError(
                        "X has no step without missing values (NaN), from "
                        "which to start the emission parameters: set them and "
                        "leave their letters out of init_params"
                    )
                X, row_weight = X[complete], row_weight[complete]
            first = self._emission_start(X, row_weight, random_state, emission)
            new = self._emission_attributes(first)
            # In the order of _param_names: a set's order changes with the
            # process's hash seed (and so would the attributes' order).
            for letter, name in self._param_names.items():
                if letter not in letters:
                    continue
                setattr(self, name, new[name])
        elif self._keeps_generator:
            self._start_rng = check_random_state(random_state)
        return self._current_params()

    def _emission_start(self, X, row_weight, random_state, emission):
        """The family's first parameters for ``fit``: by default its own
        start (``init_params`` with the row weights) drawn from
        ``check_random_state(random_state)``, as hmmlearn's CategoricalHMM,
        MultinomialHMM and PoissonHMM draw theirs (an int seed starts a new
        generator, so the draws begin where the chain's began); a model with
        the peer's start of its own overrides this."""
        rng = check_random_state(random_state)
        self._start_rng = rng
        return emission.init_params(X, row_weight[:, None], self.n_components, rng)

    def _keep_generator(self):
        """After hmmlearn's start from an int ``random_state``: keep the
        generator hmmlearn's model would hold in its ``random_state`` (see
        ``_keeps_generator``), for :meth:`sample` with ``random_state=None``
        while ``random_state`` is unchanged."""
        rng = self.__dict__.pop("_start_rng", None)
        seed = self.random_state
        self.__dict__.pop("_generator", None)
        if self._keeps_generator and isinstance(seed, Integral) and rng is not None:
            self._generator = (seed, rng)

    def _starts(self, X, row_weight, components):
        """The ``start(_)`` that ``_fit_components`` calls once per restart.

        The first start is hmmlearn's, from ``random_state`` itself. The
        others (``n_init > 1``; hmmlearn has no restarts) are hmmlearn's
        starts from the seeds ``check_random_state(random_state).randint``
        draws after the first start, so restart ``i`` is what hmmlearn's
        model with ``random_state=seed_i`` starts from.
        """
        seeds = None

        def start(_):
            nonlocal seeds
            if seeds is not None:
                value = int(seeds.randint(np.iinfo(np.int32).max))
                return self._initialize(X, row_weight, value, components)
            seeds = check_random_state(self.random_state)
            params = self._initialize(X, row_weight, self.random_state, components)
            self._keep_generator()
            return params

        return start

    def _init(self, X, lengths=None):
        """hmmlearn's hook: initialise the parameters for ``X`` as ``fit`` does
        (those in ``init_params`` and those not set), without running EM."""
        Xt, lengths, _ = self._sequences(X, lengths, reset=True)
        self._plan_init(Xt.size if Xt.ndim > 1 else len(Xt))
        self._initialize(Xt, np.ones(len(Xt)), self.random_state, self._components())
        self._keep_generator()
        return self
