"""The nodes' ``main()``: start, refuse a bad start with an exit code, run, clean up.

Every node in ``nodes/`` starts the same way (:func:`run_node`): ``rospy.init_node``; build the
node (its constructor reads and checks the parameters and raises
:class:`~brov2_hybrid.errors.Brov2Error` on a bad one: the node then logs a fatal message and
exits with its refusal code, nothing published); run until shutdown (``rospy.spin`` or the
node's own loop); clean up. rospy is imported inside :func:`run_node` only, so that this
module, like the rest of ``brov2_hybrid``, imports without ROS; tests pass a stand-in.
"""
import sys
import time

from brov2_hybrid.errors import Brov2Error

#: How long a node that refuses to start waits, when asked to, before it exits, so that its
#: fatal message reaches /rosout (and the launch's log) [s].
ROSOUT_FLUSH_S = 1.0


def run_node(name, build, refused_code=2, refused_message="", run=None, cleanup=None, on_refused=None,
             flush_rosout=False, ros=None):
    """Start the node ``name``, run it until it ends, clean up; exits on a refused start.

    Parameters
    ----------
    name : str
        The node's name (``rospy.init_node``; also the fatal message's prefix).
    build : callable
        ``build()`` returns the node (any object); raising Brov2Error refuses the start.
    refused_code : int
        Exit code when ``build`` raises Brov2Error, after the fatal message
        ``"<name>: <refused_message><error>"`` (and ``on_refused()`` when given; then a
        :data:`ROSOUT_FLUSH_S` wait when ``flush_rosout``).
    run : callable or None
        ``run(node)`` runs the node until shutdown; None: ``rospy.spin()``. When it returns a
        number, the process exits with it (after ``cleanup``).
    cleanup : callable or None
        ``cleanup(node)`` once ``run`` returned.
    ros : module or None
        rospy (None: imported here); tests pass a stand-in.
    """
    if ros is None:
        import rospy as ros
    ros.init_node(name)
    try:
        node = build()
    except Brov2Error as exc:
        ros.logfatal("%s: %s%s", name, refused_message, exc)
        if on_refused is not None:
            on_refused()
        if flush_rosout:
            time.sleep(ROSOUT_FLUSH_S)
        sys.exit(refused_code)
    code = ros.spin() if run is None else run(node)
    if cleanup is not None:
        cleanup(node)
    if isinstance(code, int):
        sys.exit(code)
