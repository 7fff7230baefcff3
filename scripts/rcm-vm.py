#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Boot rcm's QEMU test guests and run one kselftest (or a guest script) in them.

One or two TCG guests per run. Each has a virtio-net NIC with a static
address and an rxe device on it (a test that asks for devices=2 gets a
second NIC on a second wire, with rxe1 on it). Two guests are wired back to
back by a QEMU stream netdev per wire over a unix socket in a private temp
directory, so no host address is ever involved. The peer guest starts first (it owns the socket)
and serves the driver guest's commands; the driver runs the test and powers
off. Each guest's kernel log goes to its first serial port, test output to
the second, so the host gets results and the full dmesg separately.

Exit status: 0 pass, 1 fail (including a hung guest or a kernel bug report
in either console), 4 skip, 2 usage/setup error.
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SELFTEST_DIR = os.path.join(ROOT, "tools/testing/selftests/rcm")

# Kernel log lines that mean a bug was hit: same list as rcm_lib.sh.
SPLAT_RE = re.compile(
    r"BUG:|WARNING:|KASAN:|Oops|general protection fault|Kernel panic|UBSAN:|"
    r"possible circular locking|possible recursive locking|inconsistent lock state|"
    r"suspicious RCU usage|list_(add|del) corruption|refcount_t:|panicked at|"
    r"kernel BUG|Call Trace:|blocked for more than|detected stalls? on CPU"
)

# The kernel's stall detectors, sized for TCG on a loaded host. A TCG
# guest's clock is the host's: while the host runs other work instead of a
# vCPU thread, guest time still passes, and a kthread that was runnable all
# along looks starved (an RCU grace-period kthread "starved for 43204
# jiffies" beside a kernel build, with the kernel's 21 s stall timeout).
# Each limit is about three times the longest such gap seen, so only a
# stall far longer than the host can cause is reported; the detectors stay
# on and fail a run (scripts/guest/rcm-stall.sh checks they still fire).
TCG_WATCHDOGS = {
    "rcupdate.rcu_cpu_stall_timeout": 120,      # s (the kernel's limit: 300)
    "watchdog_thresh": 30,                      # s; a soft lockup at twice this
    "sysctl.kernel.hung_task_timeout_secs": 180,
}

# Wire n (eth<n>, rxe<n>) is the subnet 10.0.<n>.0/24.
GUEST_ADDRS = {"driver": "10.0.0.1", "peer": "10.0.0.2"}
GUEST_MACS = {"driver": "52:54:00:00:00:01", "peer": "52:54:00:00:00:02"}


def guest_mac(role, wire):
    return GUEST_MACS[role][:-5] + f"{wire:02x}" + GUEST_MACS[role][-3:]


def log(msg):
    print(f"# rcm-vm: {msg}", flush=True)


def test_header(path):
    """Read the 'rcm-vm:' line of a test: guests, CM modes, RDMA devices
    per guest and timeout."""
    spec = {"guests": 1, "modes": ["c"], "timeout": 120, "devices": 1}
    with open(path) as f:
        for line in f:
            m = re.match(r"#\s*rcm-vm:\s*(.*)", line)
            if not m:
                continue
            for item in m.group(1).split():
                key, _, val = item.partition("=")
                if key == "guests":
                    spec["guests"] = int(val)
                elif key == "modes":
                    spec["modes"] = val.split(",")
                elif key == "timeout":
                    spec["timeout"] = int(val)
                elif key == "devices":
                    spec["devices"] = int(val)
            break
    if len(spec["modes"]) < spec["guests"]:
        spec["modes"] += spec["modes"][-1:] * (spec["guests"] - len(spec["modes"]))
    return spec


