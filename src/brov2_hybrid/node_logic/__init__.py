"""The ROS nodes' own logic, kept free of rospy so that pytest covers it.

Holds the autopilot's safety modes (:mod:`~brov2_hybrid.node_logic.autopilot_safety`), the
mission sequence (:mod:`~brov2_hybrid.node_logic.mission`; what it exchanges with ROS in
:mod:`~brov2_hybrid.node_logic.mission_io`, its exit codes in
:mod:`~brov2_hybrid.node_logic.exit_codes`), node parameters
(:mod:`~brov2_hybrid.node_logic.node_params`), respawn watch
(:mod:`~brov2_hybrid.node_logic.peer_watch`), message rates
(:mod:`~brov2_hybrid.node_logic.rate_meter`), the recent ticks for a restarted logger
(:mod:`~brov2_hybrid.node_logic.status_history`), the control-tick log
(:mod:`~brov2_hybrid.node_logic.logfile`), soak-test statistics
(:mod:`~brov2_hybrid.node_logic.soak_stats`) and the nodes' shared ``main()``
(:mod:`~brov2_hybrid.node_logic.run_node`, which alone imports rospy, inside its function).

No re-exports: import each module by its full path (e.g. ``brov2_hybrid.node_logic.autopilot_safety``).
"""
