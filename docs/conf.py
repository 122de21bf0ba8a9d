"""Sphinx configuration of the bayeskit documentation.

Build it from the repository's top level with warnings as errors, as CI does::

    pip install ".[docs]"
    python -m sphinx -W --keep-going -b html docs docs/_build/html

The gallery (``docs/examples/plot_*.py``) is executed during the build and its
output, with the figures, is written to ``docs/auto_examples/``; autosummary
writes the API pages to ``docs/generated/``. Both are generated, not committed.
"""

import importlib.util
import os
import sys

# The gallery's models are small: one BLAS thread is the fastest, and it keeps the
# build from oversubscribing a shared machine. Set before numpy is first imported.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
# Figures are drawn off screen.
os.environ.setdefault("MPLBACKEND", "agg")

# Document the source tree beside this file, installed or not.
sys.path.insert(0, os.path.abspath(".."))

import bayeskit  # noqa: E402

project = "bayeskit"
author = "The bayeskit developers"
copyright = "the bayeskit developers"
release = bayeskit.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

# -- Formulas, offline ------------------------------------------------------
# MathJax renders the formulas in the reader's browser. The PyPI package
# sphinx-mathjax-offline ships MathJax 3 (its CHTML output with the fonts) and
# copies it into _static/mathjax, so the pages need no network; without it,
# sphinx.ext.mathjax loads MathJax from a CDN. (imgmath, rendering at build
# time, needs LaTeX and dvipng on the build machine.)
if importlib.util.find_spec("sphinx-mathjax-offline") is not None:
    extensions.append("sphinx-mathjax-offline")

templates_path = ["_templates"]
# examples/ holds the gallery sources: sphinx-gallery reads them, Sphinx does not.
exclude_patterns = ["_build", "examples", "Thumbs.db", ".DS_Store"]

# -- API reference ----------------------------------------------------------
autosummary_generate = True
autodoc_typehints = "none"  # types are in the numpydoc "Parameters" sections
autodoc_member_order = "groupwise"
numpydoc_show_class_members = False  # the class template lists the members
numpydoc_class_members_toctree = False


def _skip_scikit_learn_members(app, what, name, obj, skip, options):
    """Leave out what scikit-learn's base classes add (``get_params``,
    ``set_fit_request``, ...): it is documented by scikit-learn."""
    module = getattr(obj, "__module__", None) or ""
    if module.split(".")[0] == "sklearn":
        return True
    return skip


def setup(app):
    app.connect("autodoc-skip-member", _skip_scikit_learn_members)


# -- Gallery ----------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "doc_module": ("bayeskit",),
    "backreferences_dir": "generated/backreferences",
    "reference_url": {"bayeskit": None},
    "download_all_examples": False,
    "remove_config_comments": True,
    "show_memory": False,
    # The execution-times pages (sg_execution_times) load DataTables and
    # Bootstrap from CDNs: leave them out, so the built pages need no network.
    "write_computation_times": False,
}

# -- HTML -------------------------------------------------------------------
html_theme = "alabaster"
html_theme_options = {
    "description": "Generative Bayesian models that drop into scikit-learn",
    "fixed_sidebar": True,
    # Room for a code line of 88 characters (ruff's line length) beside the
    # sidebar; _static/custom.css narrows the code blocks' padding to match.
    "page_width": "1120px",
    "body_max_width": "none",
    "code_font_size": "0.85em",
}
html_static_path = ["_static"]

# Type hints resolved by autodoc name the module where a class is defined:
# the graph's one posterior type is documented as bayeskit.graph.Posterior.
nitpick_ignore = [("py:class", "bayeskit.graph.tree.Posterior")]
