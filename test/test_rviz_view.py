"""The RViz view end to end: hybrid_autopilot.launch rviz:=true on the project's simulator,
RViz on a virtual X server (Xvfb).

Checks that the markers arrive (test/rviz_marker_probe.py: the eight thrusters, thrust
arrows, the desired attitude, the status text with mode and firmware) and that RViz
subscribes and draws them: a screenshot of the X screen (ImageMagick's ``import``) must not
be blank and must show the thrust arrows' colour and white text in the 3-D view. Everything is polled with generous
deadlines (RViz renders in software here and the machine may be busy).

BROV2_RVIZ_SCREENSHOT=PATH also copies the accepted screenshot there (docs/img/rviz.png
comes from ``BROV2_RVIZ_SCREENSHOT=docs/img/rviz.png pytest test/test_rviz_view.py``).
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from brov2_hybrid.link.fcu_address import free_tcp_port
from brov2_hybrid.viz.markers import FORWARD_THRUST_RGBA, REVERSE_THRUST_RGBA

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS = ("roslaunch", "rviz", "Xvfb", "import")
pytestmark = pytest.mark.skipif(any(shutil.which(t) is None for t in TOOLS),
                                reason="needs %s on PATH (scripts/setup.sh installs rviz, xvfb, imagemagick; "
                                       "source scripts/env.sh)" % ", ".join(TOOLS))

MARKERS_TIMEOUT_S = 420.0     # the whole launch up and flying, RViz subscribed
SCREENSHOT_TIMEOUT_S = 240.0  # then RViz drawing the arrows
SCREEN = "1024x720x24"
# A colour counts as "seen" within this distance (0..1 per channel): RViz shades the arrows.
COLOUR_TOLERANCE = 0.2
MIN_ARROW_PIXELS = 30
MIN_DISTINCT_COLOURS = 100
MIN_TEXT_PIXELS = 600   # the status text (the thruster numbers alone give about 200)
# rviz/brov2.rviz's background colour (10, 35, 60) must fill at least this fraction of the
# 3-D view: RViz rendered our configuration there (not its default, not a blank screen).
BACKGROUND_RGB = (10 / 255.0, 35 / 255.0, 60 / 255.0)
MIN_BACKGROUND_FRACTION = 0.3
# The 3-D view of rviz/brov2.rviz on the SCREEN (fractions of width, height): right of the
# Displays panel, between the tool bar and the Time panel.
VIEW_X, VIEW_Y = (0.40, 0.95), (0.12, 0.85)


def start_xvfb(tmp_path):
    """Xvfb on a display number it picks itself (-displayfd); returns (process, ':N')."""
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", SCREEN, "-nolisten", "tcp",
                             "+extension", "GLX"], pass_fds=(write_fd,), stdout=subprocess.DEVNULL,
                            stderr=open(str(tmp_path / "xvfb.log"), "w"))
    os.close(write_fd)
    with os.fdopen(read_fd) as pipe:
        number = pipe.readline().strip()
    if not number:
        proc.kill()
        pytest.fail("Xvfb did not start (log: %s)" % (tmp_path / "xvfb.log"))
    return proc, ":" + number


def screenshot(env, path):
    """The X screen as an (H, W, 3) float array in [0, 1] (ImageMagick import, PNG), or None.

    A screen of grays only (one still blank, before RViz has drawn: a busy machine) is written by
    ImageMagick as a grayscale PNG, read back as (H, W): it is spread to three equal channels."""
    import matplotlib.image
    code = subprocess.call(["import", "-window", "root", str(path)], env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=60)
    if code != 0 or not os.path.exists(str(path)):
        return None
    image = matplotlib.image.imread(str(path))
    if image.ndim == 2:
        return np.repeat(image[:, :, None], 3, axis=2)
    return image[:, :, :3]


def pixels_near(image, rgba, tolerance=COLOUR_TOLERANCE):
    """How many pixels lie within ``tolerance`` of the colour rgba on every channel."""
    return int(np.all(np.abs(image - np.array(rgba[:3])) < tolerance, axis=2).sum())


def view_of(image):
    """The part of the screenshot where rviz/brov2.rviz puts the 3-D view."""
    h, w = image.shape[:2]
    return image[int(VIEW_Y[0] * h):int(VIEW_Y[1] * h), int(VIEW_X[0] * w):int(VIEW_X[1] * w)]


def text_pixels(view):
    """White pixels (the status text, the thruster numbers)."""
    return int(np.all(view > 0.9, axis=2).sum())


def distinct_colours(image):
    """Number of distinct 8-bit RGB colours of the image."""
    rgb = np.round(image * 255).astype(np.uint32)
    return int(np.unique((rgb[:, :, 0] << 16) | (rgb[:, :, 1] << 8) | rgb[:, :, 2]).size)


def stop(proc, timeout_s=60):
    """SIGINT the process group (roslaunch shuts its nodes down), then SIGKILL if it lingers."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_rviz_view_shows_the_vehicle(tmp_path):
    xvfb, display = start_xvfb(tmp_path)
    master_port, sim_port = free_tcp_port(), free_tcp_port()
    env = dict(os.environ, DISPLAY=display, ROS_MASTER_URI="http://127.0.0.1:%d" % master_port,
               ROS_HOME=str(tmp_path / "ros"), LIBGL_ALWAYS_SOFTWARE="1")
    launch_log = tmp_path / "launch.log"
    launch = subprocess.Popen(
        ["roslaunch", "-p", str(master_port), "brov2_hybrid", "hybrid_autopilot.launch", "rviz:=true",
         "fcu_url:=tcp:127.0.0.1:%d" % sim_port, "firmware:=quantitative", "exit_at_end:=false", "loop:=true",
         "log_dir:=%s" % (tmp_path / "logs"), "output:=log"],
        env=env, stdout=open(str(launch_log), "w"), stderr=subprocess.STDOUT, start_new_session=True)
    try:
        probe_out = tmp_path / "probe.json"
        probe = subprocess.Popen([sys.executable, os.path.join(REPO, "test", "rviz_marker_probe.py"),
                                  "--timeout-s", str(MARKERS_TIMEOUT_S)],
                                 env=env, stdout=open(str(probe_out), "w"))
        while probe.poll() is None:
            if launch.poll() is not None:   # the launch ended early: no point waiting
                probe.kill()
                probe.wait()
                pytest.fail("roslaunch ended (exit %s) before the markers arrived; log: %s"
                            % (launch.returncode, launch_log))
            time.sleep(1.0)
        lines = probe_out.read_text().strip().splitlines()
        seen = json.loads(lines[-1]) if lines else {}
        assert probe.returncode == 0, "markers incomplete: %s (launch log: %s)" % (seen, launch_log)
        assert seen["thrusters"] == 8 and seen["desired_axes"] == 3
        assert "MANUAL, armed" in seen["status"] and "firmware quantitative" in seen["status"]
        assert set(seen["frames"]) == {"base_link", "base_link_frd", "odom"}

        shot = tmp_path / "rviz.png"
        deadline = time.monotonic() + SCREENSHOT_TIMEOUT_S
        image, arrows, text, background = None, 0, 0, 0.0
        while time.monotonic() < deadline:
            image = screenshot(env, shot)
            if image is not None:
                view = view_of(image)
                arrows = pixels_near(view, FORWARD_THRUST_RGBA) + pixels_near(view, REVERSE_THRUST_RGBA)
                text = text_pixels(view)
                background = pixels_near(view, BACKGROUND_RGB, 0.03) / float(view.shape[0] * view.shape[1])
                if (arrows >= MIN_ARROW_PIXELS and text >= MIN_TEXT_PIXELS and background >= MIN_BACKGROUND_FRACTION
                        and distinct_colours(image) >= MIN_DISTINCT_COLOURS):
                    break
            time.sleep(3.0)
        assert image is not None, "no screenshot of %s" % display
        assert distinct_colours(image) >= MIN_DISTINCT_COLOURS, "screenshot nearly blank: %s" % shot
        assert background >= MIN_BACKGROUND_FRACTION, "no 3-D view of rviz/brov2.rviz (background %.2f): %s" % (
            background, shot)
        assert arrows >= MIN_ARROW_PIXELS, "no thrust arrows drawn (%d pixels): %s" % (arrows, shot)
        assert text >= MIN_TEXT_PIXELS, "no text drawn in the 3-D view (%d pixels): %s" % (text, shot)
        target = os.environ.get("BROV2_RVIZ_SCREENSHOT")
        if target:
            shutil.copyfile(str(shot), target)
    finally:
        stop(launch)
        xvfb.terminate()
        xvfb.wait(timeout=30)
