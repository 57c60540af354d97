"""What every ROS node shares, kept free of rospy so that pytest covers it.

Node parameters (:mod:`~brov2_hybrid.node_logic.node_params`), message rates
(:mod:`~brov2_hybrid.node_logic.rate_meter`), soak-test statistics
(:mod:`~brov2_hybrid.node_logic.soak_stats`) and the nodes' shared ``main()``
(:mod:`~brov2_hybrid.node_logic.run_node`, which alone imports rospy, inside its function).
A node's own logic lives in the room of its concept: :mod:`brov2_hybrid.control`
(control_law, with its safety modes), :mod:`brov2_hybrid.mission`, :mod:`brov2_hybrid.tick_log`
(logger), :mod:`brov2_hybrid.link` (the bridge), :mod:`brov2_hybrid.pilot` (joystick, headset).

No re-exports: import each module by its full path (e.g. ``brov2_hybrid.node_logic.node_params``).
"""
