"""The documentation covers the package: every public name, every promised example."""

import ast
import re
from pathlib import Path

import pytest

import bayeskit
import bayeskit.datasets
import bayeskit.graph
import bayeskit.plot

DOCS = Path(__file__).resolve().parents[1] / "docs"

# The gallery the documentation promises, one example per subject.
GALLERY = {
    "plot_playtennis.py": "CategoricalNB",
    "plot_generative_vs_discriminative.py": "GaussianNB",
    "plot_mixture_covariance_prior.py": "GaussianMixture",
    "plot_mixture_bic.py": "select_mixture",
    "plot_dishonest_casino.py": "CategoricalHMM",
    "plot_flu_network.py": "flu_network",
    "plot_earthquakes_poisson_hmm.py": "load_earthquakes",
    "plot_wine_mixture.py": "select_mixture",
    "plot_semi_supervised_nb.py": "MultinomialNB",
    "plot_dask_mixture.py": "GaussianMixture",
    "plot_mixture_displays.py": "MixtureEllipsesDisplay",
    "plot_hmm_displays.py": "StateSequenceDisplay",
    "plot_network_displays.py": "NetworkDisplay",
    "plot_classifier_displays.py": "DecisionRegionDisplay",
    "plot_kalman_tracking.py": "LinearGaussianSSM",
    "plot_markov_chain_code_or_prose.py": "MarkovChainClassifier",
    "plot_membrane_ar_hmm.py": "ARGaussianHMM",
    "plot_volume_driven_regimes.py": "InputOutputHMM",
}


def _autosummary_entries() -> dict[str, set[str]]:
    """Names listed under autosummary in docs/api.rst, by current module."""
    entries: dict[str, set[str]] = {}
    module = None
    in_summary = False
    for line in (DOCS / "api.rst").read_text().splitlines():
        if m := re.match(r"\.\. currentmodule:: (\S+)", line):
            module = m.group(1)
        elif line.startswith(".. autosummary::"):
            in_summary = True
        elif in_summary and re.match(r"   \w", line):
            entries.setdefault(module, set()).add(line.strip())
        elif line and not line.startswith(" "):
            in_summary = False
    return entries


@pytest.mark.parametrize(
    "module", [bayeskit, bayeskit.graph, bayeskit.datasets, bayeskit.plot]
)
def test_api_reference_lists_every_public_name(module):
    public = {name for name in module.__all__ if not name.startswith("__")}
    listed = _autosummary_entries().get(module.__name__, set())
    assert public - listed == set(), "missing from docs/api.rst"
    assert listed - public == set(), "not public, yet in docs/api.rst"


@pytest.mark.parametrize(("filename", "name"), sorted(GALLERY.items()))
def test_gallery_example_exists_and_is_a_sphinx_gallery_script(filename, name):
    path = DOCS / "examples" / filename
    tree = ast.parse(path.read_text())
    title = ast.get_docstring(tree).splitlines()
    assert title[1] == "=" * len(title[0]), "the docstring opens with an rst title"
    source = path.read_text()
    assert name in source
    assert "plt.show()" in source, "every example draws at least one figure"
