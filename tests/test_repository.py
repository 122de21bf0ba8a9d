"""The repository keeps its promises: quick start and CI agree, layers point down."""

import ast
import re
from pathlib import Path

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


def test_quick_start_runs_the_compare_tool_first():
    first = quick_start_commands()[0]
    assert first == "pip install . && python -m bayeskit compare"
    from bayeskit.__main__ import _parser

    args = _parser().parse_args(first.split("python -m bayeskit ", 1)[1].split())
    assert args.command == "compare"


def test_graph_core_imports_no_estimator():
    allowed = {"bayeskit._jit", "bayeskit._logmath", "bayeskit.graph"}
    for path in (ROOT / "bayeskit" / "graph").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level == 1:
                    continue  # a sibling module of bayeskit.graph
                target = "bayeskit." * (node.level == 2) + (node.module or "")
                if node.level == 2 or target.startswith("bayeskit"):
                    assert target in allowed, f"{path.name} imports {target}"
                assert not target.startswith("sklearn"), f"{path.name} imports sklearn"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    assert not alias.name.startswith(("bayeskit.", "sklearn")), (
                        f"{path.name} imports {alias.name}"
                    )


def test_demo_prints_exact_marginals():
    from bayeskit._demo import CPTS, demo_tables

    marginals, maps = demo_tables()
    p1 = CPTS["X1"][1][1]
    assert abs(marginals.loc["X1", "no evidence"] - p1) < 1e-12
    assert maps.loc["X3", "X3 = 0, X5 = 1"] == 0


def test_demo_playtennis_matches_the_notes():
    from bayeskit._demo import playtennis_table

    table = playtennis_table()
    assert abs(table.loc["Yes", "P(x, class)"] - 54 / 6561 * 9 / 14) < 1e-12
    assert round(table.loc["No", "P(class | x)"], 4) == 0.7954
