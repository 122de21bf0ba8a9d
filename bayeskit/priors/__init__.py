"""Priors: applied only where statistics become parameters (``map_params``)."""

from .dirichlet import log_m_estimate

__all__ = ["log_m_estimate"]
