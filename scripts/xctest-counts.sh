#!/usr/bin/env bash
# xctest-counts LOG: prints "N F", the tests (test cases) run and failed by the classes whose
# suite finished in the XCTest log LOG ("Test Suite 'Class' passed|failed at"). A class that did
# not finish (its process crashed or its boot ended) counts nothing: scripts/test.sh runs it again.
# F counts failed test cases ("Test Case 'Class.test' failed (...)"), not XCTest's "N failures",
# which counts assertions: a test with three failed assertions is one failed test.
set -euo pipefail
awk '/^Test Case \047[A-Za-z0-9_]+\.[A-Za-z0-9_]+\047 failed \(/ {
         name = $0; sub(/^Test Case \047/, "", name); sub(/\..*/, "", name); failedIn[name]++; next }
     /^Test Suite \047[A-Za-z0-9_]+\047 (passed|failed) at/ {
         pending = $0; sub(/^Test Suite \047/, "", pending); sub(/\047.*/, "", pending); next }
     pending != "" && /Executed [0-9]+ tests?, with/ {
         match($0, /Executed [0-9]+/); run += substr($0, RSTART + 9, RLENGTH - 9)
         failed += failedIn[pending] + 0; delete failedIn[pending]; pending = "" }
     END { print run + 0, failed + 0 }' "$1"
