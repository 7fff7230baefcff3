#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of make bench's host meter (HostMeter in scripts/rcm-vm.py).

The meter reads a guest's output while the guest writes it: marks may
arrive split across polls, and the log of an earlier run may still be in
place when the first poll comes. Each case fails if a mark is lost or
misplaced.
"""

import importlib.util
import os
import tempfile
import unittest
from unittest import mock

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPEC = importlib.util.spec_from_file_location("rcm_vm", os.path.join(ROOT, "scripts/rcm-vm.py"))
rcm_vm = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(rcm_vm)


class FakeGuest:
    def __init__(self, role, pid):
        self.role = role
        self.proc = mock.Mock(pid=pid)


def run_log(lines):
    return "".join(line + "\n" for line in lines).encode()


# Two measured runs, each followed by its result line and a report mark.
RUN = run_log([
    "rcm bench: header",
    "RCM-HOST-MARK begin",
    "RCM-HOST-MARK end 1000",
    "c    round 1: rdma_cm, 1000 connections",
    "RCM-HOST-MARK report",
    "RCM-HOST-MARK begin",
    "RCM-HOST-MARK end 10",
    "rcm  round 1: rdma_cm, 10 connections",
    "RCM-HOST-MARK report",
])


class HostMeterTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "driver-output.log")
        self.guests = [FakeGuest("driver", 1), FakeGuest("peer", 2)]
        self.meter = rcm_vm.HostMeter(self.guests)
        # Each sample: the host's busy and total ticks, then each guest's.
        self.samples = iter([
            ((100, 200), [10, 20]),  # run 1 begins
            ((280, 400), [110, 120]),  # run 1 ends: 90% busy, 100 ticks each
            ((300, 500), [110, 120]),  # run 2 begins
            ((350, 600), [111, 122]),  # run 2 ends: 50% busy
        ])
        self.meter.sample = lambda: next(self.samples)

    def tearDown(self):
        self.dir.cleanup()

    def feed(self, data, chunk):
        """Appends `data` to the output in pieces of `chunk` bytes, polling
        after each, as the guest writes and the host polls."""
        for start in range(0, len(data), chunk):
            with open(self.path, "ab") as f:
                f.write(data[start:start + chunk])
            self.meter.poll(self.path)

    def annotated(self):
        with open(self.path) as f:
            return self.meter.annotate(f.read().splitlines())

    def check_two_runs(self):
        hz = os.sysconf("SC_CLK_TCK")
        out = self.annotated()
        self.assertEqual(len(out), 5, out)
        self.assertFalse(any(line.startswith("RCM-HOST-MARK") for line in out), out)
        self.assertEqual(out[1], "c    round 1: rdma_cm, 1000 connections")
        first = f"host: 90% of {os.cpu_count()} CPUs busy; QEMU CPU per item: " \
            f"driver {100_000 / hz / 1000:.2f} ms, peer {100_000 / hz / 1000:.2f} ms"
        self.assertEqual(out[2], "     " + first)
        second = f"host: 50% of {os.cpu_count()} CPUs busy; QEMU CPU per item: " \
            f"driver {1000 / hz / 10:.2f} ms, peer {2000 / hz / 10:.2f} ms"
        self.assertEqual(out[4], "     " + second)

    def test_marks_split_across_polls(self):
        for chunk in (1, 7, 64, len(RUN)):
            with self.subTest(chunk=chunk):
                self.setUp()
                self.feed(RUN, chunk)
                self.check_two_runs()

    def test_earlier_runs_log_replaced(self):
        # The first poll still finds a longer log of an earlier run; the
        # guest's output then starts over in a new file.
        with open(self.path, "wb") as f:
            f.write(run_log(["an earlier run's line"] * 50))
        self.meter.poll(self.path)
        os.remove(self.path)
        self.feed(RUN, 16)
        self.check_two_runs()

    def test_report_without_a_measured_run(self):
        with open(self.path, "wb") as f:
            f.write(run_log(["RCM-HOST-MARK report"]))
        self.meter.poll(self.path)
        self.assertEqual(self.annotated(), ["     host: not measured (no step ended)"])


if __name__ == "__main__":
    unittest.main()
