#!/usr/bin/env python3
# benchmark-report PART FILE...: puts the newest figures of one part of scripts/benchmark.sh (host,
# rig, icount, usb, pipewire, vcam, console, screen, testpattern, audio, voice) into docs/benchmarks.md, between its markers
# `<!-- benchmark PART -->` and `<!-- /benchmark PART -->`, and appends the same to
# docs/benchmarks-history.md: the command, the date, the commit, the machine, then each FILE (the
# tables `mediadevices-benchmark …` printed, in a text block). scripts/benchmark.sh calls it after
# each part; nothing in these places is written by hand.
import datetime, os, platform, subprocess, sys

def main():
    if len(sys.argv) < 3:
        sys.exit("usage: scripts/benchmark-report.py PART FILE...")
    part, files = sys.argv[1], sys.argv[2:]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.chdir(root)
    def run(*command):
        return subprocess.run(command, capture_output=True, text=True).stdout.strip()
    commit = run("git", "rev-parse", "--short", "HEAD") or "unknown"
    dirty = " (with uncommitted changes)" if run("git", "status", "--porcelain", "--untracked-files=no") else ""
    model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.machine())
    where = {"host": "this machine",
             "screen": "the rig for KMS and the X11 -icount file (QEMU TCG, 1 vCPU, instruction-timed), this machine for X11 and the portal (native time)",
             "audio": "this machine for the rings and resamplers, the rig (QEMU TCG, 2 vCPUs) for the devices and servers",
             "voice": "the rig (QEMU TCG, 1 vCPU, instruction-timed; release test build)",
             "testpattern": "this machine (native time) and the rig (QEMU TCG, 1 vCPU, instruction-timed)"}.get(part) \
        or "the rig (QEMU TCG, 1 vCPU" + (", instruction-timed" if part in ("icount", "pipewire", "vcam", "console") else "") + ")"
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    command = {"audio": "scripts/audio-benchmark.sh", "voice": "scripts/audio-benchmark.sh voice"}.get(part, f"scripts/benchmark.sh {part}")
    head = (f"`{command}`, {when}, commit `{commit}`{dirty}; {where}, host {os.cpu_count()} cores "
            f"({model}), load average {os.getloadavg()[0]:.1f} at the end.")
    blocks = []
    for file in files:
        text = open(file, encoding="utf-8").read().rstrip()
        if not text:
            sys.exit(f"benchmark-report: {file} is empty: the part wrote no figures")
        blocks.append(f"{os.path.basename(file)}:\n\n```text\n{text}\n```")
    body = head + "\n\n" + "\n\n".join(blocks) + "\n"

    page = "docs/benchmarks.md"
    text = open(page, encoding="utf-8").read()
    begin, end = f"<!-- benchmark {part} -->", f"<!-- /benchmark {part} -->"
    if begin not in text or end not in text:
        sys.exit(f"benchmark-report: {page} has no markers {begin} … {end}")
    before, rest = text.split(begin, 1)
    _, after = rest.split(end, 1)
    open(page, "w", encoding="utf-8").write(before + begin + "\n" + body + end + after)

    history = "docs/benchmarks-history.md"
    with open(history, "a", encoding="utf-8") as file:
        file.write(f"\n## {when}: {part}\n\n{body}")
    print(f"benchmark-report: {part} written to {page} and appended to {history}")

main()
