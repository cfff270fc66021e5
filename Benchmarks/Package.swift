// swift-tools-version:6.1
// MediaDevices' microbenchmarks: the library's public API (pixel conversion, MJPEG decode, audio
// resampling) measured with ordo-one's package-benchmark, against baselines checked in under
// .benchmarkBaselines. A package of its own so that the library never depends on the benchmark
// tooling. Run through scripts/microbenchmarks.sh at the repository root.
import PackageDescription

let package = Package(
    name: "MediaDevicesBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "MediaDevices", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // What is measured, shared by both ways of measuring it.
        // The umbrella product: MonotonicInstant (MediaDevicesCore) comes only through it.
        .target(name: "MicroWorkloads", dependencies: [.product(name: "MediaDevices", package: "MediaDevices")]),
        // package-benchmark finds its benchmark executables under Benchmarks/<target name>.
        .executableTarget(
            name: "MediaDevicesMicro",
            dependencies: [
                "MicroWorkloads",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/MediaDevicesMicro",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // The workloads' instructions, counted under valgrind (scripts/microbenchmarks.sh
        // instructions): this project's machines have no hardware instruction counter.
        .executableTarget(name: "InstructionCounts", dependencies: ["MicroWorkloads"]),
    ]
)
