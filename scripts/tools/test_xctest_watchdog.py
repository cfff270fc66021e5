"""Tests of xctest_watchdog.py with small Python programs standing in for an XCTest bundle.

Run by scripts/lint.sh (python3 -m unittest discover -s scripts/tools).
"""
import os, subprocess, sys, time, unittest

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "xctest_watchdog.py")


def watch(program, limit=2, grace=5):
    """Runs `program` (Python source) under the watchdog: (status, output, seconds)."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-S", TOOL, "--limit", str(limit), "--grace", str(grace), "--",
                           sys.executable, "-S", "-c", program], capture_output=True, timeout=60)
    return done.returncode, done.stdout.decode(), time.monotonic() - started


class XCTestWatchdogTests(unittest.TestCase):
    def test_output_and_status_pass_through(self):
        status, output, _ = watch("print(\"Test Case 'A.b' started at x\"); print(\"Test Case 'A.b' passed (0.1 seconds)\"); "
                                  "import sys; print('last line'); sys.exit(5)")
        self.assertEqual(status, 5)
        self.assertEqual(output, "Test Case 'A.b' started at x\nTest Case 'A.b' passed (0.1 seconds)\nlast line\n")

    def test_output_is_line_buffered_as_on_a_terminal(self):
        # A print without a flush reaches the watchdog before the program ends, as on the serial console.
        status, output, _ = watch("import os, sys; print('tty' if os.isatty(1) else 'pipe'); import time; time.sleep(0.5)")
        self.assertEqual((status, output), (0, "tty\n"))

    def test_a_test_running_past_the_limit_is_named_and_ended(self):
        status, output, seconds = watch("print(\"Test Case 'A.a' started\"); print(\"Test Case 'A.a' passed (1 seconds)\"); "
                                        "print(\"Test Case 'A.hangs' started at now\"); import time; time.sleep(50)")
        self.assertEqual(status, 3, output)
        self.assertLess(seconds, 20)
        self.assertIn("watchdog: the processes (kernel threads left out):", output)
        self.assertRegex(output, r"watchdog:0: error: A\.hangs : ran [0-9]+ s without ending \(the limit: 2 s\)")
        self.assertIn("its threads:", output)

    def test_a_hang_between_tests_names_the_last_one_that_ended(self):
        status, output, _ = watch("print(\"Test Case 'A.a' started\"); print(\"Test Case 'A.a' failed (1 seconds)\"); "
                                  "import time; time.sleep(50)")
        self.assertEqual(status, 3, output)
        self.assertRegex(output, r"watchdog:0: error: A\.a : no test started in the [0-9]+ s after it ended")

    def test_tests_each_within_the_limit_are_not_ended(self):
        status, output, _ = watch("import time\nfor n in range(4):\n    print(f\"Test Case 'A.t{n}' started\"); time.sleep(1); "
                                  "print(f\"Test Case 'A.t{n}' passed (1 seconds)\")", limit=2)
        self.assertEqual(status, 0, output)
        self.assertNotIn("watchdog", output)

    def test_a_daemon_left_holding_the_terminal_does_not_keep_it_waiting(self):
        status, output, seconds = watch("import subprocess; subprocess.Popen(['sleep', '30']); print('bye')", limit=20)
        self.assertEqual((status, output), (0, "bye\n"))
        self.assertLess(seconds, 10)


if __name__ == "__main__":
    unittest.main()
