"""Plots of fitted bayeskit models (the ``plot`` extra: matplotlib).

Every display is built from a fitted estimator by ``from_estimator`` (or from
a table or edges), draws on the given matplotlib Axes or on a new figure, and
keeps what it drew (``ax_``, ``figure_`` and the artists), as scikit-learn's
displays do; ``plot`` draws it again. matplotlib is imported on the first
drawing, never by ``import bayeskit``: without it a drawing raises an
ImportError that names the ``plot`` extra.

- Mixtures: :class:`MixtureEllipsesDisplay`, :class:`MixtureDensityDisplay`,
  :class:`MixtureSelectionDisplay` (the table of
  :func:`bayeskit.select_mixture`).
- Hidden Markov models: :class:`StateSequenceDisplay`,
  :class:`TransitionDisplay` (a heat map), :class:`StateDiagramDisplay`,
  :class:`DurationDisplay` (a semi-Markov model's durations).
- Networks: :class:`NetworkDisplay` (the DAG laid out in pure Python, with the
  posterior bars), :class:`CPTDisplay`, :class:`StructureDiffDisplay` and
  :func:`structure_difference`.
- Classifiers: :class:`DecisionRegionDisplay`, :class:`FeatureDensityDisplay`.
"""

from ._classifier import DecisionRegionDisplay, FeatureDensityDisplay
from ._durations import DurationDisplay
from ._hmm import StateSequenceDisplay, TransitionDisplay
from ._mixture import (
    MixtureDensityDisplay,
    MixtureEllipsesDisplay,
    MixtureSelectionDisplay,
)
from ._network import (
    CPTDisplay,
    NetworkDisplay,
    StructureDiffDisplay,
    structure_difference,
)
from ._state_diagram import StateDiagramDisplay

__all__ = [
    "CPTDisplay",
    "DecisionRegionDisplay",
    "DurationDisplay",
    "FeatureDensityDisplay",
    "MixtureDensityDisplay",
    "MixtureEllipsesDisplay",
    "MixtureSelectionDisplay",
    "NetworkDisplay",
    "StateDiagramDisplay",
    "StateSequenceDisplay",
    "StructureDiffDisplay",
    "TransitionDisplay",
    "structure_difference",
]
