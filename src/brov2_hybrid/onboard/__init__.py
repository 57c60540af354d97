"""The hybrid on board: the law and Algorithm 2 as a Lua script inside stock ArduSub (docs/onboard.md).

``lua_script`` writes the script from the vehicle file, controller.yaml and onboard.yaml;
``python -m brov2_hybrid.onboard`` is its command line.
"""
