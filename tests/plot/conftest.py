import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


@pytest.fixture(autouse=True)
def _close_figures():
    """Every test's figures are closed after it (no pile-up of open figures)."""
    import matplotlib.pyplot as plt

    yield
    plt.close("all")
