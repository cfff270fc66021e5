#!/usr/bin/env python3
"""The search-path arguments SwiftPM compiled the umbrella MediaDevices module with, one a line.

Called by scripts/symbol-graphs.sh after the suite's build, from the repository's root, under
`python3 -S`:
    python3 -S scripts/tools/umbrella_compile_flags.py [MANIFEST]
MANIFEST is SwiftPM's build manifest (default .build/debug.yaml; .build/release.yaml for the
suite's release build). Finds the compile command of "C.MediaDevices-<triple>-<configuration>.module"
(debug or release) and prints its -I, -Xcc, -module-cache-path and -target
arguments (each with its value; -IPATH as one), one a line, for swift-symbolgraph-extract. Exit
status 1, with a message, when the manifest has no such command.
"""
import argparse, json, re, sys


def compile_flags(text):
    """The kept arguments of the umbrella module's compile command in the manifest TEXT."""
    found = re.search(r'"C\.MediaDevices-[a-z0-9_-]+-(?:debug|release)\.module":', text)
    args_at = text.find("args: ", found.end()) if found else -1
    if args_at < 0:
        sys.exit("symbol-graphs: no compile command of the MediaDevices module in the build manifest (has SwiftPM's build manifest changed?)")
    args = json.loads(text[args_at + 6:text.index("\n", args_at)])
    kept, index = [], 0
    while index < len(args):
        if args[index] in ("-I", "-Xcc", "-module-cache-path", "-target"):
            kept += args[index:index + 2]
            index += 2
            continue
        if args[index].startswith("-I"):
            kept.append(args[index])
        index += 1
    return kept


def main():
    parser = argparse.ArgumentParser(description="The umbrella module's search-path arguments from SwiftPM's build manifest (scripts/symbol-graphs.sh).")
    parser.add_argument("manifest", nargs="?", default=".build/debug.yaml", help="SwiftPM's build manifest (default: .build/debug.yaml)")
    arguments = parser.parse_args()
    print("\n".join(compile_flags(open(arguments.manifest).read())))


if __name__ == "__main__":
    main()
