"""``python -m brov2_hybrid.onboard --vehicle NAME --out FILE``: write the on-board Lua script (docs/onboard.md)."""
import argparse
import sys

from brov2_hybrid import params
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.onboard.lua_script import load_onboard_settings, write_script
from brov2_hybrid.vehicle.vehicle_file import add_vehicle_argument, load_vehicle


def main(argv=None):
    """Write the script; exit 2 with the file and key named on a bad parameter."""
    parser = argparse.ArgumentParser(prog="python -m brov2_hybrid.onboard", description=__doc__)
    add_vehicle_argument(parser)
    parser.add_argument("--controller", default=None, help="controller YAML (default params/controller.yaml)")
    parser.add_argument("--onboard", default=None, help="onboard YAML (default params/onboard.yaml)")
    parser.add_argument("--out", default=None, help="output file (default: onboard.yaml's script_name here)")
    args = parser.parse_args(argv)
    try:
        onboard = load_onboard_settings(args.onboard)
        path = write_script(args.out or onboard.script_name, load_vehicle(args.vehicle),
                            params.load_controller_params(args.controller), onboard)
    except Brov2Error as exc:
        sys.stderr.write("brov2_hybrid.onboard: %s\n" % exc)
        return 2
    sys.stdout.write("%s\n" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
