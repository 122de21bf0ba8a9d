"""The command-line tool, the outer edge of bayeskit: ``python -m bayeskit``.

- :mod:`~bayeskit.cli.main`: the argument parser and ``main``;
- :mod:`~bayeskit.cli.compare`: ``compare``, cross-validation against
  scikit-learn and its tables;
- :mod:`~bayeskit.cli.data`: the bundled data sets, CSV input and the
  encodings each model is given;
- :mod:`~bayeskit.cli.curve`: the learning curve (``--learning-curve``,
  ``--plot``);
- :mod:`~bayeskit.cli.report`: progress bar, text tables, JSON;
- :mod:`~bayeskit.cli.figures`: the figure of the scores
  (``--comparison-plot``) and the HTML report (``--html``);
- :mod:`~bayeskit.cli.demo`: ``demo``, exact inference on small textbook networks.

Nothing below this package imports it.
"""
