"""Tests of umbrella_compile_flags.py: the arguments kept from SwiftPM's build manifest.

Run by scripts/lint.sh (python3 -m unittest discover -s scripts/tools).
"""
import json, os, subprocess, sys, tempfile, unittest

import umbrella_compile_flags as tool

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "umbrella_compile_flags.py")

# A manifest shaped like SwiftPM's .build/debug.yaml: the umbrella's command after a look-alike
# (MediaDevicesCore's), each command's args on one line as a JSON list.
CORE_ARGS = ["/opt/swift/usr/bin/swiftc", "-module-name", "MediaDevicesCore", "-I", "/core/only"]
UMBRELLA_ARGS = ["/opt/swift/usr/bin/swiftc", "-module-name", "MediaDevices", "-emit-dependencies",
                 "-I", "/b/debug/Modules", "-target", "x86_64-unknown-linux-gnu", "-Xcc",
                 "-fmodule-map-file=/r/CShims/module.modulemap", "-Onone", "-I/b/checkouts/x",
                 "-module-cache-path", "/b/debug/ModuleCache", "-Xcc", "-I/usr/include/pipewire-0.3",
                 "-parse-as-library", "-Isystem"]
MANIFEST = f"""client:
  name: basic
commands:
  "C.MediaDevicesCore-x86_64-unknown-linux-gnu-debug.module":
    tool: shell
    args: {json.dumps(CORE_ARGS)}
  "C.MediaDevices-x86_64-unknown-linux-gnu-debug.module":
    tool: shell
    inputs: ["/r/Sources/MediaDevices/DeviceMonitor.swift"]
    args: {json.dumps(UMBRELLA_ARGS)}
    deps: "/b/debug/MediaDevices.build/MediaDevices.d"
"""


class CompileFlagsTests(unittest.TestCase):
    def test_kept_arguments(self):
        self.assertEqual(tool.compile_flags(MANIFEST), [
            "-I", "/b/debug/Modules", "-target", "x86_64-unknown-linux-gnu",
            "-Xcc", "-fmodule-map-file=/r/CShims/module.modulemap", "-I/b/checkouts/x",
            "-module-cache-path", "/b/debug/ModuleCache", "-Xcc", "-I/usr/include/pipewire-0.3", "-Isystem"])

    def test_printed_one_a_line(self):
        with tempfile.NamedTemporaryFile("w", suffix=".yaml") as manifest:
            manifest.write(MANIFEST)
            manifest.flush()
            done = subprocess.run([sys.executable, "-S", TOOL, manifest.name], capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.split("\n")[:4], ["-I", "/b/debug/Modules", "-target", "x86_64-unknown-linux-gnu"])
        self.assertEqual(len(done.stdout.splitlines()), 12)

    def test_release_manifest(self):
        # The suite's build is release (scripts/swift-environment.sh's suite_build): its manifest
        # names the command "...-release.module".
        release = MANIFEST.replace("-debug.module", "-release.module").replace("/b/debug/", "/b/release/")
        self.assertEqual(tool.compile_flags(release)[:2], ["-I", "/b/release/Modules"])

    def test_no_umbrella_command(self):
        only_core = MANIFEST.split('  "C.MediaDevices-')[0]
        with self.assertRaises(SystemExit) as exit:
            tool.compile_flags(only_core)
        self.assertIn("no compile command of the MediaDevices module", str(exit.exception.code))


if __name__ == "__main__":
    unittest.main()
