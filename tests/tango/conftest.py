"""pytest fixtures of tests/tango: `served`, a maker of Served (serve_fixtures.py) runs of weir with a
tango "serve" part, each killed and its arena removed when the test ends."""
import shutil
import tempfile

import pytest

from serve_fixtures import Served


@pytest.fixture
def served():
    workdir = tempfile.mkdtemp(prefix="weir-tango-")
    made = []

    def make(**kw):
        s = Served(workdir, **kw)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()
    shutil.rmtree(workdir, ignore_errors=True)
