#!/usr/bin/env python3
"""Checks the relative links of the repository's Markdown files.

Called by scripts/docs.sh (first, before DocC), from the repository's root, under `python3 -S`:
    python3 -S scripts/tools/markdown_links.py
Reads every Markdown file git tracks (`git ls-files '*.md'` in the current directory), skips
fenced code blocks, web addresses and anchors, and checks that every other link target [..](X)
names a file inside the repository (the current directory) that exists (anchors after '#' are
not checked). Prints each broken link ("docs: FILE: TARGET names nothing" or "... leaves the
repository") and a summary line; exit status 1 when any link is broken.
"""
import argparse, os, re, subprocess, sys


def main():
    parser = argparse.ArgumentParser(description="Checks the relative links of the repository's Markdown files (scripts/docs.sh); run from the repository's root.")
    parser.parse_args()
    root = os.getcwd()
    files = subprocess.run(["git", "ls-files", "*.md"], capture_output=True, text=True, check=True).stdout.split()
    bad = []
    for path in files:
        text = open(path, encoding="utf-8").read()
        text = re.sub(r"```.*?```", "", text, flags=re.S)          # code blocks hold no links
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue                                            # a web address or an anchor
            file = os.path.normpath(os.path.join(os.path.dirname(path), target.split("#")[0]))
            if not (file + os.sep).startswith(root + os.sep) and not os.path.abspath(file).startswith(root + os.sep):
                bad.append(f"{path}: {target} leaves the repository")
            elif not os.path.exists(file):
                bad.append(f"{path}: {target} names nothing")
    for line in bad:
        print("docs:", line)
    print(f"docs: the relative links of {len(files)} Markdown files: {'%d broken' % len(bad) if bad else 'all inside the repository and found'}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
