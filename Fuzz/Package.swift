// swift-tools-version:6.0
// libFuzzer harnesses for MediaDevices (issue 16). A separate package so that the main build
// never sees them: they only link with `-sanitize=fuzzer` (FuzzMain starts libFuzzer's driver).
// Build and run them with scripts/fuzz.sh; see docs/rig.md, "Fuzzing and sanitizers".
import PackageDescription

let harnesses = ["fuzz-jpeg", "fuzz-wav", "fuzz-edid", "fuzz-format", "fuzz-parsing"]

let package = Package(
    name: "MediaDevicesFuzz",
    dependencies: [.package(name: "MediaDevices", path: "..")],
    targets: [.target(name: "FuzzMain")] + harnesses.map {
        .executableTarget(name: $0, dependencies: ["FuzzMain", .product(name: "MediaDevices", package: "MediaDevices")])
    }
)
