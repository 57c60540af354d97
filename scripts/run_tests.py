#!/usr/bin/env python3
"""Run every check of `make test` and close with one line `N passed, N failed`.

Checks, in order (each stage runs even when an earlier one failed):
  pytest     test/ with the venv's python; every test case counts.
  rostest    test/*.test through `catkin_make run_tests` in .ws; every test case
             in .ws/build/test_results counts (as catkin_test_results counts them:
             one case per <test> node for "it ran and wrote results", plus the
             node's own unittest cases).
  catkin_lint  the package and the mavros_msgs stand-in, -W2 --strict: one check.
  vermin     src/ and nodes/ must run on Python 3.8: one check.

Standard library only. Expects the environment of scripts/env.sh (run it through
scripts/run_tests.sh). Exit status 0 only when nothing failed.
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WS = os.path.join(REPO, ".ws")
VENV_BIN = os.path.join(REPO, ".venv", "bin")
OUT = os.path.join(REPO, "out", "test-results")
ROSTEST_TIMEOUT_S = 3600
PYTEST_TIMEOUT_S = 3600


class Tally(object):
    """Passed / failed / skipped counts of one stage."""

    def __init__(self, name):
        self.name = name
        self.passed = 0
        self.failed = 0
        self.skipped = 0
        self.notes = []

    def fail(self, note):
        """Count one failure and note why."""
        self.failed += 1
        self.notes.append(note)

    def line(self, seconds):
        """The stage's summary line (counts and ``seconds``), followed by its notes."""
        # Not in the "N passed, N failed" form: that is the closing line's alone.
        text = "{:<12} passed {}, failed {}, skipped {} ({:.1f} s)".format(
            self.name, self.passed, self.failed, self.skipped, seconds)
        for note in self.notes:
            text += "\n    - " + note
        return text


def say(text):
    """Print ``text`` prefixed "run_tests: " (flushed)."""
    print("run_tests: " + text, flush=True)


def count_junit(paths, tally):
    """Add the test cases of JUnit XML files to tally; returns failing case names."""
    failing = []
    for path in paths:
        try:
            root = ET.parse(path).getroot()
        except (ET.ParseError, OSError) as exc:
            tally.fail("unreadable result file {}: {}".format(path, exc))
            continue
        for suite in ([root] if root.tag == "testsuite" else root.iter("testsuite")):
            failed_here = 0
            for case in suite.iter("testcase"):
                name = "{}.{}".format(case.get("classname", "?"), case.get("name", "?"))
                if case.find("failure") is not None or case.find("error") is not None:
                    tally.failed += 1
                    failed_here += 1
                    failing.append(name)
                elif case.find("skipped") is not None:
                    tally.skipped += 1
                else:
                    tally.passed += 1
            # A suite's own errors (a rostest whose test node died before any case ran writes
            # errors="1" tests="0"): failures no test case carries, counted all the same.
            reported = int(suite.get("errors", 0) or 0) + int(suite.get("failures", 0) or 0)
            if reported > failed_here:
                tally.fail("{}: {} error(s) outside any test case".format(path, reported - failed_here))
                failing.append("{} (suite {})".format(os.path.basename(path), suite.get("name", "?")))
    return failing


def run(cmd, log_path=None, cwd=REPO, timeout=None, env=None):
    """Run cmd; output to the console or to log_path. Returns the exit code."""
    say("$ " + " ".join(cmd))
    try:
        if log_path is None:
            return subprocess.call(cmd, cwd=cwd, timeout=timeout, env=env)
        with open(log_path, "w") as log:
            return subprocess.call(cmd, cwd=cwd, timeout=timeout, env=env,
                                   stdout=log, stderr=subprocess.STDOUT)
    except subprocess.TimeoutExpired:
        say("timed out after {} s: {}".format(timeout, " ".join(cmd)))
        return 124
    except OSError as exc:
        say("cannot run {}: {}".format(cmd[0], exc))
        return 127


def tool(name):
    """Path of a command, preferring the venv's."""
    candidate = os.path.join(VENV_BIN, name)
    if os.access(candidate, os.X_OK):
        return candidate
    return shutil.which(name) or name


def stage_pytest(tally):
    """Run pytest on test/ (JUnit XML into out/test-results) and count its cases; an exit code other
    than 0 / 1, or 1 without a failing case, counts as a failure."""
    xml_path = os.path.join(OUT, "pytest.xml")
    if os.path.exists(xml_path):
        os.remove(xml_path)
    python = os.path.join(VENV_BIN, "python")
    if not os.access(python, os.X_OK):
        python = sys.executable
    code = run([python, "-m", "pytest", "test", "-p", "no:cacheprovider", "-q",
                "--junitxml=" + xml_path], timeout=PYTEST_TIMEOUT_S)
    if os.path.exists(xml_path):
        count_junit([xml_path], tally)
    if code == 5:
        tally.notes.append("pytest collected no tests")
    elif code not in (0, 1) or (code == 1 and tally.failed == 0):
        tally.fail("pytest exited with code {}".format(code))


