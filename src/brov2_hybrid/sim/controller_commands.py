"""The controller's commands as the simulators' ROS shells hear them (``nodes/brov2_sitl``,
``nodes/ardusub_sitl`` with ``--lockstep``): every brov2_hybrid/ThrusterCommand, stamped with the
vehicle time of the attitude its tick answered.

Like :mod:`~brov2_hybrid.node_logic.run_node`, this is the shells' helper: it imports rospy
inside its methods only, so the core stays free of it.
"""
import logging
import threading

from brov2_hybrid.errors import Brov2Error
from brov2_hybrid.sim.lockstep import controller_link


class ControllerCommands(object):
    """Joins ROS as ``node_name`` and reads the controller's settings (:class:`ControllerLink`
    fields: ``control_period_s``, ``attitude_message``, ``command_topic``).

    Raises Brov2Error without ``/use_sim_time`` (commands are matched to attitudes by vehicle
    time, which the bridge's /clock gives) or on a bad controller parameter."""

    def __init__(self, node_name):
        import rospy
        rospy.init_node(node_name, disable_signals=True)   # the simulator's own handlers stop it
        _log_to_screen((node_name, "brov2_hybrid"))
        if not rospy.get_param("/use_sim_time", False):
            raise Brov2Error("--lockstep needs /use_sim_time true, with mavlink_bridge publishing /clock from the "
                             "vehicle's time: commands are matched to attitudes by vehicle time")
        link = controller_link(rospy.get_param)
        self.control_period_s = link.control_period_s
        self.attitude_message = link.attitude_message
        self.command_topic = link.command_topic
        self._latest_s = None
        self._lock = threading.Lock()

    def connect(self, gate):
        """Hand every command to ``gate.answer(stamp_s, rc_pwm_us)`` (a LockstepGate)."""
        self._subscribe(lambda m: gate.answer(m.header.stamp.to_sec(), m.rc_pwm_us))

    def follow(self):
        """Keep the newest command's stamp for :meth:`latest_s` (the ArduSub physics' pace)."""
        self._subscribe(self._keep)

    def latest_s(self):
        """Vehicle time [s] of the attitude the newest command answered (None before the first)."""
        with self._lock:
            return self._latest_s

    def _keep(self, msg):
        stamp = msg.header.stamp.to_sec()
        with self._lock:
            if self._latest_s is None or stamp > self._latest_s:
                self._latest_s = stamp

    def _subscribe(self, callback):
        import rospy
        from brov2_hybrid.msg import ThrusterCommand
        rospy.Subscriber(self.command_topic, ThrusterCommand, callback, queue_size=100, tcp_nodelay=True)


def _log_to_screen(names):
    """rospy.init_node sends Python logging to its log file only: keep the simulator's own
    messages (loggers ``names``) on the screen as without ROS; rospy's internals stay in the file."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    for name in names:
        logging.getLogger(name).addHandler(handler)
        logging.getLogger(name).setLevel(logging.INFO)
