"""scripts/run_tests.py counts JUnit results: a suite's own errors (a rostest node that died before any
case ran) are failures, not nothing."""
import importlib.util
import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def run_tests():
    spec = importlib.util.spec_from_file_location("run_tests", os.path.join(HERE, "..", "scripts", "run_tests.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_a_suite_that_errored_before_any_case_is_a_failure(run_tests, tmp_path):
    """What rostest writes when its test node dies at start-up: errors="1" tests="0", no test case."""
    died = _write(tmp_path, "rosunit-died.xml", '<?xml version="1.0"?><testsuite errors="1" failures="0" '
                  'name="unittest.suite.TestSuite" tests="0" time="14.7"><system-out/></testsuite>')
    tally = run_tests.Tally("rostest")
    failing = run_tests.count_junit([died], tally)
    assert (tally.passed, tally.failed) == (0, 1)
    assert failing and "rosunit-died.xml" in failing[0]
    assert "outside any test case" in tally.notes[0]


def test_cases_are_counted_once(run_tests, tmp_path):
    """Passing, failing, erroring and skipped cases, in a testsuites file and a bare testsuite: each case
    once, and a suite whose errors are its cases' adds nothing more."""
    many = _write(tmp_path, "pytest.xml", '<?xml version="1.0"?><testsuites><testsuite name="pytest" errors="1" '
                  'failures="1" skipped="1" tests="4"><testcase classname="a" name="ok"/><testcase classname="a" '
                  'name="bad"><failure message="x"/></testcase><testcase classname="a" name="boom"><error '
                  'message="y"/></testcase><testcase classname="a" name="later"><skipped/></testcase></testsuite>'
                  '</testsuites>')
    bare = _write(tmp_path, "rosunit-ok.xml", '<?xml version="1.0"?><testsuite errors="0" failures="0" name="s" '
                  'tests="2"><testcase classname="b" name="one"/><testcase classname="b" name="two"/></testsuite>')
    tally = run_tests.Tally("all")
    failing = run_tests.count_junit([many, bare], tally)
    assert (tally.passed, tally.failed, tally.skipped) == (3, 2, 1)
    assert sorted(failing) == ["a.bad", "a.boom"]
