// swift-tools-version:6.2
import PackageDescription

// The modules and what each may use (one direction; nothing below a module imports it):
//
//   vtrecord (CLI: options, presets, commands)
//     ├─▶ VTRecorder (the pipeline: threads, queue, stop, summary; assembled from a plan)
//     │     ├─▶ VTCapture (V4L2, Y4M, test pattern) ─▶ VTPictures (a camera's frames made
//     │     │     pictures, JPEG, scaling, stills, motion analysis; libyuv, libturbojpeg)
//     │     ├─▶ VTEncoding (x264, VA-API encode) ─▶ VTVAAPI
//     │     ├─▶ VTEvents (event clips: pre-roll, triggers, clip thread) ─▶ VTOutput
//     │     ├─▶ VTOutput (Annex B, MP4, Matroska, MPEG-TS writers, segments, fan-out) ─▶ VTFFmpeg
//     │     ├─▶ VTAudio (ALSA, test tone, AAC/Opus/PCM) ──────────────────────▶ VTFFmpeg
//     │     └─▶ VTLiveServer (--http: the server, its live stream and the recordings it serves;
//     │           the only module that imports Hummingbird and SwiftNIO) ─▶ VTOutput
//     └─▶ VTDecoding (libavcodec decode, verify, thumbnails) ─▶ VTPictures
//           ├─▶ VTReading (AssetReader, MP4Layout: files read back) ─▶ VTFFmpeg
//           └─▶ VTVAAPI (VA-API devices: open, what they encode and decode)
//
// Every module rests on VTCore (pictures, times, errors, system calls, sound formats); those
// that handle H.264 (encoding, output, reading, decoding, VA-API) also on VTH264 (NAL units,
// parameter sets, Annex B and AVCC), which rests on VTCore alone. At the bottom sit the C
// libraries, one shim target each; FFmpeg's libraries are loaded on first use through
// CAVFormat (see its header), which VTFFmpeg wraps. Linux only: V4L2, VA-API and libv4l2 have
// no other home, so no other platform is declared.
let package = Package(
    name: "vtrecord",
    products: [
        .executable(name: "vtrecord", targets: ["vtrecord"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        // The HTTP server (--http): Hummingbird 2 on SwiftNIO, without its optional traits
        // (swift-configuration, full Foundation), which vtrecord does not use.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.34.1"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
    ],
    targets: [
        // C libraries, one system-library target each; shim headers hold only what Swift
        // cannot import directly.
        // No pkgConfig: x264's .pc adds only -lx264 (the module map links it) and
        // -DX264_API_IMPORTS, which matters on Windows alone and which SwiftPM refuses with a
        // warning on every build.
        .systemLibrary(name: "CX264", providers: [.apt(["libx264-dev"])]),
        .systemLibrary(name: "CV4L2", pkgConfig: "libv4l2",
                       providers: [.apt(["libv4l-dev"])]),
        .systemLibrary(name: "CVAAPI", pkgConfig: "libva-drm",
                       providers: [.apt(["libva-dev"])]),
        .systemLibrary(name: "CYUV", providers: [.apt(["libyuv-dev"])]),
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg",
                       providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa",
                       providers: [.apt(["libasound2-dev"])]),
        // Linux calls glibc declares only under _GNU_SOURCE (sync_file_range).
        .systemLibrary(name: "CLinux"),
        // libcrypt's crypt_r, for the password hashes of --http-auth.
        .systemLibrary(name: "CCrypt", providers: [.apt(["libcrypt-dev"])]),
        // FFmpeg's libavformat, loaded on first use rather than linked (see its header).
        .target(name: "CAVFormat"),

        .target(name: "VTCore",
                dependencies: ["CLinux", .product(name: "Logging", package: "swift-log")]),
        .target(name: "VTH264", dependencies: ["VTCore"]),
        .target(name: "VTPictures", dependencies: ["VTCore", "CYUV", "CTurboJPEG"]),
        .target(name: "VTCapture",
                dependencies: ["VTCore", "VTH264", "VTPictures", "CV4L2",
                               .product(name: "Logging", package: "swift-log")]),
        .target(name: "VTVAAPI", dependencies: ["VTCore", "VTH264", "CVAAPI"]),
        .target(name: "VTEncoding",
                dependencies: ["VTCore", "VTH264", "VTVAAPI", "CX264", "CVAAPI", "CYUV",
                               .product(name: "Logging", package: "swift-log")]),
        .target(name: "VTFFmpeg", dependencies: ["CAVFormat"]),
        .target(name: "VTOutput", dependencies: ["VTCore", "VTH264", "CAVFormat", "VTFFmpeg", "CLinux"]),
        .target(name: "VTReading", dependencies: ["VTCore", "VTH264", "CAVFormat", "VTFFmpeg"]),
        .target(name: "VTDecoding",
                dependencies: ["VTCore", "VTH264", "VTReading", "VTVAAPI", "VTPictures", "CAVFormat", "VTFFmpeg"]),
        .target(name: "VTAudio",
                dependencies: ["VTCore", "CALSA", "CAVFormat", "VTFFmpeg",
                               .product(name: "Logging", package: "swift-log")]),
        .target(name: "VTEvents", dependencies: ["VTCore", "VTOutput"]),
        // The HTTP server of --http, linked into vtrecord like every other module.
        .target(name: "VTLiveServer",
                dependencies: ["VTCore", "VTOutput", "CCrypt",
                               .product(name: "Hummingbird", package: "hummingbird"),
                               .product(name: "HummingbirdCore", package: "hummingbird"),
                               .product(name: "NIOCore", package: "swift-nio"),
                               .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                               .product(name: "DequeModule", package: "swift-collections"),
                               .product(name: "Prometheus", package: "swift-prometheus"),
                               .product(name: "Logging", package: "swift-log")],
                resources: [.embedInCode("Page")]),
        .target(name: "VTRecorder",
                dependencies: ["VTCore", "VTH264", "VTCapture", "VTPictures", "VTEncoding", "VTOutput", "VTEvents", "VTLiveServer", "VTAudio",
                               "CLinux", .product(name: "Logging", package: "swift-log")]),
        .executableTarget(name: "vtrecord",
                          dependencies: ["VTRecorder", "VTCore", "VTH264", "VTCapture", "VTPictures",
                                         "VTEncoding", "VTVAAPI", "VTOutput", "VTEvents", "VTReading", "VTDecoding", "VTAudio", "VTLiveServer",
                                         .product(name: "ArgumentParser", package: "swift-argument-parser"),
                                         .product(name: "TOMLKit", package: "TOMLKit")],
                          // The shipped presets (presets/*.toml, linked here) are compiled into
                          // the binary, so `--preset 720p30` works wherever the binary is.
                          resources: [.embedInCode("Presets")]),
        // make bench's timer for the capture thread's conversions (not installed).
        .executableTarget(name: "vtrecord-bench",
                          dependencies: ["VTCapture", "VTPictures", "VTCore", "CTurboJPEG",
                                         .product(name: "ArgumentParser", package: "swift-argument-parser")]),

        // Test doubles and helpers shared by test targets: the fake V4L2 camera (an LD_PRELOAD
        // library built from Tests/FakeV4L2), the fake VA-API driver (Tests/FakeVA) and running
        // child processes.
        .target(name: "VTTestSupport", path: "Tests/VTTestSupport"),

        .testTarget(name: "VTCoreTests", dependencies: ["VTCore", "VTTestSupport"]),
        .testTarget(name: "VTH264Tests", dependencies: ["VTH264", "VTCore", "VTTestSupport"]),
        .testTarget(name: "VTCaptureTests",
                    dependencies: ["VTCapture", "VTPictures", "VTCore", "VTH264", "VTReading", "VTTestSupport",
                                   .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "VTEncodingTests",
                    dependencies: ["VTEncoding", "VTDecoding", "VTVAAPI", "VTH264", "VTCore", "VTTestSupport"]),
        .testTarget(name: "VTOutputTests", dependencies: ["VTOutput", "VTEncoding", "VTH264", "VTCore", "VTTestSupport"]),
        .testTarget(name: "VTAudioTests", dependencies: ["VTAudio", "VTCore"]),
        .testTarget(name: "VTEventsTests", dependencies: ["VTEvents", "VTOutput", "VTCore"]),
        // The server's routes, driven over loopback with SwiftNIO's own HTTP/1.1 client codec
        // (HummingbirdTesting would bring AsyncHTTPClient and BoringSSL into every build).
        .testTarget(name: "VTLiveServerTests",
                    dependencies: ["VTLiveServer", "VTCore",
                                   .product(name: "Hummingbird", package: "hummingbird"),
                                   .product(name: "NIOCore", package: "swift-nio"),
                                   .product(name: "NIOPosix", package: "swift-nio"),
                                   .product(name: "NIOHTTP1", package: "swift-nio")]),
        .testTarget(name: "VTRecorderTests", dependencies: ["VTRecorder", "VTCapture", "VTCore", "VTEncoding", "VTOutput", "VTEvents", "VTTestSupport"]),
        // Runs the built binary; depends on it so `swift test` builds it first.
        .testTarget(name: "VTRecordCLITests",
                    dependencies: ["vtrecord", "VTH264", "VTCapture", "VTCore", "VTDecoding", "VTOutput", "VTReading",
                                   "VTVAAPI", "VTTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)

// A warning in vtrecord's own code, Swift or C, is an error: every build (debug, release,
// tests) prints none or fails. Dependencies are built with their warnings suppressed.
for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [.treatAllWarnings(as: .error)]
    target.cSettings = (target.cSettings ?? []) + [.treatAllWarnings(as: .error)]
}
