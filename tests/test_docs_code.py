"""Every Python code block of the README and of the user guide runs.

The blocks of one page run in order in one namespace, as a reader would type
them, and a page fails on the first exception. Blocks are:

- README.md: fenced ```python blocks;
- docs/*.rst: ``.. code-block:: python`` (or ``python3``, ``py``) directives,
  doctest blocks (``>>>`` lines, run as their source; the printed output is
  not compared), and ``::`` literal blocks that parse as Python (Sphinx
  highlights those as Python; a literal block that does not parse, such as a
  diagram, is text). Console and shell blocks never run.

The gallery (docs/examples) is executed by the Sphinx build, not here.
"""

import ast
import re
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

PYTHON_LANGUAGES = {"python", "python3", "py", "pycon"}


def readme_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def _indented_body(lines: list[str], start: int) -> tuple[str, int]:
    """The indented block that starts after line ``start`` (options skipped)."""
    i = start + 1
    # Directive options (":linenos:" ...) directly under the directive.
    while i < len(lines) and re.match(r"^\s+:\w[\w-]*:", lines[i]):
        i += 1
    body = []
    indent = None
    while i < len(lines):
        line = lines[i]
        if line.strip():
            width = len(line) - len(line.lstrip())
            if indent is None:
                base = len(lines[start]) - len(lines[start].lstrip())
                if width <= base:
                    break
                indent = width
            elif width < indent:
                break
        body.append(line)
        i += 1
    return textwrap.dedent("\n".join(body)).strip("\n") + "\n", i


def _doctest_source(block: str) -> str:
    """The source of the ``>>>`` / ``...`` lines of a doctest block."""
    source = []
    for line in block.splitlines():
        stripped = line.strip()
        if stripped.startswith(">>>") or stripped.startswith("..."):
            source.append(stripped[4:])
    return "\n".join(source) + "\n"


def _parses(source: str) -> bool:
    try:
        ast.parse(source)
    except SyntaxError:
        return False
    return True


def rst_blocks(text: str) -> list[str]:
    """The Python blocks of an rst page, in order."""
    lines = text.splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        line = lines[i]
        directive = re.match(r"^\s*\.\. (?:code-block|code|sourcecode)::\s*(\S*)", line)
        if directive:
            body, i = _indented_body(lines, i)
            language = directive.group(1).lower()
            if language in PYTHON_LANGUAGES:
                if body.lstrip().startswith(">>>"):
                    body = _doctest_source(body)
                blocks.append(body)
            continue
        if line.strip().startswith(">>>"):
            start = i
            while i < len(lines) and lines[i].strip():
                i += 1
            blocks.append(_doctest_source("\n".join(lines[start:i])))
            continue
        if line.rstrip().endswith("::") and not line.lstrip().startswith(".."):
            body, i = _indented_body(lines, i)
            if body.strip() and _parses(body):
                blocks.append(body)
            continue
        i += 1
    return blocks


def _pages():
    pages = {"README.md": readme_blocks((ROOT / "README.md").read_text())}
    for path in sorted(DOCS.glob("*.rst")):
        blocks = rst_blocks(path.read_text())
        if blocks:
            pages[f"docs/{path.name}"] = blocks
    return pages


PAGES = _pages()


def test_the_pages_with_code_are_found():
    # A change to the extraction that silently finds nothing fails here.
    for page in (
        "README.md",
        "docs/getting_started.rst",
        "docs/migrating_sklearn.rst",
        "docs/migrating_hmmlearn.rst",
        "docs/migrating_pgmpy.rst",
        "docs/bayesnet.rst",
        "docs/naive_bayes.rst",
        "docs/hmm.rst",
        "docs/statistics.rst",
    ):
        assert PAGES.get(page), f"no Python block found in {page}"


# Languages of code blocks that are not Python, so never run.
NOT_PYTHON = {"console", "bash", "shell", "sh", "text", "none", "ini", "toml", "rst"}

# Literal (``::``) blocks that are text, not Python: the diagrams, by first line.
DIAGRAMS = {"a discrete latent structure  x  an emission family  x  a prior"}


def test_every_code_block_runs_or_is_declared_not_python():
    """A block skipped is skipped on purpose: a code block in a language
    neither Python nor a known shell/text one (a typo such as ``pyhton``), or a
    literal block that does not parse and is not a known diagram (Python with
    a syntax error), fails here instead of being left out in silence."""
    pages = [ROOT / "README.md", *sorted(DOCS.glob("*.rst"))]
    for path in pages:
        text = path.read_text()
        if path.suffix == ".md":
            for language in re.findall(r"^```(\S*)", text, flags=re.M):
                # Only ```python blocks run (readme_blocks); a closing fence
                # has no language.
                assert not language or language in {"python"} | NOT_PYTHON, (
                    f"{path.name}: code block in {language!r}"
                )
            continue
        lines = text.splitlines()
        for i, line in enumerate(lines):
            directive = re.match(
                r"^\s*\.\. (?:code-block|code|sourcecode)::\s*(\S*)", line
            )
            if directive:
                language = directive.group(1).lower()
                assert language in PYTHON_LANGUAGES | NOT_PYTHON, (
                    f"{path.name}, line {i + 1}: code block in {language!r}"
                )
            elif line.rstrip().endswith("::") and not line.lstrip().startswith(".."):
                body, _ = _indented_body(lines, i)
                if body.strip() and not _parses(body):
                    first = body.strip().splitlines()[0].strip()
                    assert first in DIAGRAMS, (
                        f"{path.name}, line {i + 1}: a literal block that is not "
                        f"Python and not a known diagram: {first!r}"
                    )


def test_extraction_of_each_rst_block_form():
    text = textwrap.dedent(
        """\
        Title
        =====

        .. code-block:: python
           :caption: one

           a = 1

        A diagram::

           x  ->  y

        A literal block::

           b = a + 1

        >>> c = b + 1
        >>> c
        3

        .. code-block:: console

           $ pip install bayeskit
        """
    )
    assert rst_blocks(text) == ["a = 1\n", "b = a + 1\n", "c = b + 1\nc\n"]


@pytest.mark.parametrize("page", sorted(PAGES))
def test_code_blocks_run(page, tmp_path, monkeypatch):
    # Figures, if any, are drawn off screen; files, if any, land in tmp_path.
    monkeypatch.setenv("MPLBACKEND", "agg")
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "docs_" + re.sub(r"\W", "_", page)}
    for number, block in enumerate(PAGES[page], start=1):
        code = compile(block, f"{page} block {number}", "exec")
        try:
            exec(code, namespace)
        except Exception as exc:
            raise AssertionError(
                f"{page}, Python block {number} fails:\n\n{block}"
            ) from exc
