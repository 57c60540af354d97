"""Reproduction of the paper's experiments on the in-process closed loop (:mod:`brov2_hybrid.loop`):
metrics, LTI predictions, sweeps, plots and the report (``brov2-analyze``; paper Sec. 3, 5, App. C).

Modules: :mod:`settings` (params/analysis.yaml), :mod:`metrics`,
:mod:`lti`, :mod:`sysid`, :mod:`plots`, :mod:`cli`, :mod:`synth_dive`.
Experiments: :mod:`context` (where they run, CSV writing), :mod:`jobs` (the worker runs),
:mod:`step_experiments` (step, latency, compare-models), :mod:`bode_experiment`,
:mod:`dive_experiment`, :mod:`model_experiments` (sysid, gains, trim),
:mod:`firmware_experiment`, :mod:`integral`, :mod:`robustness`; :mod:`log_summary` (IAE /
energy of any log; :mod:`run_summary` for ``make run``). REPORT.md: :mod:`report` (its checks
in :mod:`report_checks`, sections in :mod:`report_sections`, number formats in
:mod:`report_format`); terminal lines: :mod:`console_summary`.
"""
