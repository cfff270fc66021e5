// swift-tools-version:6.1
// MediaDevices' microbenchmarks: the library's public API (pixel conversion, MJPEG decode, audio
// resampling) measured with ordo-one's package-benchmark, against baselines checked in under
// .benchmarkBaselines. A package of its own so that the library never depends on the benchmark
// tooling. Run through scripts/microbenchmarks at the repository root.
import PackageDescription

let package = Package(
    name: "MediaDevicesBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "MediaDevices", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // package-benchmark finds its benchmark executables under Benchmarks/<target name>.
        .executableTarget(
            name: "MediaDevicesMicro",
            dependencies: [
                // The umbrella product: MonotonicInstant (MediaDevicesCore) comes only through it.
                .product(name: "MediaDevices", package: "MediaDevices"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/MediaDevicesMicro",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
