"""The control-tick log: one row per control tick.

Its columns, writer and reader (:mod:`~brov2_hybrid.tick_log.logfile`), where each group of
values sits in a numeric row (:mod:`~brov2_hybrid.tick_log.columns`) and control_law's recent
ticks, from which a restarted logger fills its gap (:mod:`~brov2_hybrid.tick_log.status_history`).

No re-exports: import each module by its full path (e.g. ``brov2_hybrid.tick_log.logfile``).
"""
