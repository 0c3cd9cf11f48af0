"""launcher.node.listeners on real processes: a child that listens is found with its address and port."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil

from launcher.node.listeners import Listener, listening, of_descendants, process_name

SERVER = ("import socket, sys, time\n"
          "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
          "c = socket.socket(); c.bind(('0.0.0.0', 0))\n"  # bound, not listening: not a port it serves
          "print(s.getsockname()[1], flush=True); time.sleep(60)\n")


def test_a_listening_child_is_found_with_its_address_and_port() -> None:
    child = subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        port = int(child.stdout.readline())
        name = psutil.Process(child.pid).name()
        assert Listener(name, "127.0.0.1", port) in of_descendants()
        assert listening([psutil.Process(child.pid)]) == {Listener(name, "127.0.0.1", port)}
    finally:
        child.kill()
        child.wait()


def test_hadoop_processes_are_named_by_their_main_class() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)",
                              "org.apache.hadoop.mapreduce.v2.app.MRAppMaster"])
    try:
        proc = psutil.Process(child.pid)
        while not proc.cmdline():  # empty while the child is still in exec()
            time.sleep(0.01)
        assert process_name(proc) == "MRAppMaster"
    finally:
        child.kill()
        child.wait()


def test_wildcard() -> None:
    assert Listener("NodeManager", "0.0.0.0", 1).wildcard and Listener("x", "::", 1).wildcard
    assert not Listener("NodeManager", "10.0.0.1", 1).wildcard


def test_an_ipv4_mapped_address_is_shown_as_ipv4() -> None:
    """A JVM's dual-stack socket bound to 127.0.0.1 is listed by the kernel as ``::ffff:127.0.0.1``."""
    child = subprocess.Popen([sys.executable, "-c", (
        "import socket, time\n"
        "s = socket.socket(socket.AF_INET6); s.bind(('::ffff:127.0.0.1', 0)); s.listen()\n"
        "print(s.getsockname()[1], flush=True); time.sleep(60)\n")], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        port = int(child.stdout.readline())
        assert {(entry.address, entry.port) for entry in of_descendants()} == {("127.0.0.1", port)}
    finally:
        child.kill()
        child.wait()
