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

    def tether_sink(self, topic, frame_id):
        """A ``sink(t_s, force_ned_n, nodes_ned_m, vehicle_ned_m)`` (a
        :class:`~brov2_hybrid.sim.tether_state.TetherReporter`'s)
        publishing brov2_hybrid/TetherState on ``topic``, stamped with the vehicle time ``t_s``."""
        import rospy
        from brov2_hybrid.msg import TetherState
        publisher = rospy.Publisher(topic, TetherState, queue_size=10)

        def publish(t_s, force_ned_n, nodes_ned_m, vehicle_ned_m):
            msg = TetherState()
            msg.header.stamp = rospy.Time.from_sec(t_s)
            msg.header.frame_id = frame_id
            msg.force_ned_n = [float(f) for f in force_ned_n]
            msg.nodes_ned_m = [float(x) for x in nodes_ned_m.ravel()]
            msg.vehicle_ned_m = [float(x) for x in vehicle_ned_m]
            publisher.publish(msg)
        return publish

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
