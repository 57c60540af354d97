"""Reproduction of the paper's experiments: fast in-process closed loop, metrics, LTI
predictions, sweeps, plots and the report (``brov2-analyze``; paper Sec. 3, 5, App. C).

Modules: :mod:`settings` (params/analysis.yaml), :mod:`closed_loop`, :mod:`metrics`,
:mod:`lti`, :mod:`sysid`, :mod:`experiments`, :mod:`plots`, :mod:`report`, :mod:`cli`,
:mod:`bench`, :mod:`synth_dive`.
"""