def stage_rostest(tally):
    """Run ``catkin_make run_tests`` in .ws and count the cases of its results; a failing build, no
    results, or a failing case fails the stage (the log's tail is printed)."""
    tests = sorted(glob.glob(os.path.join(REPO, "test", "*.test")))
    if not tests:
        tally.notes.append("no test/*.test files yet")
        return
    results = os.path.join(WS, "build", "test_results")
    shutil.rmtree(results, ignore_errors=True)
    log_path = os.path.join(OUT, "rostest.log")
    env = dict(os.environ)
    env.setdefault("ROS_HOME", os.path.join(WS, "ros_home"))
    env["PWD"] = WS  # catkin_make takes its workspace from $PWD
    code = run(["catkin_make", "-C", WS, "run_tests", "-j2"], log_path=log_path, cwd=WS,
               timeout=ROSTEST_TIMEOUT_S, env=env)
    files = sorted(glob.glob(os.path.join(results, "**", "*.xml"), recursive=True))
    failing = count_junit(files, tally)
    for name in failing:
        tally.notes.append("failed: " + name)
    if code != 0:
        tally.fail("catkin_make run_tests exited with code {} (log: {})".format(code, log_path))
    if not files:
        tally.fail("no rostest results in {} (log: {})".format(results, log_path))
    if files:
        run(["catkin_test_results", results], cwd=WS)
    if tally.failed:
        say("rostest log: " + log_path)
        with open(log_path, errors="replace") as log:
            lines = log.readlines()
        sys.stdout.write("".join(lines[-60:]))


def stage_catkin_lint(tally):
    """catkin_lint -W2 --strict on the package (through a link named brov2_hybrid) and the mavros_msgs
    stand-in: one check."""
    # Lint through a link named like the package (catkin_lint notes a folder
    # name that differs from the package name, e.g. the clone's folder).
    scratch = tempfile.mkdtemp(prefix="brov2-lint-")
    try:
        link = os.path.join(scratch, "brov2_hybrid")
        os.symlink(REPO, link)
        paths = [link]
        standin = os.path.join(REPO, "third_party", "mavros_msgs")
        if os.path.isdir(standin):
            paths.append(standin)
        code = run(["catkin_lint", "-W2", "--strict", "--offline"] + paths)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if code == 0:
        tally.passed += 1
    else:
        tally.fail("catkin_lint reported problems (exit code {})".format(code))


def stage_vermin(tally):
    """vermin: src/ and nodes/ must run on Python 3.8: one check."""
    targets = [d for d in ("src", "nodes") if os.path.isdir(os.path.join(REPO, d))]
    cmd = [tool("vermin"), "-t=3.8-", "--no-tips", "--violations"] + targets
    say("$ " + " ".join(cmd))
    try:
        proc = subprocess.run(cmd, cwd=REPO, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, universal_newlines=True)
    except OSError as exc:
        tally.fail("cannot run vermin: {}".format(exc))
        return
    sys.stdout.write(proc.stdout)
    if proc.returncode == 0 or "No files specified to analyze" in proc.stdout:
        tally.passed += 1
    else:
        tally.fail("code needs a Python newer than 3.8 (see above)")


STAGES = (
    ("pytest", stage_pytest),
    ("rostest", stage_rostest),
    ("catkin_lint", stage_catkin_lint),
    ("vermin", stage_vermin),
)


def main(argv=None):
    """Run the stages (every one, or those of --only), print each stage's line and the closing
    "N passed, N failed"; returns 1 when anything failed, else 0."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", action="append", choices=[name for name, _ in STAGES],
                        help="run only this stage (repeatable)")
    args = parser.parse_args(argv)
    os.makedirs(OUT, exist_ok=True)
    tallies = []
    for name, stage in STAGES:
        if args.only and name not in args.only:
            continue
        say("=== " + name)
        tally = Tally(name)
        start = time.time()
        stage(tally)
        tallies.append((tally, time.time() - start))
    print("", flush=True)
    for tally, seconds in tallies:
        say(tally.line(seconds))
    passed = sum(t.passed for t, _ in tallies)
    failed = sum(t.failed for t, _ in tallies)
    print("{} passed, {} failed".format(passed, failed), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
