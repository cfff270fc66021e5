// swift-tools-version:6.1
// MediaDevices: cameras (V4L2), screens (DRM/KMS, X11, Wayland portal) and audio (ALSA, PulseAudio) for Swift on Linux.
// Supported: Swift 6.1 or later (this tools version: package traits need it; tested with 6.3), on Debian 12 (bookworm)
// and Debian 13 (trixie).
// Licensed under the Apache License, Version 2.0 (LICENSE).
import PackageDescription
#if canImport(Foundation)
import Foundation
#endif

/// Which webrtc-audio-processing the voice processing builds on: 1.x (Debian 13: pkg-config
/// module webrtc-audio-processing-1, library webrtc-audio-processing-1, AudioProcessingBuilder
/// and ApplyConfig) where pkg-config finds it, else 0.3 (Debian 12: webrtc-audio-processing,
/// library webrtc_audio_processing, webrtc::Config). Asked here because the two differ in the
/// library's name (so in the module map: CShims/CWebRTCAPMLibrary or CShims/CWebRTCAPMLibrary1),
/// in where their headers are and in the C++ API (CWEBRTCAPM_API_1 compiles cwebrtcapm1.cpp
/// instead of cwebrtcapm.cpp). The manifest runs unsandboxed on Linux; without pkg-config, 0.3
/// (its build then says what is missing, as before). SwiftPM caches the manifest's result:
/// after installing the other version on the same machine, `swift package purge-cache` (or a
/// new scratch path) makes it ask again.
///
/// 1.x's headers are found through CShims/CWebRTCAPMLibrary1/include, a symbolic link to
/// /usr/include/webrtc-audio-processing-1 (where Debian, and every distribution that installs it
/// under /usr, puts them), not through pkgConfig: its .pc requires absl_base, and SwiftPM
/// expands abseil's .pc graph as a tree, printing 1.7 MB of "prohibited flag(s): -DNOMINMAX"
/// warnings per build (measured on Debian 13); of all that it would pass on only the -I.
let webRTCAPM1: Bool = {
    #if canImport(Foundation) && os(Linux)
    let pkgConfig = Process()
    pkgConfig.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    pkgConfig.arguments = ["pkg-config", "--exists", "webrtc-audio-processing-1"]
    pkgConfig.standardOutput = FileHandle.nullDevice
    pkgConfig.standardError = FileHandle.nullDevice
    guard (try? pkgConfig.run()) != nil else { return false }
    pkgConfig.waitUntilExit()
    return pkgConfig.terminationStatus == 0
    #else
    return false
    #endif
}()

