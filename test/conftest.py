"""Shared pytest fixtures: the vehicle set-up loaded once from params/."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from brov2_hybrid.model import load_setup  # noqa: E402
from brov2_hybrid.params import load_controller_params  # noqa: E402


@pytest.fixture(scope="session")
def setup():
    return load_setup()


@pytest.fixture(scope="session")
def controller_params():
    return load_controller_params()
