"""matplotlib for the package's PNG figures: the Agg backend (no display needed), one DPI, and
:func:`save_figure`. The experiments' figures (:mod:`brov2_hybrid.analysis.plots`), the
identification report and the run summaries draw through it."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402,F401  (the figures' pyplot, Agg backend set)

#: Resolution of every PNG figure [dots per inch].
DPI = 110


def save_figure(fig, path):
    """Lay out, write (DPI) and close ``fig``; returns ``path``."""
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path
