"""The repository keeps its promises: quick start and CI agree, layers point down."""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def quick_start_commands():
    text = (ROOT / "README.md").read_text()
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.*?)\n```", section, flags=re.S)


def test_quick_start_is_two_commands_and_ci_runs_the_test_one():
    commands = quick_start_commands()
    assert len(commands) == 2
    assert all("\n" not in c for c in commands)
    test_command = next(c for c in commands if "pytest" in c)
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test_command in ci_lines


def test_the_test_extra_installs_the_plugins_of_addopts():
    """python -m pytest reads setup.cfg's addopts: the README's test command
    installs the test extra and nothing else, so a plugin option there (-n,
    --dist: pytest-xdist) needs its plugin in that extra."""
    import configparser

    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    addopts = config["tool:pytest"]["addopts"].split()
    pyproject = (ROOT / "pyproject.toml").read_text()
    extra = re.search(r"^test = \[(.*?)^\]", pyproject, flags=re.S | re.M).group(1)
    names = set(re.findall(r'^\s*"([A-Za-z0-9_.-]+)', extra, flags=re.M))
    assert {"pytest", "hypothesis"} <= names
    if "-n" in addopts or any(a.startswith("--dist") for a in addopts):
        assert "pytest-xdist" in names


def test_quick_start_runs_the_compare_tool_first():
    first = quick_start_commands()[0]
    assert first == "pip install . && python -m bayeskit compare"
    from bayeskit.cli.main import _parser

    args = _parser().parse_args(first.split("python -m bayeskit ", 1)[1].split())
    assert args.command == "compare"


# What each lower layer may import of bayeskit (DESIGN.md, "Layers"): itself,
# the shared numerics, and for the emission families the priors their MAP
# updates apply. Never an estimator (models), the edges (cli, datasets,
# the Dask integration), scikit-learn or _validation, which wraps it.
LOWER_LAYERS = {
    # The statistics of the graph core carry an estimator's description of
    # what they are over as an opaque value (bayeskit._layout imports nothing
    # of bayeskit).
    "graph": {
        "bayeskit.graph",
        "bayeskit._jit",
        "bayeskit._layout",
        "bayeskit._logmath",
    },
    "emissions": {
        "bayeskit.emissions",
        "bayeskit._jit",
        "bayeskit._logmath",
        "bayeskit.priors",
    },
    "priors": {"bayeskit.priors", "bayeskit._logmath"},
}
FORBIDDEN_PACKAGES = ("sklearn", "dask", "distributed")


def imported_modules(path: Path):
    """The absolute name of every module that ``path`` imports, anywhere in it
    (relative imports resolved against the package of ``path``)."""
    package = ("bayeskit", *path.relative_to(ROOT / "bayeskit").parent.parts)
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                yield node.module
                continue
            base = ".".join(package[: len(package) - node.level + 1])
            if node.module:
                yield f"{base}.{node.module}"
            else:  # from .. import name: name may be a module
                yield from (f"{base}.{alias.name}" for alias in node.names)


def test_imported_modules_resolves_relative_imports():
    # A file of bayeskit/emissions with every form of import.
    path = ROOT / "bayeskit" / "emissions" / "categorical.py"
    found = set(imported_modules(path))
    assert "bayeskit.priors.dirichlet" in found
    assert "bayeskit.emissions._kernels" in found


@pytest.mark.parametrize("layer", sorted(LOWER_LAYERS))
def test_lower_layers_import_no_estimator(layer):
    allowed = LOWER_LAYERS[layer]
    paths = sorted((ROOT / "bayeskit" / layer).rglob("*.py"))
    assert paths
    for path in paths:
        name = path.relative_to(ROOT).as_posix()
        for module in imported_modules(path):
            if module == "bayeskit" or module.startswith("bayeskit."):
                assert any(
                    module == ok or module.startswith(ok + ".") for ok in allowed
                ), f"{name} imports {module}"
            assert module.split(".")[0] not in FORBIDDEN_PACKAGES, (
                f"{name} imports {module}"
            )


def test_demo_prints_exact_marginals():
    from bayeskit.cli.demo import CPTS, demo_tables

    marginals, maps = demo_tables()
    p1 = CPTS["X1"][1][1]
    assert abs(marginals.loc["X1", "no evidence"] - p1) < 1e-12
    assert maps.loc["X3", "X3 = 0, X5 = 1"] == 0


def test_demo_playtennis_matches_the_notes():
    from bayeskit.cli.demo import playtennis_table

    table = playtennis_table()
    assert abs(table.loc["Yes", "P(x, class)"] - 54 / 6561 * 9 / 14) < 1e-12
    assert round(table.loc["No", "P(class | x)"], 4) == 0.7954


EDGES = ("bayeskit.cli", "bayeskit.datasets", "bayeskit.io", "bayeskit._dask")

# The model families (layer 3) above their shared bases, as scikit-learn's and
# hmmlearn's module paths name them, and the only imports from one family into
# another: GMMHMM starts its mixtures as GaussianMixture does, and
# tree-augmented naive Bayes (a network over a Chow-Liu tree) is offered
# beside the other naive Bayes classifiers.
FAMILIES = ("naive_bayes", "discriminant_analysis", "mixture", "hmm", "lds", "network")
ACROSS_FAMILIES = {("hmm", "mixture"), ("naive_bayes", "network")}


def family_paths(*packages):
    paths = [
        path
        for package in packages
        for path in sorted((ROOT / "bayeskit" / package).rglob("*.py"))
    ]
    assert paths
    return paths


def test_estimators_import_no_edge_module():
    """The estimators (layer 3) reach the Dask integration only through the
    handlers registered in bayeskit._collections, and never import the command
    line, the bundled data or the file formats (DESIGN.md, "Layers")."""
    for path in family_paths("_base", *FAMILIES):
        name = path.relative_to(ROOT).as_posix()
        for module in imported_modules(path):
            assert not module.startswith(EDGES), f"{name} imports {module}"


def test_bases_import_no_family_and_families_only_declared_ones():
    for path in family_paths("_base", *FAMILIES):
        name = path.relative_to(ROOT).as_posix()
        here = path.relative_to(ROOT / "bayeskit").parts[0]
        for module in imported_modules(path):
            parts = module.split(".")
            if parts[0] != "bayeskit" or len(parts) < 2 or parts[1] not in FAMILIES:
                continue
            there = parts[1]
            if here == "_base":
                raise AssertionError(f"{name} (a shared base) imports {module}")
            assert there == here or (here, there) in ACROSS_FAMILIES, (
                f"{name} imports {module}"
            )


def test_every_family_reads_as_its_peers_module_path():
    import bayeskit
    from bayeskit import hmm
    from bayeskit.discriminant_analysis import LinearDiscriminantAnalysis
    from bayeskit.mixture import GaussianMixture
    from bayeskit.naive_bayes import MultinomialNB
    from bayeskit.network import BayesianNetwork

    assert hmm.GaussianHMM is bayeskit.GaussianHMM
    assert GaussianMixture is bayeskit.GaussianMixture
    assert MultinomialNB is bayeskit.MultinomialNB
    assert LinearDiscriminantAnalysis is bayeskit.LinearDiscriminantAnalysis
    assert BayesianNetwork is bayeskit.BayesianNetwork
    # every public estimator is reachable from exactly the family that holds it
    exported = {
        name for family in FAMILIES for name in getattr(bayeskit, family).__all__
    }
    public = {n for n in bayeskit.__all__ if n != "__version__"}
    assert public <= exported, sorted(public - exported)


# "No file over about 700 lines" (the layout's rule): a module that grows past
# this is split by what it does.
MAX_LINES = 750


def test_no_module_is_longer_than_the_layout_allows():
    long = {
        path.relative_to(ROOT).as_posix(): n
        for path in sorted((ROOT / "bayeskit").rglob("*.py"))
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert not long, long


def test_test_modules_have_unique_names():
    """pytest imports test modules by their basename (no __init__.py under
    tests/): two files of one name in different folders make a collection
    error on a clean checkout ("import file mismatch")."""
    names = {}
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        names.setdefault(path.name, []).append(path.relative_to(ROOT).as_posix())
    assert not {n: p for n, p in names.items() if len(p) > 1}


def test_the_dask_edge_asks_the_estimator_and_imports_no_family():
    """The Dask edge asks an estimator what it needs (its output's width and
    dtype, its encoded columns, its statistics' type, its state dimension)
    instead of importing its family to test its class, so a new estimator
    needs no edit there."""
    for path in family_paths("_dask"):
        name = path.relative_to(ROOT).as_posix()
        for module in imported_modules(path):
            parts = module.split(".")
            if parts[0] == "bayeskit" and len(parts) > 1:
                assert parts[1] not in FAMILIES, f"{name} imports {module}"
