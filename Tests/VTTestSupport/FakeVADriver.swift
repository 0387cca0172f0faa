import Foundation

/// A fake VA-API H.264 encoder and I_PCM decoder for a test: the environment that makes libva in a child process
/// open the driver double built from Tests/FakeVA (through any descriptor, such as /dev/null,
/// passed to vaGetDisplayDRM), and the report it leaves.
///
///     let va = try FakeVADevice(knobs: [.noDerive, .maxReferences(l0: 1, l1: 0)])
///     let result = try ChildProcess.run(["ffmpeg", "-init_hw_device", "vaapi=va:\(va.devicePath)", …],
///                                       environment: va.environment())
///     #expect(try va.report().violations.isEmpty)
///
/// The driver encodes every picture as lossless I_PCM macroblocks, so a decoder gives back the
/// input exactly; and it checks the client's reference bookkeeping, headers and rate-control
/// parameters, failing vaEndPicture with a "fake-va: violation: …" line on stderr at the first
/// mistake. It also decodes (VAEntrypointVLD) what it encodes — slices made only of I_PCM
/// macroblocks — so libavcodec's VA-API hwaccel can decode through it, and refuses anything else
/// with a "fake-va: violation: decode: …" line. The knobs and the rules are documented at the
/// top of Tests/FakeVA/fake_va.c.
public final class FakeVADevice: Sendable {
    public let knobs: [Knob]
    /// A directory of the device's own, removed with it: the report, outputs of the test.
    public let directory: URL
    /// What to pass as the DRM device: libfakedrm makes any descriptor a render node.
    public let devicePath = "/dev/null"

    public enum Entrypoint: String, Sendable { case slice, lowPower = "lp", decode = "vld" }
    public enum Profile: String, Sendable { case constrainedBaseline = "baseline", main, high }
    public enum PackedHeader: String, Sendable { case sequence, picture, slice, raw }
    public enum RateControlMode: String, Sendable { case cqp, cbr, vbr, icq }

    /// One setting; each is an environment variable documented in fake_va.c.
    public enum Knob: Sendable {
        /// Any of VAEntrypointEncSlice, VAEntrypointEncSliceLP and VAEntrypointVLD (default all three).
        case entrypoints([Entrypoint])
        /// VAConfigAttribMaxPictureWidth/Height of decoding (default 4096x4096): larger contexts are refused.
        case decodeMax(width: Int, height: Int)
        case profiles([Profile])
        /// vaDeriveImage fails, as on many AMD drivers: clients must use vaCreateImage + vaPutImage.
        case noDerive
        /// VAConfigAttribEncPackedHeaders; empty: none, and the driver writes every header.
        case packedHeaders([PackedHeader])
        /// VAConfigAttribEncMaxRefFrames; l1 0 means no B-frames.
        case maxReferences(l0: Int, l1: Int)
        case rateControlModes([RateControlMode])
        case vendor(String)
        /// Each coded buffer comes back as this many VACodedBufferSegments.
        case segments(Int)
        case qualityRange(Int)
        case maxSlices(Int)
        /// At most this much of a coded picture is written; the rest is cut off and the segment
        /// flagged VA_CODED_BUF_STATUS_SLICE_OVERFLOW_MASK.
        case codedBufferLimit(bytes: Int)
        /// Every call is logged to stderr.
        case trace
        /// These calls (vaCreateContext, vaPutImage, vaEndPicture) fail every time.
        case failing([String])
        /// vaSyncSurface takes this long: hardware that codes slower than a camera delivers.
        case syncMilliseconds(Int)
        /// An engine whose cost per picture follows the quality level in force: level 1 costs the
        /// first entry, 2 the second, …, a level beyond the list the last entry, level 0 (the
        /// default, also before any was sent) the first. Pictures queue one after another from
        /// their vaEndPicture; vaSyncSurface, vaSyncBuffer and mapping the coded buffer wait for
        /// the picture to be done. Not together with `.syncMilliseconds`.
        case levelMilliseconds([Int])
        /// With `.levelMilliseconds`: pictures submitted from `from` until `to` milliseconds after
        /// the context's first picture cost `factor` times as much, as an engine shared with
        /// another job for a while.
        case busy(fromMilliseconds: Int, toMilliseconds: Int, factor: Int = 3)