let package = Package(
    name: "MediaDevices",
    products: [
        // Everything: cameras, screens, audio and device hotplug (re-exports the products below).
        .library(name: "MediaDevices", targets: ["MediaDevices"]),
        // Audio only: ALSA and PulseAudio (and PipeWire's Pulse server); voice processing with the
        // VoiceProcessing trait.
        .library(name: "MediaDevicesAudio", targets: ["MediaDevicesAudio"]),
        // Cameras and screens: V4L2 and DRM/KMS; X11 and PipeWire (PipeWire cameras, the Camera and
        // ScreenCast portals) with the X11 and PipeWire traits.
        .library(name: "MediaDevicesVideo", targets: ["MediaDevicesVideo"]),
        .executable(name: "mediadevices", targets: ["mediadevices"]),
    ],
    // Backends a product can leave out, so that an application builds with only the system
    // libraries it uses (SE-0450). All are on by default: `MediaDevices` as everyone has it.
    traits: [
        .trait(name: "X11", description: "Screens of an X server (libxcb, MIT-SHM, RandR, DAMAGE, XFIXES)."),
        .trait(name: "PipeWire", description: "Cameras through PipeWire and the Camera portal; screens through the ScreenCast portal (libpipewire, sd-bus)."),
        .trait(name: "VoiceProcessing", description: "Echo cancellation, noise suppression and gain control for calls (WebRTC's audio processing module; SpeexDSP's echo canceller as the alternative)."),
        .default(enabledTraits: ["X11", "PipeWire", "VoiceProcessing"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        // `swift package generate-documentation`: the DocC catalogs (scripts/docs.sh builds them).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // Layer 1: C shims. Only what Swift cannot import (function-like macros, variadic ioctl).
        // The generic ioctl wrapper and eventfd, for every capability (the C library's headers only).
        .target(name: "CLinuxSystem", path: "CShims/CLinuxSystem"),
        // The V4L2 uapi (request codes, fourccs, the requests whose structs Swift cannot read).
        .target(name: "CV4L2", path: "CShims/CV4L2"),
        .systemLibrary(name: "CDRM", path: "CShims/CDRM", pkgConfig: "libdrm",
                       providers: [.apt(["libdrm-dev"])]),
        .systemLibrary(name: "CALSA", path: "CShims/CALSA", pkgConfig: "alsa",
                       providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CPulse", path: "CShims/CPulse", pkgConfig: "libpulse",
                       providers: [.apt(["libpulse-dev"])]),
        .systemLibrary(name: "CSoxr", path: "CShims/CSoxr", pkgConfig: "soxr",
                       providers: [.apt(["libsoxr-dev"])]),
        .systemLibrary(name: "CSpeexDSP", path: "CShims/CSpeexDSP", pkgConfig: "speexdsp",
                       providers: [.apt(["libspeexdsp-dev"])]),
        .systemLibrary(name: "CUdev", path: "CShims/CUdev", pkgConfig: "libudev",
                       providers: [.apt(["libudev-dev"])]),
        .systemLibrary(name: "CYUV", path: "CShims/CYUV", providers: [.apt(["libyuv-dev"])]),
        .systemLibrary(name: "CTurboJPEG", path: "CShims/CTurboJPEG", pkgConfig: "libturbojpeg",
                       providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CV4LConvert", path: "CShims/CV4LConvert", pkgConfig: "libv4lconvert",
                       providers: [.apt(["libv4l-dev"])]),
        .systemLibrary(name: "CPNG", path: "CShims/CPNG", pkgConfig: "libpng",
                       providers: [.apt(["libpng-dev"])]),
        // libavformat for the command-line tool's audio-and-video files (muxing, no encoding): only
        // MediaDevicesCommandLine uses it, no library product. Loaded with dlopen when a file is
        // first written, not linked (its ~130 libraries slowed every start of the tool): its
        // headers from Debian's libavformat-dev, on the compiler's default include path.
        .target(name: "CAVFormat", path: "CShims/CAVFormat"),
        .systemLibrary(name: "CXCB", path: "CShims/CXCB", pkgConfig: "xcb",
                       providers: [.apt(["libxcb1-dev", "libxcb-shm0-dev", "libxcb-randr0-dev",
                                         "libxcb-damage0-dev", "libxcb-xfixes0-dev"])]),
        .systemLibrary(name: "CSDBus", path: "CShims/CSDBus", pkgConfig: "libsystemd",
                       providers: [.apt(["libsystemd-dev"])]),
        // libpipewire's headers and library for the CPipeWire shim (its stream code is macros and inline functions).
        .systemLibrary(name: "CPipeWireHeaders", path: "CShims/CPipeWireHeaders", pkgConfig: "libpipewire-0.3",
                       providers: [.apt(["libpipewire-0.3-dev"])]),
        .target(name: "CPipeWire", dependencies: ["CPipeWireHeaders"], path: "CShims/CPipeWire"),
        // WebRTC's audio processing module (C++) for voice processing, behind a C shim (CWebRTCAPM).
        // 0.3 or 1.x, whichever pkg-config finds (`webRTCAPM1` above).
        webRTCAPM1
            ? .systemLibrary(name: "CWebRTCAPMLibrary", path: "CShims/CWebRTCAPMLibrary1",
                             providers: [.apt(["libwebrtc-audio-processing-dev"])])
            : .systemLibrary(name: "CWebRTCAPMLibrary", path: "CShims/CWebRTCAPMLibrary", pkgConfig: "webrtc-audio-processing",
                             providers: [.apt(["libwebrtc-audio-processing-dev"])]),
        // The defines are those of `pkg-config --cflags` of the version found (SwiftPM passes on
        // only its -I); CWEBRTCAPM_API_1 compiles cwebrtcapm1.cpp (1.x) instead of cwebrtcapm.cpp (0.3).
        .target(name: "CWebRTCAPM", dependencies: ["CWebRTCAPMLibrary"], path: "CShims/CWebRTCAPM",
                cxxSettings: webRTCAPM1
                    ? [.define("WEBRTC_POSIX"), .define("WEBRTC_LIBRARY_IMPL"), .define("CWEBRTCAPM_API_1"),
                       .headerSearchPath("../CWebRTCAPMLibrary1/include")]
                    : [.define("WEBRTC_POSIX"), .define("WEBRTC_AUDIO_PROCESSING_ONLY_BUILD")],
                // 0.3's library comes with its pkg-config module's flags; 1.x has none (above).
                linkerSettings: webRTCAPM1 ? [.linkedLibrary("webrtc-audio-processing-1")] : []),
        // Layers 2-4, split by capability. What every capability shares: errors, time, discovery
        // results, threads and waits (no library beyond the C library's headers).
        .target(
            name: "MediaDevicesCore",
            dependencies: [
                "CLinuxSystem",
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // Audio devices: ALSA, PulseAudio, resampling, voice processing.
        .target(
            name: "MediaDevicesAudio",
            dependencies: [
                "MediaDevicesCore", "CALSA", "CPulse", "CSoxr", "CSpeexDSP",
                .target(name: "CWebRTCAPM", condition: .when(traits: ["VoiceProcessing"])),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Cameras (V4L2, PipeWire), screens (DRM/KMS, X11, the ScreenCast portal), orientation,
        // pixel conversion and the video pipeline.
        .target(
            name: "MediaDevicesVideo",
            dependencies: [
                "MediaDevicesCore",
                "CLinuxSystem", "CV4L2", "CYUV", "CTurboJPEG", "CV4LConvert", "CPNG", "CUdev", "CDRM",
                .target(name: "CXCB", condition: .when(traits: ["X11"])),
                .target(name: "CSDBus", condition: .when(traits: ["PipeWire"])),
                .target(name: "CPipeWire", condition: .when(traits: ["PipeWire"])),
                .product(name: "Logging", package: "swift-log"),
                // FileDescriptor in the public API (DMABufPlane.descriptor, PortalScreenCast.pipeWireRemote).
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // The umbrella: every capability (re-exported) and what spans them (DeviceMonitor).
        .target(
            name: "MediaDevices",
            dependencies: [
                "MediaDevicesCore", "MediaDevicesAudio", "MediaDevicesVideo", "CUdev",
                .target(name: "CPipeWire", condition: .when(traits: ["PipeWire"])),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Layer 5: the command-line tools. What both take from their arguments (a device name
        // resolved to a device and a capturer, the backend options, JSON output) is shared.
        .target(
            name: "MediaDevicesCommandLine",
            dependencies: ["MediaDevices", "CAVFormat", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        .executableTarget(
            name: "mediadevices",
            dependencies: [
                "MediaDevices", "MediaDevicesCommandLine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The comparisons with direct libyuv and libjpeg-turbo calls and with the field's tools
        // (v4l2-ctl, ffmpeg, GStreamer, arecord, parec) that scripts/benchmark.sh runs, out of the
        // tool users run. In this package, not in Benchmarks/ (whose microbenchmarks use the public
        // API only): it measures internals (the audio rings, the test signals) and shares the
        // command line's device handling.
        .executableTarget(
            name: "mediadevices-benchmark",
            dependencies: [
                "MediaDevices", "MediaDevicesCommandLine",
                "CYUV", "CTurboJPEG",   // the references: libyuv and libjpeg-turbo called directly
                "USBDevices",   // the emulated USB camera's picture, decoded on the host as in the rig
                "TestSupport",  // the test signals (sine, noise) and their analysis (sine fit)
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Test support: counts heap allocations per thread (interposes malloc in the test binary).
        .target(name: "AllocationCounter", path: "Tests/AllocationCounter"),
        // Test support: a HID sensor-hub accelerometer made through /dev/uhid (device tests).
        .target(name: "UHIDAccelerometer", path: "Tests/UHIDAccelerometer"),
        // Test support: USB devices emulated in userspace over USB/IP (vhci-hcd), bound by the real
        // uvcvideo and snd-usb-audio in the rig: a UVC webcam and a UAC1 microphone.
        .target(name: "USBDevices", path: "Tests/USBDevices",
                cSettings: [.define("_GNU_SOURCE")],
                linkerSettings: [.linkedLibrary("turbojpeg"), .linkedLibrary("m"), .linkedLibrary("pthread")]),
        // The same devices as a process, for scripts/rig.sh --usb, the benchmarks and trying things by hand.
        .executableTarget(name: "usb-device-emulator", dependencies: ["USBDevices"], path: "Tests/USBDeviceEmulator"),
        .target(name: "TestSupport", dependencies: ["MediaDevices", "AllocationCounter", "CTurboJPEG",
                                                    .product(name: "Logging", package: "swift-log")], path: "Tests/TestSupport"),
        // Tier 1: pure unit tests, run on the host.
        .testTarget(name: "MediaDevicesTests",
                    dependencies: ["MediaDevices", "MediaDevicesCommandLine", "CV4L2", "CDRM", "CPulse", "CTurboJPEG", "CXCB", "CPNG", "CPipeWire", "TestSupport", "USBDevices",
                                   .product(name: "Logging", package: "swift-log")]),
        // Tier 2: tests against real kernel drivers, run inside the rig (scripts/rig.sh).
        .testTarget(name: "DeviceTests", dependencies: ["MediaDevices", "TestSupport", "UHIDAccelerometer", "USBDevices", "CDRM"]),
    ]
)
