#!/usr/bin/env bash
# api: the public interface of each library module as text, from its symbol graph, so that every
# change of the public API shows in review as a change of api/<module>.txt (MediaDevicesCore,
# MediaDevicesAudio, MediaDevicesVideo and the umbrella MediaDevices, which adds DeviceMonitor).
#   scripts/api.sh record   write api/<module>.txt from the code as it is
#   scripts/api.sh check    compare the code with api/<module>.txt: print the difference and
#                        fail when they differ, or when a public symbol has no doc comment
#   scripts/api.sh check --no-build
#                        the same, from the modules as they are built (scripts/test.sh, right after
#                        its build; see scripts/symbol-graphs.sh)
# Both read the symbol graphs from the suite's build's modules (scripts/symbol-graphs.sh: it runs
# that build first, incrementally).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
[[ $mode == record || $mode == check ]] || { echo "usage: scripts/api.sh record|check [--no-build]" >&2; exit 2; }
build=()
[[ ${2:-} != --no-build ]] || build=(--no-build)
modules=(MediaDevicesCore MediaDevicesAudio MediaDevicesVideo MediaDevices)

current=$(mktemp)
graphs=$(mktemp -d)
trap 'rm -rf "$current" "$graphs"' EXIT
scripts/symbol-graphs.sh "${build[@]}" "$graphs" >"$current" 2>&1 || { cat "$current" >&2; exit 1; }
failed=0
for module in "${modules[@]}"; do
status=0
python3 scripts/tools/api_from_symbol_graph.py "$graphs/$module" "$module" >"$current" || status=$?
(( status == 0 || status == 3 )) || { echo "api: reading the symbol graph of $module failed" >&2; exit 1; }
record=api/$module.txt
if [[ $mode == record ]]; then
    mkdir -p api
    cp "$current" "$record"
    echo "api: wrote $record ($(($(wc -l <"$record") - 2)) public symbols)"
    (( status == 0 )) || failed=1
    continue
fi
if ! diff -u "$record" "$current" >/dev/null 2>&1; then
    diff -u "$record" "$current" || true
    echo "api: the public API of $module differs from $record (above: - recorded, + in the code); if the change is meant, run scripts/api.sh record and commit it" >&2
    failed=1
    continue
fi
(( status == 0 )) || { echo "api: public symbols of $module without a doc comment (above)" >&2; failed=1; continue; }
echo "api: the public API of $module matches $record ($(($(wc -l <"$record") - 2)) public symbols, each with a doc comment)"
done
exit $failed