        var variable: (name: String, value: String) {
            func list<T: RawRepresentable<String>>(_ items: [T]) -> String {
                items.map(\.rawValue).joined(separator: ",")
            }
            return switch self {
            case .entrypoints(let entrypoints): ("FAKE_VA_ENTRYPOINTS", list(entrypoints))
            case .decodeMax(let width, let height): ("FAKE_VA_DECODE_MAX", "\(width)x\(height)")
            case .profiles(let profiles): ("FAKE_VA_PROFILES", list(profiles))
            case .noDerive: ("FAKE_VA_NO_DERIVE", "1")
            case .packedHeaders(let headers): ("FAKE_VA_PACKED_HEADERS", headers.isEmpty ? "none" : list(headers))
            case .maxReferences(let l0, let l1): ("FAKE_VA_MAX_REFS", "\(l0),\(l1)")
            case .rateControlModes(let modes): ("FAKE_VA_RC_MODES", list(modes))
            case .vendor(let vendor): ("FAKE_VA_VENDOR", vendor)
            case .segments(let count): ("FAKE_VA_SEGMENTS", "\(count)")
            case .qualityRange(let range): ("FAKE_VA_QUALITY_RANGE", "\(range)")
            case .maxSlices(let count): ("FAKE_VA_MAX_SLICES", "\(count)")
            case .codedBufferLimit(let bytes): ("FAKE_VA_CODED_LIMIT", "\(bytes)")
            case .trace: ("FAKE_VA_TRACE", "1")
            case .failing(let calls): ("FAKE_VA_FAIL", calls.joined(separator: ","))
            case .syncMilliseconds(let milliseconds): ("FAKE_VA_SYNC_MS", "\(milliseconds)")
            case .levelMilliseconds(let costs): ("FAKE_VA_LEVEL_MS", costs.map(String.init).joined(separator: ","))
            case .busy(let from, let to, let factor): ("FAKE_VA_BUSY", "\(from)-\(to)x\(factor)")
            }
        }
    }

    public init(knobs: [Knob] = []) throws {
        self.knobs = knobs
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("fake-va-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    /// A path inside the device's directory, for outputs of the test.
    public func file(_ name: String) -> String {
        directory.appendingPathComponent(name).path
    }

    public var reportPath: String { file("report.json") }

    /// The environment for a child process: `base` without any FAKE_VA_ settings it had, plus
    /// the DRM shim preloaded (in front of what `base` preloads, so this composes with
    /// `FakeCamera.environment()`), libva pointed at the driver, the report location and the
    /// knobs. libva's own messages are limited to errors unless `base` says otherwise, so the
    /// driver's violation lines stand out.
    public func environment(base: [String: String] = ProcessInfo.processInfo.environment) throws -> [String: String] {
        let driver = try Self.driverDirectory()
        var environment = base.filter { !$0.key.hasPrefix("FAKE_VA_") }
        environment["LD_PRELOAD"] = LDPreload.adding(try Self.drmShim(), to: base)
        environment["LIBVA_DRIVERS_PATH"] = driver
        environment["LIBVA_DRIVER_NAME"] = "fake"
        environment["LIBVA_MESSAGING_LEVEL"] = base["LIBVA_MESSAGING_LEVEL"] ?? "1"
        environment["FAKE_VA_REPORT"] = reportPath
        for knob in knobs {
            let (name, value) = knob.variable
            environment[name] = value
        }
        return environment
    }

    /// The report of the process that used the driver: written at vaTerminate, and after each
    /// vaEndPicture so a client that died still leaves the last one.
    public func report() throws -> Report {
        let data = try Data(contentsOf: URL(fileURLWithPath: reportPath))
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(Report.self, from: data)
    }

    // MARK: Building

    /// The directory holding fake_drv_video.so (LIBVA_DRIVERS_PATH); builds it on first use.
    public static func driverDirectory() throws -> String {
        let driver = try CBuild.product(".build/fake-va/fake_drv_video.so") { partial in
            try ["cc", "-std=c11", "-shared", "-fPIC", "-fvisibility=hidden", "-O2", "-Wall", "-Wextra", "-o", partial]
                + CBuild.pkgConfig(["--cflags", "libva"]) + CBuild.sharedIncludes + CBuild.sources(in: "Tests/FakeVA")
                + ["-lpthread"]
        }
        return (driver as NSString).deletingLastPathComponent
    }

    /// libfakedrm.so, preloaded so libva-drm takes any descriptor for a render node.
    public static func drmShim() throws -> String {
        try CBuild.product(".build/fake-va/libfakedrm.so") { partial in
            try ["cc", "-std=c11", "-shared", "-fPIC", "-fvisibility=hidden", "-O2", "-Wall", "-Wextra", "-o", partial]
                + CBuild.pkgConfig(["--cflags", "libdrm"]) + CBuild.sources(in: "Tests/FakeVA/drm")
        }
    }

    /// A test client from Tests/FakeVA/clients/<name>.c, linked with libva and libva-drm; built
    /// on first use.
    public static func client(_ name: String) throws -> String {
        try CBuild.product(".build/fake-va/\(name)") { partial in
            try ["cc", "-std=c11", "-O2", "-Wall", "-Wextra", "-o", partial, CBuild.path("Tests/FakeVA/clients/\(name).c")]
                + CBuild.pkgConfig(["--cflags", "--libs", "libva-drm", "libva"])
        }
    }
}
