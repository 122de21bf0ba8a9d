"""A semi-Markov model's durations drawn: one line per state, its pmf."""

import numpy as np
import pytest

from bayeskit import GaussianHMM, HiddenSemiMarkovModel
from bayeskit.plot import DurationDisplay


def test_each_line_is_a_state_duration_distribution():
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(m, 1, (6, 1)) for m in [0, 4] * 15])
    model = HiddenSemiMarkovModel(2, duration="table", max_duration=9, random_state=0)
    display = DurationDisplay.from_estimator(model.fit(X))
    assert len(display.lines_) == 2
    for line, row in zip(display.lines_, model.durations_):
        np.testing.assert_array_equal(line.get_xdata(), np.arange(1, 10))
        np.testing.assert_allclose(line.get_ydata(), row)
    assert display.ax_.get_xlabel().startswith("duration")


def test_a_model_without_durations_is_a_type_error():
    X = np.random.default_rng(0).normal(size=(30, 1))
    with pytest.raises(TypeError, match="duration_pmf_"):
        DurationDisplay.from_estimator(GaussianHMM(2, random_state=0).fit(X))
