"""``python -m brov2_hybrid.analysis ...`` is ``brov2-analyze ...``."""
import sys

from brov2_hybrid.analysis.cli import main

sys.exit(main())
