"""Where the pilot's commands come from.

Holds the dive CSV schema (:mod:`~brov2_hybrid.dive.dive_csv`), playback of a dive CSV or bag
(:mod:`~brov2_hybrid.dive.playback`) and live pilot input, joystick or AR headset
(:mod:`~brov2_hybrid.dive.pilot_input`).

No re-exports: import each module by its full path (e.g. ``brov2_hybrid.dive.dive_csv``).
"""
