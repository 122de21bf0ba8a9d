"""What the model families share: the generative classifier, the one EM base,
the encoder of categorical columns, semi-supervised EM and the statistics.

Private: the estimators are reached from :mod:`bayeskit` and its family
packages (:mod:`bayeskit.naive_bayes`, :mod:`bayeskit.discriminant_analysis`,
:mod:`bayeskit.mixture`, :mod:`bayeskit.hmm`, :mod:`bayeskit.network`).
"""
