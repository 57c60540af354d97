"""``python -m brov2_hybrid.sim``: start the simulator (see ``--help``)."""
import sys

from brov2_hybrid.sim.simulator import main

sys.exit(main())
