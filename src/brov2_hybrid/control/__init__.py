"""The control law and what feeds it.

Holds the law tau_4:6 with buoyancy feed-forward and
:class:`~brov2_hybrid.control.law.HybridController` (:mod:`~brov2_hybrid.control.law`, paper Eq.
18/24), the PD gains from omega_d (:mod:`~brov2_hybrid.control.gains`, App. B), the optional
integral action (:mod:`~brov2_hybrid.control.integral_action`), the desired-rate estimate
(:mod:`~brov2_hybrid.control.rate_estimate`) and the live-tunable settings between
dynamic_reconfigure and the controller (:mod:`~brov2_hybrid.control.live_settings`), the depth
hold (:mod:`~brov2_hybrid.control.depth_hold`), the compiled kernels of the law
(:mod:`~brov2_hybrid.control.law_kernels`) and control_law's safety modes around the law
(:mod:`~brov2_hybrid.control.autopilot_safety`).

No re-exports: import each module by its full path (e.g. ``brov2_hybrid.control.law``).
"""
