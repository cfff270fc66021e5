#!/usr/bin/env python3
"""A library module's public interface as text, one symbol a line, from its symbol graph.

Called by scripts/api.sh for each module, once scripts/symbol-graphs.sh has written the graphs:
    python3 scripts/tools/api_from_symbol_graph.py GRAPHS/MODULE MODULE >CURRENT
FOLDER holds MODULE.symbols.json and MODULE@Other.symbols.json (MODULE's extensions of another
module's types, whose paths get "Other." in front). Prints a two-line header, then each public
symbol as "path | declaration", sorted (the text scripts/api.sh record keeps in api/MODULE.txt and
scripts/api.sh check compares). Each public symbol without a doc comment is named on stderr and the
exit status is then 3 (0 otherwise); any other failure exits 1.
"""
import argparse, json, os, sys

# What stdlib protocols give every conforming type: no doc comment of ours is expected on them.
INHERITED = {"hashValue", "hash(into:)", "init(unicodeScalarLiteral:)", "init(extendedGraphemeClusterLiteral:)",
             "asUnownedTaskExecutor()", "insert(_:)", "remove(_:)", "update(with:)", "rawValue", "init(rawValue:)"}


def read_interface(folder, module):
    """(sorted "path | declaration" lines, paths of symbols without a doc comment) of MODULE in FOLDER."""
    lines, undocumented = set(), []
    for name in sorted(os.listdir(folder)):
        if not (name == f"{module}.symbols.json" or name.startswith(f"{module}@")):
            continue
        extended = name.partition("@")[2].removesuffix(".symbols.json")
        graph = json.load(open(os.path.join(folder, name)))
        for symbol in graph["symbols"]:
            path = ".".join(symbol["pathComponents"])
            if extended:
                path = f"{extended}.{path}"
            declaration = "".join(f["spelling"] for f in symbol.get("declarationFragments", [])).replace("\n", " ")
            lines.add(f"{path} | {declaration}")
            if not symbol.get("docComment") and symbol["pathComponents"][-1] not in INHERITED:
                undocumented.append(path)
    return sorted(lines), undocumented


def main():
    parser = argparse.ArgumentParser(description="A module's public interface as text, from its symbol graph (scripts/api.sh).")
    parser.add_argument("folder", help="the folder of the module's *.symbols.json files")
    parser.add_argument("module", help="the module's name, e.g. MediaDevicesCore")
    arguments = parser.parse_args()
    module = arguments.module
    lines, undocumented = read_interface(arguments.folder, module)
    print(f"# The public interface of the {module} module, one symbol a line (path | declaration),")
    print("# written by `scripts/api.sh record` from the symbol graph and compared by `scripts/api.sh check` in CI.")
    for line in lines:
        print(line)
    for path in undocumented:
        print(f"api: public symbol without a doc comment: {path}", file=sys.stderr)
    sys.exit(3 if undocumented else 0)


if __name__ == "__main__":
    main()
