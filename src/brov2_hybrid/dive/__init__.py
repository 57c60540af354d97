"""Recorded and planned dives: where the desired attitude comes from when no pilot flies live.

Holds the dive CSV schema (:mod:`~brov2_hybrid.dive.dive_csv`), playback of a dive CSV or bag
(:mod:`~brov2_hybrid.dive.playback`) and dives built in code (:mod:`~brov2_hybrid.dive.shapes`).
The live pilot (joystick, headset) is :mod:`brov2_hybrid.pilot`.

No re-exports: import each module by its full path (e.g. ``brov2_hybrid.dive.dive_csv``).
"""
