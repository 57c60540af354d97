"""scripts/build_ardusub.sh and scripts/build_mavros.sh share a cache: one build at a time.

While another holder has the cache's lock, a second caller waits (and says so), then finds
the build the first one left and prints its folder without building anything itself.
"""
import fcntl
import hashlib
import os
import subprocess
import tarfile

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _fake_ardusub_build(out):
    os.makedirs(out)
    with open(os.path.join(out, "ardusub"), "w") as f:
        f.write("#!/bin/sh\n")
    os.chmod(os.path.join(out, "ardusub"), 0o755)
    open(os.path.join(out, "sub-6dof.parm"), "w").close()
    with open(os.path.join(out, "SOURCE"), "w") as f:
        f.write("archive test\n")


def _fake_mavros_build(out):
    os.makedirs(os.path.join(out, "ws", "devel", "lib", "mavros"))
    open(os.path.join(out, "ws", "devel", "setup.bash"), "w").close()
    node = os.path.join(out, "ws", "devel", "lib", "mavros", "mavros_node")
    with open(node, "w") as f:
        f.write("#!/bin/sh\n")
    os.chmod(node, 0o755)
    with open(os.path.join(out, "SOURCE"), "w") as f:
        f.write("archive test\n")


@pytest.mark.parametrize("script, cache_var, make_build", [
    ("build_ardusub.sh", "BROV2_ARDUSUB_CACHE", _fake_ardusub_build),
    ("build_mavros.sh", "BROV2_MAVROS_CACHE", _fake_mavros_build)])
def test_a_second_caller_waits_for_the_lock_then_uses_the_first_build(tmp_path, script, cache_var, make_build):
    archive = tmp_path / "src.tar.gz"
    (tmp_path / "payload").write_text("not a real source")
    with tarfile.open(str(archive), "w:gz") as tar:
        tar.add(str(tmp_path / "payload"), arcname="payload")
    key = hashlib.sha256(archive.read_bytes()).hexdigest()[:16]
    cache = tmp_path / "cache"
    cache.mkdir()
    env = dict(os.environ, **{cache_var: str(cache)})
    with open(str(cache / ".build.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)                    # "another build" holds the cache
        proc = subprocess.Popen(["bash", os.path.join(REPO, "scripts", script), str(archive)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = proc.stderr.readline()                        # blocks until it says something or ends
        assert "another build holds" in first and "waiting for it" in first, first + proc.communicate()[1]
        assert proc.poll() is None and not (cache / key).exists()
        make_build(str(cache / key))                          # what the first build leaves
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "cached: %s" % (cache / key) in err
    assert out.strip().splitlines()[-1] == str(cache / key)
    assert os.path.realpath(str(cache / "current")) == str(cache / key)
