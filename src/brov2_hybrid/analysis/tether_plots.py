"""The tether free-float figure (seed 003 Figs. 8-10): the 3-D path of the vehicle and the cable,
the cross-sections down-north and down-east, and the tether's pull over time.

NED [m] from the base, drawn with down pointing down; newtons.
"""
import numpy as np

from brov2_hybrid.figures import plt, save_figure


def plot_free_float(run, case, path):
    """Draw ``run`` (:func:`brov2_hybrid.analysis.tether_experiment.fly`) of ``case``; returns ``path``."""
    track, force, snapshots = run["path"], run["force"], run["snapshots"]
    fig = plt.figure(figsize=(13, 8))
    ax = fig.add_subplot(2, 2, 1, projection="3d")
    for t, nodes in snapshots:
        ax.plot(nodes[:, 0], nodes[:, 1], -nodes[:, 2], color="0.5", lw=0.8)
    ax.plot(track[:, 1], track[:, 2], -track[:, 3], color="C0", lw=1.5, label="vehicle")
    ax.scatter(*case.seed_snapshot_ned_m[:2], -case.seed_snapshot_ned_m[2], color="C3", marker="s",
               label="seed 003 Fig. 8 position")
    ax.set_xlabel("north [m]")
    ax.set_ylabel("east [m]")
    ax.set_zlabel("up [m]")
    ax.set_title("vehicle path and the tether every %.0f s" % case.snapshot_period_s)
    ax.legend(loc="upper left", fontsize=8)
    for column, (axis, label) in enumerate(((1, "north"), (2, "east"))):
        ax2 = fig.add_subplot(2, 4, 3 + column)
        for t, nodes in snapshots:
            ax2.plot(nodes[:, axis - 1], nodes[:, 2], color="0.6", lw=0.8)
        ax2.plot(track[:, axis], track[:, 3], color="C0", lw=1.5)
        ax2.plot(case.seed_snapshot_ned_m[axis - 1], case.seed_snapshot_ned_m[2], "s", color="C3")
        ax2.invert_yaxis()
        ax2.set_xlabel("%s [m]" % label)
        ax2.set_ylabel("down [m]")
        ax2.set_title("down-%s (Fig. 10)" % label)
        ax2.grid(True, alpha=0.3)
    ax3 = fig.add_subplot(2, 1, 2)
    for k, name in enumerate(("north", "east", "down")):
        ax3.plot(force[:, 0], force[:, 1 + k], label="F %s" % name)
    ax3.plot(force[:, 0], np.linalg.norm(force[:, 1:4], axis=1), "k--", lw=0.8, label="|F|")
    ax3.set_xlabel("t [s]")
    ax3.set_ylabel("tether pull on the vehicle [N] (NED)")
    ax3.set_title("tether force (Fig. 9): %d segments, dt %.4f s" % (run["segments"], run["dt_s"]))
    ax3.grid(True, alpha=0.3)
    ax3.legend(fontsize=8)
    return save_figure(fig, path)
