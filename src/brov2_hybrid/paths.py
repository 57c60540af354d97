"""Locations of the package's data files (params/, test data) without ROS.

The package root is found from ``BROV2_HYBRID_ROOT`` when set, else relative to this
file (``src/brov2_hybrid/`` inside the repository / catkin source space).
"""
import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def package_root():
    """Return the absolute path of the brov2_hybrid package root (holds params/)."""
    env = os.environ.get("BROV2_HYBRID_ROOT")
    if env:
        return os.path.abspath(env)
    return os.path.abspath(os.path.join(_HERE, "..", ".."))


def params_path(*parts):
    """Return the path of a file under the package's ``params/`` folder."""
    return os.path.join(package_root(), "params", *parts)
