#!/usr/bin/env bash
# symbol-graphs: the public symbol graph of each library module, read from the modules the
# suite's build made (release with testing enabled: suite_build in scripts/swift-environment.sh), for
# scripts/api.sh (the API check).
#   scripts/symbol-graphs.sh [--no-build] [--extension-blocks] DIR
# (--extension-blocks: extensions of other modules' types as extension-block symbols, as DocC
# takes them: scripts/docs. The API check reads the graphs without.)
# Builds the package with its tests as scripts/test.sh does (swift build ${suite_build[@]}
# --build-tests: incremental, nothing to do after CI's test build; a build of the library alone
# has other flags, and each of the two would rebuild what the other built), then runs swift-symbolgraph-extract on MediaDevicesCore, MediaDevicesAudio,
# MediaDevicesVideo and MediaDevices, each into DIR/<module>/, with the search paths and module
# maps SwiftPM compiled the umbrella module with (its compile command in .build/release.yaml), at
# access level public. `swift package dump-symbol-graph` rebuilds every module with symbol-graph
# flags first (~100 CPU-s in CI), and the next build rebuilds them again.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/swift-environment.sh  # the toolchain on PATH, the same environment for SwiftPM in every script
build=1 extra=() dir=''
usage() { echo "usage: scripts/symbol-graphs.sh [--no-build] [--extension-blocks] DIR" >&2; exit 2; }
while (( $# )); do
    case $1 in
        --no-build) build=0 ;;
        --extension-blocks) extra=(-emit-extension-block-symbols) ;;
        -*) usage ;;
        *) [[ -z $dir ]] || usage; dir=$1 ;;
    esac
    shift
done
[[ -n $dir ]] || usage
modules=(MediaDevicesCore MediaDevicesAudio MediaDevicesVideo MediaDevices)
# --no-build: the modules as scripts/test.sh's build left them a moment before. A second release
# build right after a first from scratch is not a no-op with SwiftPM 6.3: in a loaded CI run it
# compiled nearly every module again (582 CPU seconds against the first build's ~620, 902 s of
# wall time, relinking the test bundle the rig was running); a third build is a no-op.
if (( build )); then
    out=$(swift build "${suite_build[@]}" --build-tests 2>&1) || { echo "$out" >&2; echo "symbol-graphs: swift build ${suite_build[*]} --build-tests failed" >&2; exit 1; }
elif [[ ! -f .build/release.yaml ]]; then
    echo "symbol-graphs: --no-build, but there is no release build (.build/release.yaml): run swift build ${suite_build[*]} --build-tests" >&2; exit 1
fi
# The umbrella module's compile command: its -I, -Xcc (module maps), -module-cache-path and
# -target arguments, one a line.
flags=$(python3 -S scripts/tools/umbrella_compile_flags.py .build/release.yaml)
mapfile -t arguments <<<"$flags"
for module in "${modules[@]}"; do
    rm -rf "${dir:?}/$module"
    mkdir -p "$dir/$module"
    swift-symbolgraph-extract -module-name "$module" "${arguments[@]}" -minimum-access-level public "${extra[@]}" -output-dir "$dir/$module" ||
        { echo "symbol-graphs: swift-symbolgraph-extract failed for $module" >&2; exit 1; }
done
