#!/usr/bin/env python3
"""Runs an XCTest bundle and ends a test that runs past a limit, saying where it hung.

Called by scripts/test.sh inside each rig boot, under `python3 -S`:
    python3 -S scripts/tools/xctest_watchdog.py --limit SECONDS -- XCTEST FILTER
The command runs on a pseudo-terminal (its output stays line-buffered, as on the rig's serial
console) and its output is passed through unchanged. The watchdog follows XCTest's
"Test Case 'C.t' started" and "... passed|failed" lines. When one test has run LIMIT seconds
without ending (or LIMIT seconds went by after a test ended with no other started, or no test
started at all), it prints what the machine was doing (every process, the kernel stack and wait
channel of each thread of the command and its descendants, the kernel log's tail), then a line in
XCTest's failure format naming the test,
    watchdog:0: error: C.t : ran 600 s without ending ...
sends the command SIGABRT (Swift's runtime prints each thread's backtrace), SIGKILL after
--grace seconds, and exits with status 3. Otherwise its status is the command's.
A hung test in a boot of the whole suite otherwise waited out the boot's timeout (70 minutes in
CI) and said nothing of where it hung.
"""
import argparse, os, pty, re, select, signal, subprocess, sys, termios, time

WATCHDOG_STATUS = 3
STARTED = re.compile(rb"^Test Case '([A-Za-z0-9_.]+)' started")
ENDED = re.compile(rb"^Test Case '([A-Za-z0-9_.]+)' (passed|failed)")


def descendants(pid):
    """pid and every process below it, from /proc's parent links."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as file:
                fields = file.read().rsplit(b")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
        except (OSError, IndexError, ValueError):
            continue                     # gone while we looked
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        found.append(current)
        queue.extend(children.get(current, []))
    return found


def read(path, limit=4000):
    try:
        with open(path, "rb") as file:
            return file.read(limit).decode("utf-8", "replace").strip()
    except OSError as error:
        return f"({error.strerror})"


def report(pid, out):
    """What the machine was doing: processes, the command's threads' kernel stacks, dmesg."""
    lines = ["watchdog: the processes (kernel threads left out):"]
    ps = subprocess.run(["ps", "--ppid", "2", "-p", "2", "--deselect", "-o", "pid,ppid,stat,etime,time,wchan:30,args"], capture_output=True, text=True)
    lines += ["  " + line[:300] for line in ps.stdout.splitlines()]
    for process in descendants(pid):
        lines.append(f"watchdog: process {process} ({read(f'/proc/{process}/cmdline').replace(chr(0), ' ')[:200]}), its threads:")
        try:
            tasks = sorted(os.listdir(f"/proc/{process}/task"), key=int)
        except OSError:
            continue
        for task in tasks:
            base = f"/proc/{process}/task/{task}"
            stack = read(f"{base}/stack").replace("\n", " <- ")
            lines.append(f"  {task} {read(base + '/comm')} state {(read(base + '/stat').rsplit(')', 1)[-1].split() or ['?'])[0]} wchan {read(base + '/wchan')}: {stack[:600]}")
    dmesg = subprocess.run(["dmesg"], capture_output=True, text=True)
    lines.append("watchdog: the kernel log's last 40 lines:")
    lines += ["  " + line for line in dmesg.stdout.splitlines()[-40:]]
    out.write(("\n".join(lines) + "\n").encode())
    out.flush()


def main():
    parser = argparse.ArgumentParser(description="Runs an XCTest bundle; a test running past --limit seconds is reported and ended (exit 3).")
    parser.add_argument("--limit", type=float, required=True, help="seconds one test may run")
    parser.add_argument("--grace", type=float, default=120, help="seconds between SIGABRT (its backtrace) and SIGKILL")
    parser.add_argument("command", nargs="+", help="the XCTest bundle and its arguments")
    args = parser.parse_args()
    out = sys.stdout.buffer
    leader, follower = pty.openpty()
    attributes = termios.tcgetattr(follower)
    attributes[1] &= ~termios.OPOST        # "\n" stays "\n" (no "\r\n"), as the log had it
    termios.tcsetattr(follower, termios.TCSANOW, attributes)
    child = subprocess.Popen(args.command, stdin=subprocess.DEVNULL, stdout=follower, stderr=follower, close_fds=True)
    os.close(follower)
    running, since, last_ended, partial = None, time.monotonic(), None, b""
    while True:
        ready, _, _ = select.select([leader], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:              # EIO: every holder of the terminal closed it
                chunk = b""
            if not chunk:
                break
            out.write(chunk)
            out.flush()
            partial += chunk
            *lines, partial = partial.split(b"\n")
            for line in lines:
                if (match := STARTED.match(line)):
                    running, since = match.group(1).decode(), time.monotonic()
                elif (match := ENDED.match(line)):
                    running, since, last_ended = None, time.monotonic(), match.group(1).decode()
        elif child.poll() is not None:
            break                        # it ended; a daemon it left may hold the terminal open
        if time.monotonic() - since > args.limit:
            elapsed = time.monotonic() - since
            report(child.pid, out)
            if running:
                name, what = running, f"ran {elapsed:.0f} s without ending"
            else:
                name = last_ended or "(none)"
                what = f"no test started in the {elapsed:.0f} s after it ended" if last_ended else f"no test started in {elapsed:.0f} s"
            out.write((f"watchdog:0: error: {name} : {what} (the limit: {args.limit:.0f} s); what the machine was doing is above; "
                       f"the test process was sent SIGABRT (its threads' backtraces follow)\n").encode())
            out.flush()
            child.send_signal(signal.SIGABRT)
            deadline = time.monotonic() + args.grace
            while child.poll() is None and time.monotonic() < deadline:
                ready, _, _ = select.select([leader], [], [], 1.0)
                if ready:
                    try:
                        chunk = os.read(leader, 65536)
                    except OSError:
                        chunk = b""
                    if not chunk:
                        break
                    out.write(chunk)
                    out.flush()
            if child.poll() is None:
                child.kill()
            child.wait()
            return WATCHDOG_STATUS
    return child.wait()


if __name__ == "__main__":
    sys.exit(main())
