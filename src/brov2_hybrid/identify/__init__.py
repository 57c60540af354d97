"""Identification of the user's own vehicle (docs/identification.md).

:mod:`~brov2_hybrid.identify.schedule` the excitation per axis, :mod:`~brov2_hybrid.identify.flight`
flying it in the in-process loop, :mod:`~brov2_hybrid.identify.fit` the least-squares fits,
:mod:`~brov2_hybrid.identify.model` the vehicle file they give, :mod:`~brov2_hybrid.identify.run`
the ``brov2-analyze identify`` command.
"""
