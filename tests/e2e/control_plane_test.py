#!/usr/bin/env python3
"""The launcher leaves nothing behind: after a suite whose test fails inside the context manager,
after `up`/`down`, and after the test runner itself is killed with SIGKILL, no process of the
control plane is left and its temporary directory is gone. Also: a client-certificate user is
who the API server says, and RBAC applies to it.

Usage: control_plane_test.py. Exit 77 when the control plane is not built."""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from control_plane import (SKIP, BinariesMissing, ControlPlane, find_binaries,  # noqa: E402
                           group_alive, pid_alive, read, wait_until)

HERE = os.path.dirname(os.path.abspath(__file__))
LAUNCHER = os.path.join(HERE, "control_plane.py")


def assert_gone(state, what):
    """Every component, their group and the run directory are gone within a bound."""
    pids = list(state["pids"].values()) + [state["supervisor"]]
    wait_until(lambda: not any(pid_alive(pid) for pid in pids) and
               not group_alive(state["group"]) and not os.path.exists(state["run_dir"]),
               "%s: every process and the run directory to be gone" % what, 40)
    print("ok   %s: %d processes and %s gone" % (what, len(pids), state["run_dir"]), flush=True)


def failing_test_inside():
    class Expected(Exception):
        pass
    try:
        with ControlPlane(users=[("alice", ("team-a",))]) as plane:
            state = plane.state
            for name, pid in state["pids"].items():
                assert pid_alive(pid), name
            who = plane.kubectl("auth", "whoami", "-o", "json", user="alice")
            user = json.loads(who.stdout)["status"]["userInfo"]
            assert user["username"] == "alice" and "team-a" in user["groups"], user
            denied = plane.kubectl("get", "secrets", "-A", user="alice", check=False)
            assert denied.returncode != 0 and "Forbidden" in denied.stderr, denied.stderr
            # A role of its own: the aggregated ones (view, edit) are filled by a controller
            # this control plane does not run.
            plane.kubectl("create", "clusterrole", "pod-reader", "--verb=get,list",
                          "--resource=pods")
            plane.kubectl("create", "clusterrolebinding", "team-a-pod-reader",
                          "--clusterrole=pod-reader", "--group=team-a")
            # The authorizer sees the binding once its informer has: within a bound.
            wait_until(lambda: plane.kubectl("get", "pods", "-A", user="alice",
                                             check=False).returncode == 0,
                       "alice's binding to take effect", 20)
            print("ok   client-certificate user alice (team-a) under RBAC", flush=True)
            raise Expected()
    except Expected:
        pass
    assert_gone(state, "a test failing inside the context manager")


def runner_killed():
    directory = tempfile.mkdtemp(prefix="topoguard-e2e-killed-")
    runner = subprocess.Popen([sys.executable, "-c", """
import sys, time
sys.path.insert(0, %r)
from control_plane import ControlPlane
with ControlPlane(directory=%r):
    print("up", flush=True)
    time.sleep(600)
""" % (HERE, directory)], stdout=subprocess.PIPE, text=True)
    assert runner.stdout.readline().strip() == "up", "the runner did not start the control plane"
    state = json.loads(read(os.path.join(directory, "state.json")))
    runner.send_signal(signal.SIGKILL)
    runner.wait()
    assert_gone(state, "the runner killed with SIGKILL")
    subprocess.run(["rm", "-rf", directory], check=True)


def up_and_down():
    directory = tempfile.mkdtemp(prefix="topoguard-e2e-cli-")
    started = time.monotonic()
    subprocess.run([sys.executable, LAUNCHER, "up", "--dir", directory], check=True)
    state = json.loads(read(os.path.join(directory, "state.json")))
    print("ok   up in %.1f s" % (time.monotonic() - started), flush=True)
    for name, pid in state["pids"].items():
        assert pid_alive(pid), "%s is not running after up" % name
    subprocess.run([sys.executable, LAUNCHER, "down", "--dir", directory], check=True)
    assert_gone(state, "up then down")
    subprocess.run(["rm", "-rf", directory], check=True)


def main():
    try:
        find_binaries()
    except BinariesMissing as missing:
        print("SKIP: control-plane binaries not built: %s" % missing)
        return SKIP
    started = time.monotonic()
    failing_test_inside()
    runner_killed()
    up_and_down()
    print("3 lifecycles in %.1f s" % (time.monotonic() - started))
    return 0


if __name__ == "__main__":
    sys.exit(main())
