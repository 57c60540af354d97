"""Where the pilot's commands come from.

Holds the dive CSV schema (:mod:`~brov2_hybrid.dive.dive_csv`), playback of a dive CSV or bag
(:mod:`~brov2_hybrid.dive.playback`) and live pilot input, joystick or AR headset:
its settings (:mod:`~brov2_hybrid.dive.pilot_settings`), stick shaping
(:mod:`~brov2_hybrid.dive.stick_shaping`), sticks/headset to desired state with deadman
and takeover (:mod:`~brov2_hybrid.dive.pilot_input`), the control law's side of the
takeover (:mod:`~brov2_hybrid.dive.pilot_takeover`) and the Linux ``/dev/input/js*``
record parser (:mod:`~brov2_hybrid.dive.js_event`).

No re-exports: import each module by its full path (e.g. ``brov2_hybrid.dive.dive_csv``).
"""
