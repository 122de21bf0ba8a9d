import pytest


@pytest.fixture
def sync():
    """Run Dask graphs in this thread (the fits here are small)."""
    import dask

    with dask.config.set(scheduler="synchronous"):
        yield
