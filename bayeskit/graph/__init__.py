"""The graphical-model core of bayeskit: factors, DAGs, tree and chain belief propagation.

This package knows nothing about estimators; it works on state indices and
log-potentials and can be used on its own.
"""
