"""Settings of the in-process closed loop: section ``loop`` of ``params/analysis.yaml``.

Rates [Hz], transport delays [s], the firmware mixer and output stage, the vehicle model and
the vehicle file; every key is checked on load (a missing key or a non-physical value raises
:class:`~brov2_hybrid.errors.ParameterError` naming the file and the key).
"""
from dataclasses import dataclass, replace

from brov2_hybrid import paths
from brov2_hybrid.params import DEFAULT_VEHICLE, Section, load_yaml
from brov2_hybrid.sim.config import MODELS
from brov2_hybrid.vehicle.firmware_output import OUTPUT_STAGES
from brov2_hybrid.vehicle.mixers import KINDS as MIXER_KINDS, QUANTITATIVE

#: The file the loop's section is read from (with the experiments' settings).
DEFAULT_ANALYSIS_FILE = "analysis.yaml"


@dataclass(frozen=True)
class LoopSettings:
    """In-process closed loop: rates [Hz], delays [s], mixer, vehicle model and vehicle file."""

    control_rate_hz: float = 50.0
    desired_rate_hz: float = 50.0
    mixer: str = QUANTITATIVE
    output_stage: str = "auto"     # 'auto': the stage for the mixer (firmware_output.OUTPUT_STAGES)
    model: str = "updated"
    telemetry_rate_hz: float = 50.0
    telemetry_delay_s: float = 0.0
    command_delay_s: float = 0.0
    initial_depth_m: float = 5.0
    mode_label: str = "inprocess"
    vehicle: str = DEFAULT_VEHICLE  # vehicle file: a name under params/vehicles/ or a YAML path

    @property
    def loop_latency_s(self):
        """Worst-case age of the attitude behind a motor command: telemetry period + delays [s]."""
        return 1.0 / self.telemetry_rate_hz + self.telemetry_delay_s + self.command_delay_s

    def latency_label(self, input_rate_hz=None):
        """Human-readable latency, e.g. 'telemetry 50 Hz + 10 ms, command 10 ms (loop <= 40 ms), input 50 Hz'.

        ``input_rate_hz`` names the rate of the desired-attitude samples when they do not
        come from the generated step/sine inputs (a dive CSV).
        """
        return ("telemetry %g Hz + %g ms, command %g ms (loop <= %.0f ms), input %g Hz"
                % (self.telemetry_rate_hz, 1e3 * self.telemetry_delay_s, 1e3 * self.command_delay_s,
                   1e3 * self.loop_latency_s, input_rate_hz or self.desired_rate_hz))

    def with_latency(self, case):
        """Copy with the telemetry rate, delays (and input rate, if set) of a :class:`LatencyCase`."""
        return replace(self, telemetry_rate_hz=case.telemetry_rate_hz,
                       telemetry_delay_s=case.telemetry_delay_s,
                       command_delay_s=case.command_delay_s,
                       desired_rate_hz=case.desired_rate_hz or self.desired_rate_hz)



def loop_settings(data, path):
    """:class:`LoopSettings` from the ``loop`` section of the parsed YAML ``data`` read from ``path``."""
    lp = Section(data, path, "loop")
    return LoopSettings(
        control_rate_hz=lp.positive("control_rate_hz"), desired_rate_hz=lp.positive("desired_rate_hz"),
        mixer=lp.choice("mixer", MIXER_KINDS), model=lp.choice("model", MODELS),
        output_stage=lp.choice("output_stage", ("auto",) + tuple(OUTPUT_STAGES)),
        telemetry_rate_hz=lp.positive("telemetry_rate_hz"),
        telemetry_delay_s=lp.number("telemetry_delay_s", minimum=0.0),
        command_delay_s=lp.number("command_delay_s", minimum=0.0),
        initial_depth_m=lp.finite("initial_depth_m"), mode_label=str(lp.raw("mode_label")))


def load_loop_settings(path=None):
    """Read :class:`LoopSettings` from ``params/analysis.yaml`` (or ``path``)."""
    path = path or paths.params_path(DEFAULT_ANALYSIS_FILE)
    return loop_settings(load_yaml(path), path)