class Guest:
    def __init__(self, role, args, workdir, mode, extra_cmdline, netdevs, pcap=None):
        self.role = role
        self.console = os.path.join(workdir, f"{role}-console.log")
        self.output = os.path.join(workdir, f"{role}-output.log")
        cmdline = [
            # pci=noacpi: under TCG+KASAN the _PRT AML method runs into
            # ACPICA's 30 s loop timeout, twice; the PIRQ table is enough.
            # tsc=reliable: TCG's TSC follows the host's clock on every vCPU,
            # but the clocksource watchdog, its reads delayed by a busy host,
            # sees skew against the HPET and moves the guest to the HPET,
            # whose every read is an emulated MMIO access (mid-run, in one
            # guest only: make bench then times a slower guest).
            "console=ttyS0", "loglevel=7", "panic=-1", "pci=noacpi", "tsc=reliable",
            "oops=panic" if args.panic_on_oops else "",
            f"rcmvm.role={role}", f"rcmvm.mode={mode}", f"rcmvm.addr={GUEST_ADDRS[role]}",
        ] + ([f"{k}={v}" for k, v in TCG_WATCHDOGS.items()] if args.accel == "tcg" else []) + extra_cmdline
        self.argv = [
            args.qemu, "-accel", args.accel, "-cpu", "max,la57=off" if args.accel == "tcg" else "host",
            "-smp", str(args.cpus), "-m", str(args.memory), "-nodefaults", "-no-reboot",
            "-display", "none", "-kernel", args.kernel, "-initrd", args.initrd,
            "-append", " ".join(c for c in cmdline if c),
            "-serial", "mon:stdio" if args.shell else f"file:{self.console}",
            "-serial", f"file:{self.output}",
            "-device", "virtio-rng-pci",
        ]
        for wire, netdev in enumerate(netdevs or []):
            self.argv += ["-netdev", f"{netdev},id=n{wire}",
                          "-device", f"virtio-net-pci,netdev=n{wire},mac={guest_mac(role, wire)}"]
        if netdevs and pcap:
            self.argv += ["-object", f"filter-dump,id=f0,netdev=n0,file={pcap}"]
        self.proc = None

    def start(self, interactive=False):
        # An earlier run's logs go first: the host reads the output while
        # the guest runs (HostMeter).
        for path in (self.console, self.output):
            if os.path.exists(path):
                os.remove(path)
        if interactive:
            self.proc = subprocess.Popen(self.argv)
            return
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL,
                                     stdout=open(self.console + ".qemu", "w"),
                                     stderr=subprocess.STDOUT, start_new_session=True)

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        if self.running():
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def read(self, which):
        try:
            with open(which, errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""


HOST_MARK = "RCM-HOST-MARK "


def host_busy_ticks():
    """Busy and total CPU ticks of the host, from /proc/stat's first line."""
    with open("/proc/stat") as f:
        ticks = [int(v) for v in f.readline().split()[1:]]
    idle = ticks[3] + ticks[4]  # idle, iowait
    return sum(ticks) - idle, sum(ticks)


def process_ticks(pid):
    """User + system CPU ticks a process used so far (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0
    return int(fields[11]) + int(fields[12])


class HostMeter:
    """What the host spends while a guest script runs a measured step.

    The script brackets the step with lines "RCM-HOST-MARK begin" and
    "RCM-HOST-MARK end <count>" on its output; the meter samples the host's
    CPU and each guest's QEMU process at each mark (as soon as it sees it,
    within a poll). A later "RCM-HOST-MARK report" line is printed as the
    last step's share: how busy the host's CPUs were and the CPU each
    guest took per counted item.

    Both guests run on the same host cores, so when they are busy the run's
    time is their CPU, whichever guest uses it.
    """

    def __init__(self, guests):
        self.guests = guests
        self.seen = 0
        self.begin = None
        self.results = []

    def sample(self):
        return (host_busy_ticks(), [process_ticks(g.proc.pid) for g in self.guests])

    def poll(self, path):
        """Samples at the marks among the lines the guest wrote since the
        last poll, and returns those lines (complete ones only)."""
        try:
            with open(path, "rb") as f:
                if os.fstat(f.fileno()).st_size < self.seen:
                    self.seen = 0  # a log of an earlier run, replaced
                f.seek(self.seen)
                new = f.read()
        except FileNotFoundError:
            return []
        new = new[:new.rfind(b"\n") + 1]
        self.seen += len(new)
        lines = new.decode(errors="replace").splitlines()
        for line in lines:
            if not line.startswith(HOST_MARK):
                continue
            words = line[len(HOST_MARK):].split()
            if words[:1] == ["begin"]:
                self.begin = self.sample()
            elif words[:1] == ["end"] and self.begin:
                count = int(words[1]) if len(words) > 1 and words[1].isdigit() else 1
                self.results.append(self.describe(self.begin, self.sample(), max(count, 1)))
                self.begin = None
        return lines

    def describe(self, before, after, count):
        (busy0, total0), guests0 = before
        (busy1, total1), guests1 = after
        busy = 100 * (busy1 - busy0) / max(total1 - total0, 1)
        hz = os.sysconf("SC_CLK_TCK")
        per = ", ".join(f"{g.role} {1000 * (t1 - t0) / hz / count:.2f} ms"
                        for g, t0, t1 in zip(self.guests, guests0, guests1))
        return f"host: {busy:.0f}% of {os.cpu_count()} CPUs busy; QEMU CPU per item: {per}"

    def annotate(self, lines):
        """The output with each report mark replaced by the last step's
        result, the other marks dropped."""
        return Annotator(self).lines(lines)


class Annotator:
    """Turns a guest's output, read in order (all at once or as it comes),
    into what is shown: a report mark becomes the host meter's result of
    the step that ended last, the other marks are dropped."""

    def __init__(self, meter):
        self.meter = meter
        self.used = 0
        self.last = "host: not measured (no step ended)"

    def lines(self, lines):
        out = []
        for ln in lines:
            if ln.startswith(HOST_MARK + "end"):
                if self.used < len(self.meter.results):
                    self.last = self.meter.results[self.used]
                    self.used += 1
                else:
                    self.last = "host: not measured (a mark was missed)"
            elif ln.startswith(HOST_MARK + "report"):
                out.append("     " + self.last)
            elif not ln.startswith(HOST_MARK):
                out.append(ln)
        return out


def splats(text):
    """Each kernel bug report in a console log, with some context."""
    lines = text.splitlines()
    reports, i = [], 0
    while i < len(lines):
        if SPLAT_RE.search(lines[i]):
            reports.append("\n".join(lines[max(0, i - 2):i + 40]))
            i += 40
        else:
            i += 1
    return reports


def report_title(report):
    """The line of a kernel report that names it, without its timestamp."""
    for ln in report.splitlines():
        if SPLAT_RE.search(ln):
            return re.sub(r"^\[\s*[0-9.]+\]\s*", "", ln).strip()
    return report.splitlines()[0] if report else ""


def diagnose(name, workdir, guests, driver, tap, reports):
    """What a failed run shows on the terminal: the first kernel report's
    title, guest and context (every report's goes to a file), each failed
    point with the lines the test printed for it, the last line the guest
    printed, where the whole logs are, and, if the test never started, the
    end of each guest's console."""
    print(f"# ---- {name} failed: diagnosis ----")
    if reports:
        excerpts = os.path.join(workdir, "kernel-reports.txt")
        with open(excerpts, "w") as f:
            for g, rep in reports:
                f.write(f"==== the {g.role} guest ====\n{rep}\n")
        g, rep = reports[0]
        print(f"#   first kernel report, in the {g.role} guest: {report_title(rep)}")
        # Its context here too: CI keeps the terminal, not the files.
        for ln in rep.splitlines()[:REPORT_LINES_SHOWN]:
            print(f"#   | {ln}")
        more = f"{len(reports)} reports in all" if len(reports) > 1 else "one report"
        print(f"#   ({more}; each with its context in {excerpts})")
    for ln in failed_points(tap):
        print(f"#   {ln}")
    last = next((ln for ln in reversed(tap) if ln.strip()), "")
    print(f"#   the last line the guest printed: {last or '(nothing)'}")
    # A test that never started: how far each guest's boot came.
    started = any(re.match(r"\s*TAP version", ln) for ln in tap)
    for g in guests:
        print(f"#   the {g.role} guest's kernel log: {g.console}")
        if not started:
            for ln in console_tail(g.console):
                print(f"#   | {ln}")
    print(f"#   the driver guest's output: {driver.output}")


# Lines of a kernel report, and of a console's end, a diagnosis prints.
REPORT_LINES_SHOWN = 30
CONSOLE_TAIL_SHOWN = 15


def console_tail(path):
    """The last lines of a guest's console log, if it can be read."""
    try:
        with open(path, errors="replace") as f:
            return f.read().splitlines()[-CONSOLE_TAIL_SHOWN:]
    except OSError:
        return []


def failed_points(tap, context=25):
    """The TAP lines of each failed point of a test, with the diagnostic
    lines (``# # ...``) the test printed just before it."""
    out = []
    for i, ln in enumerate(tap):
        if re.match(r"#\s*not ok \d+", ln):
            j = i
            while j > 0 and i - j < context and re.match(r"#\s*#", tap[j - 1]):
                j -= 1
            out += tap[j:i + 1]
    return out


def run(args):
    spec = test_header(args.script) if args.script else {"guests": 1, "modes": ["c"], "timeout": 300, "devices": 1}
    if args.guests:
        spec["guests"] = args.guests
    if args.modes:
        spec["modes"] = args.modes + args.modes[-1:] * (spec["guests"] - len(args.modes))
    timeout = args.timeout or spec["timeout"]
    name = os.path.basename(args.script or args.guest_exec or "shell")
    workdir = args.logdir or tempfile.mkdtemp(prefix="rcm-vm-")
    os.makedirs(workdir, exist_ok=True)
    sockdir = tempfile.mkdtemp(prefix="rcm-wire-")
    devices = spec["devices"]
    socks = [os.path.join(sockdir, f"wire{n}.sock") for n in range(devices)]

    two = spec["guests"] == 2
    common = [f"rcmvm.timeout={timeout}", f"rcmvm.devices={devices}"]
    if os.environ.get("RCM_CAMPAIGN_SEED", "").isdigit():
        # replays a seeded test (the MAD campaign in rcm_cm_wire.sh)
        common.append(f"rcmvm.seed={os.environ['RCM_CAMPAIGN_SEED']}")
    for var in ("RCM_BENCH_CONNS", "RCM_BENCH_NVME_CONNECTS", "RCM_BENCH_STEP_CONNS",
                "RCM_BENCH_HOLD_CONNS", "RCM_BENCH_ROUNDS", "RCM_BENCH_LOCK_TIMES",
                "RCM_BENCH_CM_SHARES", "RCM_BENCH_SHARE_TOP", "RCM_BENCH_CM_COUNTS",
                "RCM_BENCH_COUNT_CONNS",
                "RCM_BENCH_PROFILE_TOP", "RCM_BENCH_PROFILE_INCLUSIVE",
                "RCM_BENCH_COMMAND_IDS", "RCM_BENCH_SCHED", "RCM_BENCH_CMTIME_SMALL_RUNS",
                "RCM_BENCH_PEER_WINDOW"):
        if os.environ.get(var, "").isdigit():
            # sizes of make bench's runs (scripts/guest/rcm-bench.sh)
            common.append(f"rcmvm.{var}={os.environ[var]}")
    for var in ("RCM_BENCH_RDMA_POINTS", "RCM_BENCH_CMTIME_POINTS"):
        if re.fullmatch(r"[0-9:,]+", os.environ.get(var, "")):
            # lists of sizes, comma-separated (spaces end a boot argument)
            common.append(f"rcmvm.{var}={os.environ[var]}")
    for var in ("RCM_BENCH_CALLERS_OF", "RCM_BENCH_CALLEES_OF", "RCM_BENCH_HOT_OFFSETS"):
        if re.fullmatch(r"[A-Za-z0-9_,]+", os.environ.get(var, "")):
            # functions the profile lists callers, callees or offsets of
            # (development)
            common.append(f"rcmvm.{var}={os.environ[var]}")
    if re.fullmatch(r"[a-z_,]+", os.environ.get("RCM_BENCH_ONLY", "")):
        # the subset of make bench's runs to do
        common.append(f"rcmvm.RCM_BENCH_ONLY={os.environ['RCM_BENCH_ONLY']}")
    if re.fullmatch(r"[a-z_0-9,]+", os.environ.get("RCM_ONLY", "")):
        # a subset of a test's points (development; rcm_harden.sh)
        common.append(f"rcmvm.RCM_ONLY={os.environ['RCM_ONLY']}")
    if os.environ.get("RCM_TEST_FULL") == "1":
        # the long variants of the scale scenarios (make test-full)
        common.append("rcmvm.full=1")
    if args.script:
        common.append(f"rcmvm.test={os.path.basename(args.script)}")
    if args.guest_exec:
        common.append(f"rcmvm.exec={args.guest_exec}")
    if args.shell:
        common.append("rcmvm.shell=1")
    driver_cmd = common + [f"rcmvm.peer={GUEST_ADDRS['peer'] if two else 'none'}"]
    guests = []
    if two:
        peer = Guest("peer", args, workdir, spec["modes"][1], common + [f"rcmvm.peer={GUEST_ADDRS['driver']}"],
                     [f"stream,server=on,addr.type=unix,addr.path={s}" for s in socks])
        driver = Guest("driver", args, workdir, spec["modes"][0], driver_cmd,
                       [f"stream,server=off,addr.type=unix,addr.path={s}" for s in socks], args.pcap)
        guests = [peer, driver]
    else:
        # A lone guest still gets a NIC (rxe needs a netdev): a port on a
        # QEMU hub with nothing else on it, so its link is up and leads nowhere.
        driver = Guest("driver", args, workdir, spec["modes"][0], driver_cmd,
                       [f"hubport,hubid={n}" for n in range(devices)])
        guests = [driver]

    log(f"{name}: {spec['guests']} guest(s), {devices} RDMA device(s) each, CM mode(s) {','.join(spec['modes'][:spec['guests']])}, "
        f"accel {args.accel}, timeout {timeout}s, logs in {workdir}")
    start = time.monotonic()
    result, reason, tap = 1, "", []
    try:
        for g in guests:
            g.start(interactive=args.shell and g is driver)
            if g.role == "peer":
                # the driver's QEMU connects at start-up: wait for the sockets
                for _ in range(100):
                    if all(map(os.path.exists, socks)) or not g.running():
                        break
                    time.sleep(0.05)
        if args.shell:
            driver.proc.wait()
            return 0
        deadline = start + timeout + 60  # boot and shutdown on top of the test's own limit
        meter = HostMeter(sorted(guests, key=lambda g: g.role != "driver"))
        shown = Annotator(meter)

        def stream():
            # The guest's output as it comes (make run's narration, a
            # test's points), each mark sampled before its line is shown.
            for ln in shown.lines(meter.poll(driver.output)):
                if not ln.startswith("RCM-GUEST-EXIT"):
                    tap.append(ln)
                    print(f"    {ln}", flush=True)

        while driver.running() and time.monotonic() < deadline:
            if two and not guests[0].running():
                break
            stream()
            # Often enough that a mark is sampled within a small part of
            # the shortest measured step (about half a second).
            time.sleep(0.02)
        if driver.running():
            if two and not guests[0].running():
                reason = "the peer guest died"
            else:
                reason = f"guest hung: no result after {timeout + 60}s, killed"
        stream()
        out = driver.read(driver.output)
        m = re.search(r"^RCM-GUEST-EXIT (\d+)", out, re.M)
        if not reason:
            if not m:
                reason = "the driver guest stopped without reporting a result (kernel panic?)"
            elif re.search(r"^not ok \d+ selftests: rcm: ", out, re.M):
                reason = "test failed"
            elif re.search(r"^ok \d+ selftests: rcm: .*# SKIP", out, re.M):
                result, reason = 4, "skipped"
            elif re.search(r"^ok \d+ selftests: rcm: ", out, re.M) or args.guest_exec:
                result = 0 if m.group(1) == "0" else 1
                reason = "" if result == 0 else f"guest exit status {m.group(1)}"
            else:
                reason = "no TAP result line from the test"
    finally:
        for g in guests:
            g.kill()
        shutil.rmtree(sockdir, ignore_errors=True)

    # A bug report in either kernel log fails the run whatever the test said.
    reports = [(g, rep) for g in guests for rep in splats(g.read(g.console))]
    if reports:
        result = 1
        reason = reason or f"kernel bug report in the {reports[0][0].role} guest's log"
    if result == 1:
        diagnose(name, workdir, guests, driver, tap, reports)
    log(f"{name}: {'pass' if result == 0 else 'skip' if result == 4 else 'FAIL'}"
        f"{' (' + reason + ')' if reason else ''} in {time.monotonic() - start:.0f}s")
    return result


def probe_accel(args):
    """KVM if it really boots our kernel here, else TCG. Cached per kernel."""
    cache = os.path.join(os.path.dirname(args.kernel), "accel-probe")
    if os.path.exists(cache):
        return open(cache).read().strip()
    accel = "tcg"
    if os.access("/dev/kvm", os.R_OK | os.W_OK):
        probe = argparse.Namespace(**vars(args))
        probe.accel, probe.cpus, probe.memory = "kvm", 1, 512
        workdir = tempfile.mkdtemp(prefix="rcm-probe-")
        g = Guest("driver", probe, workdir, "c", ["rcmvm.probe=1"], [])
        g.start()
        deadline = time.monotonic() + 20
        while g.running() and time.monotonic() < deadline:
            if "RCM-PROBE-OK" in g.read(g.output):
                accel = "kvm"
                break
            time.sleep(0.2)
        g.kill()
        shutil.rmtree(workdir, ignore_errors=True)
    log(f"accelerator probe: {accel}")
    with open(cache, "w") as f:
        f.write(accel + "\n")
    return accel


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("script", nargs="?", help="kselftest script (tools/testing/selftests/rcm/...)")
    p.add_argument("--kernel", required=True, help="bzImage")
    p.add_argument("--initrd", required=True, help="guest initramfs (scripts/mkguest.sh)")
    p.add_argument("--guests", type=int, help="override the test's guest count (1 or 2)")
    p.add_argument("--modes", type=lambda s: s.split(","), help="CM mode per guest: c or rcm, e.g. rcm,c")
    p.add_argument("--timeout", type=int, help="override the test's timeout (s)")
    p.add_argument("--accel", default=os.environ.get("RCM_ACCEL", "auto"), help="tcg, kvm or auto")
    p.add_argument("--cpus", type=int, default=2)
    p.add_argument("--memory", type=int, default=2048, help="MiB per guest")
    p.add_argument("--logdir", help="keep console and output logs here")
    p.add_argument("--pcap", help="write the driver guest's traffic to this pcap file")
    p.add_argument("--guest-exec", help="run this guest script instead of a kselftest")
    p.add_argument("--shell", action="store_true", help="interactive shell on the driver's console")
    p.add_argument("--panic-on-oops", action="store_true")
    p.add_argument("--qemu", default="qemu-system-x86_64")
    args = p.parse_args()
    if not args.script and not args.guest_exec and not args.shell:
        p.error("give a test script, --guest-exec or --shell")
    if args.accel == "auto":
        args.accel = probe_accel(args)
    sys.exit(run(args))


if __name__ == "__main__":
    main()
