"""The head-to-head: the hybrid autopilot against tuned ArduSub on real ArduSub SITL (``brov2-analyze
head-to-head``, docs/experiments.md "Head-to-head with tuned ArduSub").

This room builds on :mod:`brov2_hybrid.analysis` (the ArduSub flight API, its pilots and metrics);
analysis/ reaches it only by module name (``analysis.cli`` and ``analysis.doc_tables`` import it with
importlib), so the rooms stand in layers. The subpackage re-exports nothing.
"""
