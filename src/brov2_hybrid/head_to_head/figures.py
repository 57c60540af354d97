"""The head-to-head's figures: IAE against motor effort, one panel per axis (and their sum), one
figure per dive; each point a median over its flights with bars from the smallest to the largest."""
from brov2_hybrid.analysis.context import AXES
from brov2_hybrid.figures import plt, save_figure

#: Marker per placement: where the law runs.
MARKERS = {"ardusub": "s", "tether": "o", "realistic": "v", "onboard": "^"}


def iae_effort_figure(path, points, dive, estimate=False):
    """Write the IAE-vs-effort figure of ``dive`` (points of :func:`~.scoring.points`) to ``path``:
    panels roll, pitch, yaw and the sum; true attitude (``estimate`` False) or ArduSub's estimate."""
    kind = "est" if estimate else "true"
    mine = [p for p in points if p["dive"] == dive]
    fig, axes = plt.subplots(1, 4, figsize=(15, 3.8))
    for ax, axis in zip(axes, AXES + ("sum",)):
        key = "iae_%s_%s" % (kind, axis)
        for p in mine:
            x, y = p["effort_s"], p[key]
            ax.errorbar([x], [y], xerr=[[x - p["effort_s_min"]], [p["effort_s_max"] - x]],
                        yerr=[[y - p[key + "_min"]], [p[key + "_max"] - y]], fmt=MARKERS.get(p["placement"], "x"),
                        ms=6, capsize=2, label="%s %s: %s" % (p["pilot"], p["placement"], p["setting"]))
        ax.set_title("%s (%s attitude)" % (axis, "ArduSub's estimated" if estimate else "true"))
        ax.set_xlabel("motor effort [s]")
        ax.set_ylabel("IAE [deg s]")
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=6)
    fig.suptitle("%s: median of the flights, bars min..max" % dive, fontsize=9)
    save_figure(fig, path)
    return path
