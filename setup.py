"""Python package setup for catkin (catkin_python_setup); do not run it by hand."""
import os

from setuptools import setup
from catkin_pkg.python_setup import generate_distutils_setup

_HERE = os.path.dirname(os.path.abspath(__file__))
# The core package and its subpackages; a subpackage not written yet is left out
# so that the workspace still builds while the code is being written.
_PACKAGES = [
    'brov2_hybrid',
    'brov2_hybrid.sim',
    'brov2_hybrid.analysis',
    'brov2_hybrid.control',
    'brov2_hybrid.physics',
    'brov2_hybrid.vehicle',
    'brov2_hybrid.link',
    'brov2_hybrid.dive',
    'brov2_hybrid.pilot',
    'brov2_hybrid.mission',
    'brov2_hybrid.tick_log',
    'brov2_hybrid.loop',
    'brov2_hybrid.node_logic',
    'brov2_hybrid.identify',
    'brov2_hybrid.viz',
    'brov2_hybrid.bench',
    'brov2_hybrid.onboard',
    'brov2_hybrid.head_to_head',
]

setup_args = generate_distutils_setup(
    packages=[
        name for name in _PACKAGES
        if os.path.isfile(os.path.join(_HERE, 'src', *name.split('.'), '__init__.py'))
    ],
    package_dir={'': 'src'},
    # the on-board Lua script's template (brov2_hybrid.onboard.lua_script)
    package_data={'brov2_hybrid.onboard': ['*.lua.template']},
)

setup(**setup_args)
