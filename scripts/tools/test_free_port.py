"""Tests of free_port.py: it prints one port, and a listener can bind it.

Run by scripts/lint.sh (python3 -m unittest discover -s scripts/tools).
"""
import os, socket, subprocess, sys, unittest

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "free_port.py")


class FreePortTests(unittest.TestCase):
    def run_tool(self, *arguments):
        return subprocess.run([sys.executable, "-S", TOOL, *arguments], capture_output=True, text=True)

    def test_prints_a_port_a_listener_can_bind(self):
        done = self.run_tool()
        self.assertEqual(done.returncode, 0, done.stderr)
        port = int(done.stdout)
        self.assertTrue(1024 <= port <= 65535, port)
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))
            s.listen()

    def test_a_port_in_use_is_not_printed(self):
        with socket.socket() as held:
            held.bind(("127.0.0.1", 0))
            held.listen()
            taken = held.getsockname()[1]
            ports = {int(self.run_tool().stdout) for _ in range(20)}
            self.assertNotIn(taken, ports)

    def test_an_unknown_argument_is_refused(self):
        done = self.run_tool("--port")
        self.assertEqual(done.returncode, 2)


if __name__ == "__main__":
    unittest.main()
