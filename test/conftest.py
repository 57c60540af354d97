"""Shared pytest fixtures: the vehicle (the default vehicle file) loaded once from params/."""
import os
import sys

import pytest
from hypothesis import settings

# Seeded property tests: the same examples on every run and machine, no example database.
settings.register_profile("brov2", derandomize=True, database=None, deadline=None)
settings.load_profile("brov2")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from brov2_hybrid.vehicle.vehicle_file import load_vehicle  # noqa: E402
from brov2_hybrid.params import load_controller_params  # noqa: E402


@pytest.fixture(scope="session")
def vehicle():
    return load_vehicle()


@pytest.fixture(scope="session")
def controller_params():
    return load_controller_params()


@pytest.fixture(scope="session")
def ardusub_binary():
    """The ArduSub SITL build's path (scripts/build_ardusub.sh); without one the test is skipped, or
    fails when ``BROV2_REQUIRE_ARDUSUB=1`` (CI: a real-ArduSub test must not pass by skipping)."""
    from brov2_hybrid.errors import Brov2Error
    from brov2_hybrid.sim.ardusub_sitl import find_ardusub
    try:
        return find_ardusub()
    except Brov2Error as exc:
        if os.environ.get("BROV2_REQUIRE_ARDUSUB") == "1":
            pytest.fail("BROV2_REQUIRE_ARDUSUB=1 but %s" % exc)
        pytest.skip("real ArduSub tests: %s" % exc)
