"""Where the attitude law runs (launch argument ``placement``; docs/onboard.md "Flying it from ROS").

``topside``: control_law -> thruster_allocation -> RC override; ``onboard``: the Lua script inside
ArduSub (:mod:`brov2_hybrid.onboard`), the topside sending the desired state down.
"""

#: The placements, the default first.
PLACEMENTS = ("topside", "onboard")
