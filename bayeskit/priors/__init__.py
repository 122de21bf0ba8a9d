"""Priors: applied only where statistics become parameters (``map_params``)."""

from .dirichlet import Dirichlet, log_m_estimate

__all__ = ["Dirichlet", "log_m_estimate"]
