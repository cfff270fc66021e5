"""Tests of api_from_symbol_graph.py: the lines of a module's interface and the undocumented symbols.

Run by scripts/lint.sh (python3 -m unittest discover -s scripts/tools).
"""
import json, os, subprocess, sys, tempfile, unittest

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "api_from_symbol_graph.py")


def symbol(path, declaration, doc=True):
    found = {"pathComponents": path, "declarationFragments": [{"kind": "text", "spelling": part} for part in declaration]}
    if doc:
        found["docComment"] = {"lines": [{"text": "Does a thing."}]}
    return found


class APITests(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.mkdtemp()

    def tearDown(self):
        subprocess.run(["rm", "-rf", self.folder])

    def write(self, name, symbols):
        with open(os.path.join(self.folder, name), "w") as file:
            json.dump({"symbols": symbols}, file)

    def run_tool(self, module):
        return subprocess.run([sys.executable, TOOL, self.folder, module], capture_output=True, text=True)

    def test_interface_lines(self):
        self.write("Mod.symbols.json", [
            symbol(["Zebra"], ["struct ", "Zebra"]),
            symbol(["Zebra", "run(fast:)"], ["func ", "run(fast:", " Bool)\n", " throws"]),
            symbol(["Zebra", "hashValue"], ["var ", "hashValue: Int"], doc=False),   # from Hashable: no doc asked
            symbol(["Apple"], ["enum ", "Apple"]),
        ])
        self.write("Mod@Swift.symbols.json", [symbol(["Array", "total"], ["var total: Int"])])
        self.write("Other.symbols.json", [symbol(["NotOurs"], ["struct NotOurs"], doc=False)])
        self.write("Modern.symbols.json", [symbol(["AlsoNotOurs"], ["struct AlsoNotOurs"], doc=False)])
        done = self.run_tool("Mod")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.splitlines(), [
            "# The public interface of the Mod module, one symbol a line (path | declaration),",
            "# written by `scripts/api.sh record` from the symbol graph and compared by `scripts/api.sh check` in CI.",
            "Apple | enum Apple",
            "Swift.Array.total | var total: Int",
            "Zebra | struct Zebra",
            "Zebra.hashValue | var hashValue: Int",
            "Zebra.run(fast:) | func run(fast: Bool)  throws",
        ])
        self.assertEqual(done.stderr, "")

    def test_undocumented_symbols_exit_3(self):
        self.write("Mod.symbols.json", [symbol(["A"], ["struct A"]), symbol(["A", "b"], ["var b: Int"], doc=False)])
        self.write("Mod@Core.symbols.json", [symbol(["C", "d()"], ["func d()"], doc=False)])
        done = self.run_tool("Mod")
        self.assertEqual(done.returncode, 3)
        self.assertEqual(done.stderr.splitlines(), ["api: public symbol without a doc comment: A.b",
                                                    "api: public symbol without a doc comment: Core.C.d()"])
        self.assertEqual(done.stdout.splitlines()[2:], ["A | struct A", "A.b | var b: Int", "Core.C.d() | func d()"])


if __name__ == "__main__":
    unittest.main()
