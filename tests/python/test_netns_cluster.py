"""bench/netns_cluster.sh: hosts come up shaped as asked, and every way out removes them (down, a
failing command, a timeout). Root and `ip netns` only: skips elsewhere. Its own name prefix, so a
bench's cluster running beside it is left alone. A few seconds."""
import os
import pathlib
import shutil
import subprocess

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "bench" / "netns_cluster.sh"
PREFIX = "wftest"
ENV = dict(os.environ, NETNS_CLUSTER_PREFIX=PREFIX)


def _netns_usable():
    if os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("tc") is None:
        return False
    probe = f"{PREFIX}-probe"
    ok = subprocess.run(["ip", "netns", "add", probe], capture_output=True, timeout=10).returncode == 0
    if ok:
        subprocess.run(["ip", "netns", "delete", probe], capture_output=True, timeout=10)
    return ok


pytestmark = pytest.mark.skipif(not _netns_usable(), reason="needs root and ip netns")


def ours():
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=10).stdout
    return sorted(line.split()[0] for line in out.splitlines() if line.startswith(PREFIX + "-"))


def cluster(*args, timeout=60):
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout, env=ENV)


@pytest.fixture(autouse=True)
def clean():
    cluster("down")
    yield
    cluster("down")
    assert ours() == []


def test_up_shapes_every_link_and_down_removes_everything():
    r = cluster("up", "3", "10gbit")
    assert r.returncode == 0, r.stderr
    assert ours() == [f"{PREFIX}-h0", f"{PREFIX}-h1", f"{PREFIX}-h2", f"{PREFIX}-sw"]
    # Each host: eth0 with its address and a tbf at the rate; the switch: one shaped port per host.
    for i in range(3):
        addr = subprocess.run(["ip", "-n", f"{PREFIX}-h{i}", "-brief", "addr", "show", "eth0"],
                              capture_output=True, text=True, timeout=10).stdout
        assert f"10.213.0.{i + 1}/24" in addr
        qdisc = subprocess.run(["ip", "netns", "exec", f"{PREFIX}-h{i}", "tc", "qdisc", "show", "dev", "eth0"],
                               capture_output=True, text=True, timeout=10).stdout
        assert "tbf" in qdisc and "rate 10Gbit" in qdisc
    ports = subprocess.run(["ip", "netns", "exec", f"{PREFIX}-sw", "tc", "qdisc", "show"],
                           capture_output=True, text=True, timeout=10).stdout
    assert ports.count("rate 10Gbit") == 3
    # exec runs inside host 1: its only non-loopback address is its own.
    r = cluster("exec", "1", "ip", "-brief", "-4", "addr", "show", "eth0")
    assert r.returncode == 0 and "10.213.0.2/24" in r.stdout
    assert cluster("down").returncode == 0
    assert ours() == []


def test_a_leftover_is_removed_before_up():
    subprocess.run(["ip", "netns", "add", f"{PREFIX}-h7"], check=True, timeout=10)
    assert cluster("up", "2", "1gbit").returncode == 0
    assert f"{PREFIX}-h7" not in ours()


def test_run_removes_the_cluster_after_a_failing_command():
    r = cluster("run", "2", "1gbit", "--", "sh", "-c", 'echo "$WEFT_CLUSTER_ADDRS"; exit 3')
    assert r.returncode == 3
    assert r.stdout.split() == ["10.213.0.1", "10.213.0.2"]
    assert ours() == []


def test_run_is_bounded_and_cleans_up_after_its_timeout():
    r = cluster("run", "2", "1gbit", "--timeout", "1", "--", "sleep", "30", timeout=30)
    assert r.returncode == 124
    assert ours() == []


def test_bad_arguments_are_errors_naming_them():
    r = cluster("up", "1", "1gbit")
    assert r.returncode == 2 and "N must be 2..16, got '1'" in r.stderr
    r = cluster("up", "2", "fast")
    assert r.returncode == 2 and "RATE 'fast'" in r.stderr
    assert ours() == []
