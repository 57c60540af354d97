"""The live pilot: a joystick or an AR headset flying the vehicle.

Its settings (:mod:`~brov2_hybrid.pilot.settings`, ``params/joystick.yaml``), stick shaping
(:mod:`~brov2_hybrid.pilot.stick_shaping`), sticks/headset to desired state with deadman and
takeover (:mod:`~brov2_hybrid.pilot.live_input`), the control law's side of the takeover
(:mod:`~brov2_hybrid.pilot.takeover`) and the Linux ``/dev/input/js*`` record parser
(:mod:`~brov2_hybrid.pilot.js_event`). Recorded and planned dives are in :mod:`brov2_hybrid.dive`.

No re-exports: import each module by its full path (e.g. ``brov2_hybrid.pilot.live_input``).
"""
