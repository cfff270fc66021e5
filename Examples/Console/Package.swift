// swift-tools-version:6.1
// media-console: a browser console for the cameras, screens and audio devices MediaDevices finds,
// built on the library the way an application would be (its own package, so the library gains no
// HTTP dependency). Run: `swift run -c release media-console` and open http://127.0.0.1:8080/.
import PackageDescription

let package = Package(
    name: "MediaConsole",
    dependencies: [
        .package(name: "MediaDevices", path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .executableTarget(
            name: "media-console",
            dependencies: [
                .product(name: "MediaDevices", package: "MediaDevices"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            resources: [.copy("Resources")]
        ),
    ]
)
