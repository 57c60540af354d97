"""The MAVLink bridge's settings (brov2_hybrid.link.bridge_settings): read from the params file,
periods derived, bad combinations refused."""
import os

import pytest
import yaml

from brov2_hybrid import paths
from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.link import bridge_settings as bset
from brov2_hybrid.link.bridge_settings import BridgeSettings
from brov2_hybrid.node_logic.node_params import ParamReader, load_node_params


def _settings(**overrides):
    return BridgeSettings(ParamReader(load_node_params("mavlink_bridge", overrides), "mavlink_bridge"))


def test_bridge_settings_read_the_params_file_and_derive_periods():
    with open(os.path.join(paths.package_root(), "params", "autopilot.yaml")) as handle:
        raw = yaml.safe_load(handle)["mavlink_bridge"]
    s = _settings()
    assert s.url == raw["fcu_url"] and s.system_id == raw["system_id"]
    assert s.heartbeat_period_s == pytest.approx(1.0 / raw["heartbeat_rate_hz"])
    assert s.override_period_s == pytest.approx(1.0 / raw["override_rate_hz"])
    assert s.signing_key is None and s.key_file == ""
    assert s.streams[0] == (bset.ATTITUDE_MESSAGES[raw["attitude_source"]], raw["attitude_rate_hz"])
    assert _settings(attitude_source="euler").attitude_msg == "ATTITUDE"


def test_bridge_settings_refuse_a_slow_override_and_signing_setup_without_a_key():
    assert _settings(override_rate_hz=10.0).override_period_s == pytest.approx(0.1)
    with pytest.raises(Brov2Error, match="override_rate_hz: expected >= 10 Hz, got 9.5"):
        _settings(override_rate_hz=9.5)
    with pytest.raises(Brov2Error, match="signing_setup: true needs ~signing_key_file"):
        _settings(signing_setup=True)
    with pytest.raises(Brov2Error, match="attitude_source"):
        _settings(attitude_source="gyro")
    keyed = _settings(signing_setup=True,
                      signing_key_file=os.path.join(paths.package_root(), "test", "data", "signing_test.key"))
    assert len(keyed.signing_key) == 32 and keyed.signing_setup
