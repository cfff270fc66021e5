"""Tests of quickstart_blocks.py: which blocks become targets, their text and their line numbers.

Run by scripts/lint.sh (python3 -m unittest discover -s scripts/tools).
"""
import os, subprocess, sys, tempfile, unittest

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "quickstart_blocks.py")


def run(folder, files):
    """Runs the tool in FOLDER on FILES {name: text}; (exit status, stdout, stderr)."""
    for name, text in files.items():
        with open(os.path.join(folder, name), "w", encoding="utf-8") as file:
            file.write(text)
    os.makedirs(os.path.join(folder, "out", "Sources"))
    done = subprocess.run([sys.executable, TOOL, "out", *files], cwd=folder, capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


def read(folder, *path):
    with open(os.path.join(folder, "out", *path), encoding="utf-8") as file:
        return file.read()


class QuickstartBlocksTests(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.mkdtemp()

    def tearDown(self):
        subprocess.run(["rm", "-rf", self.folder])

    def test_blocks_of_markdown_and_a_tutorial_file(self):
        guide = ("# Guide\n"                      # line 1
                 "\n"                             # 2
                 "```swift\n"                     # 3
                 "import MediaDevices\n"          # 4
                 "print(1)\n"                     # 5
                 "```\n"                          # 6
                 "```sh\n"                        # 7: not Swift
                 "swift build\n"                  # 8
                 "```\n"                          # 9
                 "1. A step:\n"                   # 10
                 "   ```swift\n"                  # 11: inside a list item
                 "   let a = 1\n"                 # 12
                 "     let b = 2\n"               # 13
                 "   ```\n")                      # 14
        status, out, err = run(self.folder, {"my-guide.md": guide, "tutorial-01.swift": "import MediaDevices\nlet x = 3"})
        self.assertEqual(status, 0, err)
        self.assertEqual(read(self.folder, "targets"), "my_guide_1\nmy_guide_2\ntutorial_01_1\n")
        self.assertEqual(read(self.folder, "Sources", "my_guide_1", "main.swift"),
                         '#sourceLocation(file: "my-guide.md", line: 4)\nimport MediaDevices\nprint(1)\n')
        self.assertEqual(read(self.folder, "Sources", "my_guide_2", "main.swift"),
                         '#sourceLocation(file: "my-guide.md", line: 12)\nlet a = 1\n  let b = 2\n')
        self.assertEqual(read(self.folder, "Sources", "tutorial_01_1", "main.swift"),
                         '#sourceLocation(file: "tutorial-01.swift", line: 1)\nimport MediaDevices\nlet x = 3\n')
        self.assertEqual(out, "quickstarts: 3 Swift blocks, each the main.swift of its own executable, from my-guide.md, tutorial-01.swift\n")

    def test_block_that_never_ends(self):
        status, _, err = run(self.folder, {"a.md": "text\n\n```swift\nprint(1)\n"})
        self.assertEqual(status, 1)
        self.assertIn("quickstarts: a.md:3: a ```swift block that never ends", err)

    def test_hidden_prelude_is_refused(self):
        text = "<!-- prelude:\nimport Foundation\n-->\n\n```swift\nprint(1)\n```\n"
        status, _, err = run(self.folder, {"b.md": text})
        self.assertEqual(status, 1)
        self.assertIn("quickstarts: b.md:5: a hidden prelude comment above a Swift block", err)

    def test_other_comment_above_a_block_is_fine(self):
        status, _, err = run(self.folder, {"c.md": "<!-- a note -->\n```swift\nprint(1)\n```\n"})
        self.assertEqual(status, 0, err)
        self.assertEqual(read(self.folder, "targets"), "c_1\n")


if __name__ == "__main__":
    unittest.main()
