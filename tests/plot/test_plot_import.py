"""matplotlib is imported by the first drawing, never by ``import bayeskit``
(nor ``import bayeskit.plot``); without it a drawing names the ``plot`` extra.
Each check runs in a fresh interpreter."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(code, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_import_bayeskit_and_its_plot_module_load_no_matplotlib(tmp_path):
    out = run(
        "import json, sys\n"
        "import bayeskit\n"
        "a = 'matplotlib' in sys.modules\n"
        "import bayeskit.plot\n"
        "b = 'matplotlib' in sys.modules\n"
        "from bayeskit.datasets import flu_network\n"
        "flu_network()._repr_html_()\n"  # the notebook display needs none either
        "c = 'matplotlib' in sys.modules\n"
        "print(json.dumps([a, b, c]))\n",
        tmp_path,
    )
    assert out == [False, False, False]


def test_without_matplotlib_a_drawing_names_the_plot_extra(tmp_path):
    out = run(
        "import json, sys\n"
        "sys.modules['matplotlib'] = None  # as if not installed\n"
        "sys.modules['matplotlib.pyplot'] = None\n"
        "from bayeskit.datasets import flu_network\n"
        "from bayeskit.plot import NetworkDisplay\n"
        "try:\n"
        "    NetworkDisplay.from_estimator(flu_network())\n"
        "    msg = None\n"
        "except ImportError as exc:\n"
        "    msg = str(exc)\n"
        "print(json.dumps(msg))\n",
        tmp_path,
    )
    assert "bayeskit[plot]" in out and "NetworkDisplay" in out
