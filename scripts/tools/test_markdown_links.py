"""Tests of markdown_links.py on a small git repository of Markdown files.

Run by scripts/lint.sh (python3 -m unittest discover -s scripts/tools).
"""
import os, subprocess, sys, tempfile, unittest

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "markdown_links.py")


class MarkdownLinksTests(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp()
        subprocess.run(["git", "init", "-q", self.root], check=True)

    def tearDown(self):
        subprocess.run(["rm", "-rf", self.root])

    def repository(self, files):
        for name, text in files.items():
            os.makedirs(os.path.join(self.root, os.path.dirname(name)), exist_ok=True)
            with open(os.path.join(self.root, name), "w", encoding="utf-8") as file:
                file.write(text)
        subprocess.run(["git", "add", "-A"], cwd=self.root, check=True)
        return subprocess.run([sys.executable, "-S", TOOL], cwd=self.root, capture_output=True, text=True)

    def test_good_links(self):
        done = self.repository({
            "README.md": "See [the guide](docs/guide.md#start), [home](https://example.org), [top](#top), [code](Sources/a.swift).",
            "docs/guide.md": "Back to [the readme](../README.md).",
            "Sources/a.swift": "",
        })
        self.assertEqual(done.returncode, 0, done.stdout)
        self.assertEqual(done.stdout, "docs: the relative links of 2 Markdown files: all inside the repository and found\n")

    def test_broken_links(self):
        done = self.repository({
            "README.md": "A [missing file](docs/nothing.md) and one [outside](../elsewhere/x.md).\n"
                         "```\n[in code](not/checked.md)\n```\n",
            "docs/guide.md": "[up too far](../../x.md) and [fine](../README.md)",
            "empty.md": "",              # no links: counted, nothing to check
        })
        self.assertEqual(done.returncode, 1)
        self.assertEqual(done.stdout.splitlines(), [
            "docs: README.md: docs/nothing.md names nothing",
            "docs: README.md: ../elsewhere/x.md leaves the repository",
            "docs: docs/guide.md: ../../x.md leaves the repository",
            "docs: the relative links of 3 Markdown files: 3 broken",
        ])


if __name__ == "__main__":
    unittest.main()
