#!/usr/bin/env bash
# docs: checks the Markdown files' relative links, then builds the DocC documentation (Sources/MediaDevices/Documentation.docc: the landing page,
# the articles and the tutorial, over the symbols of every library module), warnings as errors (a
# broken symbol or article link fails), as static HTML in .build/docs; then, with --check, serves
# it on 127.0.0.1 and opens it in headless chromium as a reader would, failing unless the landing
# page's title and an article's text are on the pages.
# It runs docc as swift-docc-plugin's combined documentation does (`swift package
# generate-documentation --enable-experimental-combined-documentation`: the same pages, file for
# file), each module converted with the archives of the modules it depends on, then merged, but on
# the symbol graphs of the suite's build (scripts/symbol-graphs.sh) instead of a debug build of its
# own: in CI the plugin's build cost ~150 of the tier's ~210 CPU seconds.
#   scripts/docs.sh            build for a web server's root; open .build/docs/index.html through any web server
#                           (the suite's release build first, incrementally: from scratch ~600
#                           CPU-s, against the plugin's ~150 for a debug build of its own; it is
#                           the build scripts/test.sh makes, so after the tests it costs nothing)
#   scripts/docs.sh --no-build the same from the suite's build as it is (scripts/test.sh, right after it)
#   scripts/docs.sh --hosting-base-path NAME
#                           build for a server that serves it under /NAME/ (GitHub Pages: the
#                           repository's name), in .build/docs-NAME
#   scripts/docs.sh --check    build, then check the pages in chromium (CI: scripts/test.sh); with
#                           --hosting-base-path, served under /NAME/ as such a host would
# The Swift Package Index builds the same catalogs from .spi.yml.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/swift-environment.sh  # the toolchain on PATH, the same environment for SwiftPM in every script
check=0 base='' build=()
while (( $# )); do
    case $1 in
        --check) check=1 ;;
        --no-build) build=(--no-build) ;;
        --hosting-base-path)
            base=${2:-}
            [[ $base =~ ^[A-Za-z0-9._-]+$ ]] || { echo "docs: --hosting-base-path takes a name of letters, digits, '.', '_' and '-' (the first segment of the pages' path), not '$base'" >&2; exit 2; }
            shift ;;
        *) echo "docs: unknown option $1 (--check, --no-build, --hosting-base-path NAME)" >&2; exit 2 ;;
    esac
    shift
done
out=.build/docs${base:+-$base}
hosting=(${base:+--hosting-base-path "$base"})
started=$(date +%s)
# Links first: every relative link of the repository's Markdown names a file inside it that exists
# (anchors are not checked); a link that leaves the repository fails.
python3 -S scripts/tools/markdown_links.py || exit 1
# Every library module in one archive (the umbrella's catalog links to the others' symbols): each
# module's archive made with those of its dependencies (external links), then merged. The symbol
# graphs with extension blocks, as the plugin asks for them.
mkdir -p .build  # its log goes beside the output: a fresh clone has no .build yet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
    grep -E "error|warning: .*(doc|link|ambiguous|doesn't exist)" "$out.log" | grep -v '^\[' | head -n 40
    tail -n 5 "$out.log"
    echo "docs: $1 failed (log: $out.log)" >&2
    exit 1
}
scripts/symbol-graphs.sh "${build[@]}" --extension-blocks "$work/graphs" >"$out.log" 2>&1 || fail "scripts/symbol-graphs.sh (the suite's build, then the symbol graphs)"
convert() {  # MODULE DEPENDENCY...: its archive in $work/MODULE.doccarchive
    local module=$1 catalog=() dependencies=(); shift
    [[ ! -d Sources/$module/Documentation.docc ]] || catalog=("Sources/$module/Documentation.docc")
    for dependency in "$@"; do dependencies+=(--dependency "$work/$dependency.doccarchive"); done
    docc convert "${catalog[@]}" --emit-lmdb-index --fallback-display-name "$module" --fallback-bundle-identifier "$module" \
        --additional-symbol-graph-dir "$work/graphs/$module" --output-path "$work/$module.doccarchive" \
        --enable-experimental-external-link-support "${dependencies[@]}" \
        --warnings-as-errors --transform-for-static-hosting "${hosting[@]}" >>"$out.log" 2>&1 || fail "docc convert $module (warnings are errors)"
}
convert MediaDevicesCore
convert MediaDevicesAudio MediaDevicesCore
convert MediaDevicesVideo MediaDevicesCore
convert MediaDevices MediaDevicesCore MediaDevicesAudio MediaDevicesVideo
rm -rf "$out"
# The landing page the plugin names after the package (its synthesized-landing-page feature).
docc merge "$work"/{MediaDevicesCore,MediaDevicesAudio,MediaDevicesVideo,MediaDevices}.doccarchive --output-path "$out" \
    --synthesized-landing-page-name MediaDevices --synthesized-landing-page-kind Package >>"$out.log" 2>&1 ||
    fail "docc merge"
echo "docs: built $out in $(( $(date +%s) - started )) s"
(( check )) || exit 0

command -v chromium >/dev/null || { echo "docs: chromium is not installed (scripts/install.sh adds it)" >&2; exit 1; }
port=$(python3 -S scripts/tools/free_port.py)
# Served as its host would: at the root, or under /NAME/ (a folder whose NAME links to the build).
served=$out prefix=
if [[ -n $base ]]; then
    served=$(mktemp -d) prefix=$base/
    ln -s "$PWD/$out" "$served/$base"
fi
python3 -S -m http.server --bind 127.0.0.1 --directory "$served" "$port" >"$out-server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; [[ -z $base ]] || rm -rf "$served"; rm -rf "$work"' EXIT
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
failed=0
# page PATH TEXT WHAT: chromium renders PATH (DocC's pages are drawn by JavaScript) and its DOM must contain TEXT.
page() {
    local dom
    dom=$(timeout 180 chromium --headless --no-sandbox --disable-gpu --virtual-time-budget=10000 --dump-dom \
          "http://127.0.0.1:$port/$prefix$1" 2>/dev/null || true)
    if [[ $dom == *"$2"* ]]; then
        echo "ok   chromium: $3 ($prefix$1 shows \"$2\")"
    else
        echo "FAIL chromium: $3: \"$2\" not in $prefix$1's rendered page (${#dom} bytes)"; failed=1
    fi
}
page documentation/mediadevices "Cameras, screens and microphones for Swift applications on Linux" "the landing page's title and abstract"
page documentation/mediadevices/framesleasesandexecutors "Leases: the driver’s buffer, not a copy" "an article"
page tutorials/mediadevices/addingacameraandamicrophone "Add a camera preview and a microphone to a Linux app" "the tutorial"
page documentation/mediadevicesvideo/camerasource "CameraSource" "a symbol of another module"
exit $failed
