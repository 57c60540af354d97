"""How REPORT.md, the console and the JSON summaries write numbers (shared by the report's modules)."""
import math

import numpy as np


def fmt(x, pattern="%.2f"):
    """``pattern % x``, or "n/a" for None / NaN / infinity."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "n/a"
    return pattern % x


def jsonable(obj):
    """Summaries without numpy arrays / NaN, for JSON."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, (np.floating, float)):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, np.integer):
        return int(obj)
    return obj


def index_at(summary, w):
    """Index of omega_d ``w`` in ``summary["omega_d"]`` (None if absent)."""
    for k, x in enumerate(summary["omega_d"]):
        if abs(x - w) < 1e-9:
            return k
    return None


def image(name):
    """Markdown image of a figure written beside REPORT.md."""
    return "![%s](%s)" % (name, name)
