"""The link to ArduSub: MAVLink, MAVROS and the RC override.

Holds stock ArduSub / MAVLink facts (:mod:`~brov2_hybrid.link.ardusub`), the MAVLink bridge's
ROS-free logic -- its connection (:mod:`~brov2_hybrid.link.mavlink_connection`), what each
received message does (:mod:`~brov2_hybrid.link.fcu_messages`), what it sends and the
services' replies (:mod:`~brov2_hybrid.link.fcu_commands`), message conversions
(:mod:`~brov2_hybrid.link.mavros_conversions`), stream
requests (:mod:`~brov2_hybrid.link.stream_requests`), the link state machine, signing
handshake and reply waits (:mod:`~brov2_hybrid.link.link_state`), the FCU clock
(:mod:`~brov2_hybrid.link.fcu_clock`) and override sending
(:mod:`~brov2_hybrid.link.override_sender`) -- and its settings
(:mod:`~brov2_hybrid.link.bridge_settings`), MAVLink 2 signing
(:mod:`~brov2_hybrid.link.mavlink_signing`), FCU addresses
(:mod:`~brov2_hybrid.link.fcu_address`), depth from MAVROS
(:mod:`~brov2_hybrid.link.mavros_depth`) and whether the RC override reaches the vehicle
(:mod:`~brov2_hybrid.link.override`).

No re-exports: import each module by its full path (e.g. ``brov2_hybrid.link.ardusub``).
"""
