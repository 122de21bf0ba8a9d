"""Priors: applied only where statistics become parameters (``map_params``)."""

from .dirichlet import Dirichlet, log_m_estimate
from .niw import NormalInverseWishart as NormalInverseWishart

__all__ = ["Dirichlet", "log_m_estimate"]
