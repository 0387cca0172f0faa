// swift-tools-version:6.2
import PackageDescription

// libFuzzer targets for vtrecord's readers of untrusted bytes (`make fuzz`).
//
// A package of its own because its executables have no main of their own: libFuzzer supplies
// it, and they link only with `--sanitize=fuzzer`, which the ordinary build and `make test`
// must not need. The product's modules are the same source directories, linked under Sources/
// (SwiftPM takes no target path outside the package), so the graph below mirrors the root
// Package.swift; PackageDiagramTests fails when the two disagree.
let package = Package(
    name: "vtrecord-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.34.1"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
    ],
    targets: [
        // The root package's modules, each with the dependencies it declares there
        // (PackageDiagramTests checks that they agree).
        .systemLibrary(name: "CX264"),
        .systemLibrary(name: "CV4L2", pkgConfig: "libv4l2"),
        .systemLibrary(name: "CVAAPI", pkgConfig: "libva-drm"),
        .systemLibrary(name: "CYUV"),
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg"),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa"),
        .systemLibrary(name: "CLinux"),
        .systemLibrary(name: "CCrypt"),
        .target(name: "CAVFormat"),
        .target(name: "VTCore", dependencies: ["CLinux", .product(name: "Logging", package: "swift-log")]),
        .target(name: "VTH264", dependencies: ["VTCore"]),
        .target(name: "VTPictures", dependencies: ["VTCore", "CYUV", "CTurboJPEG"]),
        .target(name: "VTCapture",
                dependencies: ["VTCore", "VTH264", "VTPictures", "CV4L2", .product(name: "Logging", package: "swift-log")]),
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
                dependencies: ["VTCore", "CALSA", "CAVFormat", "VTFFmpeg", .product(name: "Logging", package: "swift-log")]),
        .target(name: "VTEvents", dependencies: ["VTCore", "VTOutput"]),
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
        // The command-line module as a library, so the preset reader can be called in-process;
        // its @main entry point is renamed to keep clear of libFuzzer's main.
        .target(name: "vtrecord",
                dependencies: ["VTRecorder", "VTCore", "VTH264", "VTCapture", "VTPictures",
                               "VTEncoding", "VTVAAPI", "VTOutput", "VTEvents", "VTReading", "VTDecoding", "VTAudio", "VTLiveServer",
                               .product(name: "ArgumentParser", package: "swift-argument-parser"),
                               .product(name: "TOMLKit", package: "TOMLKit")],
                resources: [.embedInCode("Presets")],
                swiftSettings: [.unsafeFlags(["-Xfrontend", "-entry-point-function-name", "-Xfrontend", "vtrecord_main"])]),
        // The properties the bounded fuzz tests check (Tests/VTH264Tests/Fuzz), shared so both
        // runs hold the readers to the same promises.
        .target(name: "H264FuzzProperties", dependencies: ["VTH264", "VTCore"]),

        .executableTarget(name: "FuzzAnnexB", dependencies: ["H264FuzzProperties"], path: "Targets/FuzzAnnexB"),
        .executableTarget(name: "FuzzAVCC", dependencies: ["H264FuzzProperties"], path: "Targets/FuzzAVCC"),
        .executableTarget(name: "FuzzSPS", dependencies: ["H264FuzzProperties"], path: "Targets/FuzzSPS"),
        .executableTarget(name: "FuzzPPS", dependencies: ["H264FuzzProperties"], path: "Targets/FuzzPPS"),
        .executableTarget(name: "FuzzAVCDecoderConfiguration", dependencies: ["H264FuzzProperties"],
                          path: "Targets/FuzzAVCDecoderConfiguration"),
        .executableTarget(name: "FuzzInspect", dependencies: ["H264FuzzProperties"], path: "Targets/FuzzInspect"),
        .executableTarget(name: "FuzzAccessUnits", dependencies: ["H264FuzzProperties"], path: "Targets/FuzzAccessUnits"),
        .executableTarget(name: "FuzzContainers", dependencies: ["VTOutput", "VTH264", "VTCore"], path: "Targets/FuzzContainers"),
        .executableTarget(name: "FuzzY4M", dependencies: ["VTCapture", "VTCore"], path: "Targets/FuzzY4M"),
        .executableTarget(name: "FuzzPreset", dependencies: ["vtrecord", "VTCore"], path: "Targets/FuzzPreset"),
    ],
    swiftLanguageModes: [.v6]
)
