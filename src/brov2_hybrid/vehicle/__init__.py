"""One vehicle and how a command reaches its thrusters.

Holds one vehicle file -> one ``Vehicle`` (:mod:`~brov2_hybrid.vehicle.vehicle_file`), thruster
allocation and the registered allocators (:mod:`~brov2_hybrid.vehicle.allocation`,
:mod:`~brov2_hybrid.vehicle.saturating_allocation`), ArduSub's mixers, Algorithms 1 and 2
(:mod:`~brov2_hybrid.vehicle.mixers`), the T200 thrust table
(:mod:`~brov2_hybrid.vehicle.thrust_table`), u <-> RC channels (:mod:`~brov2_hybrid.vehicle.rc`)
and the firmware output stages (:mod:`~brov2_hybrid.vehicle.firmware_output`).

No re-exports: import each module by its full path (e.g. ``brov2_hybrid.vehicle.vehicle_file``).
"""
