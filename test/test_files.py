"""Dive CSV validation and the control-tick log format."""
import numpy as np
import pytest

from brov2_hybrid.dive.dive_csv import load_dive_csv, write_dive_csv
from brov2_hybrid.errors import InputDataError
from brov2_hybrid.tick_log.logfile import LOG_COLUMNS, LogWriter, read_log

HEADER = "time_s,roll_deg,pitch_deg,yaw_deg,surge,sway,heave\n"


def _dive(tmp_path, body, header=HEADER):
    path = tmp_path / "dive.csv"
    path.write_text(header + body)
    return str(path)


def test_round_trip(tmp_path):
    path = str(tmp_path / "d.csv")
    t = np.arange(5) * 0.1
    eta = np.radians(np.column_stack([t, -t, 90 * t]))
    lin = np.column_stack([t, t, -t]) / 2
    write_dive_csv(path, t, eta, lin)
    d = load_dive_csv(path)
    np.testing.assert_allclose(d.eta2d_rad, eta, atol=1e-8)
    np.testing.assert_allclose(d.u_linear, lin, atol=1e-8)
    np.testing.assert_allclose(d.sample(0.25)[0], eta[2], atol=1e-8)  # no lookahead


def test_radian_columns_accepted(tmp_path):
    d = load_dive_csv(_dive(tmp_path, "0,0.1,0.2,0.3,0,0,0\n", "time_s,roll_rad,pitch_rad,yaw_rad,surge,sway,heave\n"))
    np.testing.assert_allclose(d.eta2d_rad[0], [0.1, 0.2, 0.3])


@pytest.mark.parametrize("body, header, match", [
    ("0,0,0,0,0,0\n", "time_s,roll_deg,pitch_deg,yaw_deg,surge,sway\n", "missing column 'heave'"),
    ("0,0,0,0,0,0,0\n1,0,x,0,0,0,0\n", HEADER, r"dive.csv:3: column 'pitch_deg': expected a number, got 'x'"),
    ("0,0,0,nan,0,0,0\n", HEADER, r"dive.csv:2: column 'yaw_deg': expected a finite number"),
    ("0,0,0,0,0,0,0\n0,0,0,0,0,0,0\n", HEADER, r"dive.csv:3: column 'time_s': expected time to increase"),
    ("0,0,0,0,1.5,0,0\n", HEADER, r"dive.csv:2: column 'surge': expected a command in \[-1, 1\]"),
    ("", HEADER, "no data rows"),
])
def test_bad_dives_name_line_and_field(tmp_path, body, header, match):
    with pytest.raises(InputDataError, match=match):
        load_dive_csv(_dive(tmp_path, body, header))


def test_log_never_overwrites_and_round_trips(tmp_path):
    row = {c: 1.5 for c in LOG_COLUMNS}
    row["mode"] = "ACTIVE"
    paths = []
    for _ in range(2):
        with LogWriter(str(tmp_path / "log.csv")) as w:
            w.write(row)
            w.write(row)
        paths.append(w.path)
    assert paths[0] != paths[1]
    log = read_log(paths[1])
    assert len(log["time_s"]) == 2 and log["mode"] == ["ACTIVE", "ACTIVE"]


def test_log_keeps_epoch_times_to_the_microsecond(tmp_path):
    row = {c: 0.0 for c in LOG_COLUMNS}
    row["mode"] = "ACTIVE"
    row["time_s"] = 1763769600.123456
    with LogWriter(str(tmp_path / "log.csv")) as w:
        w.write(row)
    assert read_log(w.path)["time_s"][0] == 1763769600.123456


def test_log_rejects_incomplete_rows(tmp_path):
    with LogWriter(str(tmp_path / "log.csv")) as w:
        with pytest.raises(InputDataError, match="missing columns"):
            w.write({"time_s": 0.0})
