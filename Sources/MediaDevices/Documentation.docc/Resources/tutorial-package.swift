// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Booth",
    dependencies: [
        .package(path: "../MediaDevices"),   // or .package(url: "<your clone's URL>", from: "0.1.0")
    ],
    targets: [
        .executableTarget(name: "Booth", dependencies: [
            .product(name: "MediaDevices", package: "MediaDevices"),
        ]),
    ]
)
