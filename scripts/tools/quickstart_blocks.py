#!/usr/bin/env python3
"""Every ```swift block of the given documentation files, each as the main.swift of its own target.

Called by scripts/quickstarts.sh:
    python3 scripts/tools/quickstart_blocks.py OUT FILE...
FILE is a Markdown file (each ```swift block, also one indented inside a list item, is taken
without the indent) or a DocC tutorial's code file (*.swift: the whole file is one block). Block N
of FILE (counted from 1) goes to OUT/Sources/NAME_N/main.swift, NAME being FILE's base name
without its extension, non-word characters as "_", behind a #sourceLocation line naming the
documentation's own line; OUT/targets lists the targets, one a line. A block that never ends, or
one below an HTML comment holding "prelude:" (which the reader does not see), fails with exit
status 1 naming FILE:LINE. OUT/Sources must not hold the targets yet.
"""
import argparse, os, re, sys


def main():
    parser = argparse.ArgumentParser(description="Each ```swift block of the documentation as an executable's main.swift (scripts/quickstarts.sh).")
    parser.add_argument("out", help="the generated package's folder (OUT/Sources/<target>/main.swift, OUT/targets)")
    parser.add_argument("files", nargs="+", help="Markdown files and tutorial code files (*.swift)")
    arguments = parser.parse_args()
    out, files = arguments.out, arguments.files
    targets = []
    for path in files:
        lines = open(path, encoding="utf-8").read().split("\n")
        whole_file = path.endswith(".swift")   # a tutorial's code file: the whole file is one block
        if whole_file:
            lines = ["```swift"] + lines + ["```"]
        name = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
        index, i = 0, 0
        while i < len(lines):
            if lines[i].strip() != "```swift":
                i += 1
                continue
            start = i
            indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]   # a block inside a list item
            j = i + 1
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            if j == len(lines):
                sys.exit(f"quickstarts: {path}:{start + 1}: a ```swift block that never ends")
            k = start - 1
            while k >= 0 and not lines[k].strip():
                k -= 1
            if k >= 0 and lines[k].rstrip().endswith("-->") and "prelude:" in "\n".join(lines[max(0, k - 20):k + 1]):
                sys.exit(f"quickstarts: {path}:{start + 1}: a hidden prelude comment above a Swift block: "
                         "the reader pastes the block alone, so it must make every name it uses itself")
            body = [l[len(indent):] if l.startswith(indent) else l for l in lines[start + 1:j]]
            index += 1
            i = j + 1
            target = f"{name}_{index}"
            targets.append(target)
            os.makedirs(os.path.join(out, "Sources", target))
            with open(os.path.join(out, "Sources", target, "main.swift"), "w", encoding="utf-8") as file:
                # Where the compiler's messages point: the documentation's own line, not this copy.
                file.write(f"#sourceLocation(file: \"{path}\", line: {1 if whole_file else start + 2})\n")
                file.write("\n".join(body) + "\n")
    with open(os.path.join(out, "targets"), "w") as file:
        file.write("\n".join(targets) + "\n")
    print(f"quickstarts: {len(targets)} Swift blocks, each the main.swift of its own executable, from {', '.join(files)}")


if __name__ == "__main__":
    main()
