import Foundation

/// A fake microphone for a test: one `pcm.NAME { type vtfake … }` of the ALSA plugin built from
/// Tests/FakeALSA (its knobs are documented in fake_alsa.c). Its sample clock runs `ppm` off
/// CLOCK_MONOTONIC, and it hears a quiet tone and a beep on every whole second of true time, so
/// a recorder that stamps samples right puts each beep on the whole second. Put one or more in
/// a `FakeALSAConfiguration` and run programs with its environment:
///
///     let alsa = try FakeALSAConfiguration([FakeMicrophone(name: "fastmic", ppm: 50_000)])
///     let result = try ChildProcess.run(["arecord", "-D", "fastmic", "-d", "2", alsa.file("out.wav")],
///                                       environment: alsa.environment())
///     #expect(try alsa.report(of: "fastmic").xruns == 0)
///
/// Fault times count from the epoch: the microphone's first start in each process unless
/// `epoch` gives one, which processes then share.
public struct FakeMicrophone: Sendable {
    public enum SampleFormat: String, Sendable, CaseIterable {
        case s16 = "S16_LE", s32 = "S32_LE", float = "FLOAT_LE"
    }

    /// A clicker that beeps for `length` from each whole second of CLOCK_MONOTONIC (+ `phase`),
    /// starting at its crest. Levels are peak dBFS.
    public struct Beep: Sendable {
        public var frequency: Double
        public var level: Double
        public var length: Duration
        public var phase: Duration

        public init(frequency: Double = 1000, level: Double = -3, length: Duration = .milliseconds(100),
                    phase: Duration = .zero) {
            self.frequency = frequency
            self.level = level
            self.length = length
            self.phase = phase
        }
    }

    /// The device delivers nothing for `length` from `at`. `.jump`: then the position jumps to
    /// where the clock is, over silence (an overrun when that fills the buffer). `.gap`: it goes
    /// on from where it stopped, and the stall's samples never exist.
    public struct Stall: Sendable {
        public enum Mode: String, Sendable { case jump, gap }
        public var at: Duration
        public var length: Duration
        public var mode: Mode

        public init(at: Duration, length: Duration, mode: Mode = .jump) {
            self.at = at
            self.length = length
            self.mode = mode
        }
    }

    public enum Epoch: Sendable {
        /// The microphone's first start in each process (kept across close and reopen).
        case firstStart
        /// A CLOCK_MONOTONIC time in ns, the same for every process.
        case monotonic(nanoseconds: Int64)

        public static var now: Epoch { .monotonic(nanoseconds: FakeMicrophone.monotonicNanoseconds()) }
    }

    /// The PCM name (letters, digits, '_' and '-').
    public var name: String
    /// What `arecord -L` and snd_device_name_hint show under the name.
    public var description: String
    public var rates: [Int]
    public var channels: [Int]
    public var formats: [SampleFormat]
    /// The sample clock's error: +50000 captures 5 % more frames per second than the rate.
    public var ppm: Double
    public var toneFrequency: Double
    public var toneLevel: Double
    public var beep: Beep
    /// The run in progress at each of these times overruns (XRUN; reads fail with EPIPE).
    public var overrunsAt: [Duration]
    public var stall: Stall?
    /// From then the device is gone (ENODEV), until `replugAt` for new opens.
    public var unplugAt: Duration?
    public var replugAt: Duration?
    public var epoch: Epoch
    /// Timestamps default to CLOCK_MONOTONIC rather than gettimeofday (a client can choose
    /// either way with snd_pcm_sw_params_set_tstamp_type).
    public var monotonicTimestamps: Bool
    /// Every plugin callback is logged to standard error.
    public var trace: Bool

    public init(name: String = "vtmic", description: String = "vtrecord test microphone",
                rates: [Int] = [44100, 48000], channels: [Int] = [1, 2],
                formats: [SampleFormat] = SampleFormat.allCases, ppm: Double = 0,
                toneFrequency: Double = 440, toneLevel: Double = -20, beep: Beep = Beep(),
                overrunsAt: [Duration] = [], stall: Stall? = nil, unplugAt: Duration? = nil,
                replugAt: Duration? = nil, epoch: Epoch = .firstStart, monotonicTimestamps: Bool = false,
                trace: Bool = false) {
        precondition(!name.isEmpty && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") },
                     "a PCM name is letters, digits, '_' and '-'")
        self.name = name
        self.description = description
        self.rates = rates
        self.channels = channels
        self.formats = formats
        self.ppm = ppm
        self.toneFrequency = toneFrequency
        self.toneLevel = toneLevel
        self.beep = beep
        self.overrunsAt = overrunsAt
        self.stall = stall
        self.unplugAt = unplugAt
        self.replugAt = replugAt
        self.epoch = epoch
        self.monotonicTimestamps = monotonicTimestamps
        self.trace = trace
    }

    /// Frames the device captures per true second at `rate`: rate × (1 + ppm/1e6).
    public func framesPerSecond(rate: Int) -> Double {
        Double(rate) * (1 + ppm / 1e6)
    }

    /// CLOCK_MONOTONIC now, in ns: the clock the microphone's runs, faults and beeps follow.
    public static func monotonicNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// The pcm definition, its report written to `report` ("%p": the process id).
    func definition(report: String) -> String {
        var lines = [
            "type vtfake",
            "rates [ \(rates.map(String.init).joined(separator: " ")) ]",
            "channels [ \(channels.map(String.init).joined(separator: " ")) ]",
            "formats [ \(formats.map { quoted($0.rawValue) }.joined(separator: " ")) ]",
            "ppm \(ppm)",
            "tone_frequency \(toneFrequency)",
            "tone_level \(toneLevel)",
            "beep_frequency \(beep.frequency)",
            "beep_level \(beep.level)",
            "beep_length \(seconds(beep.length))",
            "beep_phase \(seconds(beep.phase))",
            "monotonic \(monotonicTimestamps)",
            "trace \(trace)",
            "report \(quoted(report))",
        ]
        if !overrunsAt.isEmpty { lines.append("overruns [ \(overrunsAt.map(seconds).joined(separator: " ")) ]") }
        if let stall {
            lines += ["stall \(seconds(stall.at))", "stall_length \(seconds(stall.length))",
                      "stall_mode \(quoted(stall.mode.rawValue))"]
        }
        if let unplugAt { lines.append("unplug \(seconds(unplugAt))") }
        if let replugAt { lines.append("replug \(seconds(replugAt))") }
        if case .monotonic(let nanoseconds) = epoch { lines.append("epoch_ns \(nanoseconds)") }
        lines.append("hint { show on description \(quoted(description)) }")
        return "pcm.\(name) {\n" + lines.map { "    \($0)\n" }.joined() + "}\n"
    }
}

/// An ALSA configuration holding fake microphones, in a directory of its own (removed with it)
/// with the microphones' reports. Programs run with `environment()` see the microphones by name,
/// `plug:NAME` for conversions, and `default` as the first microphone through plug.
///
/// Without the system configuration the file stands alone: nothing of the machine's or the
/// user's ALSA setup (/usr/share/alsa/alsa.conf, /etc/asound.conf, ~/.asoundrc) reaches the
/// test, `arecord -L` lists exactly the microphones, and the file defines `plug` itself. With it,
/// alsa.conf is read first and its devices (null, hw, plughw…) exist and are listed too.
public final class FakeALSAConfiguration: Sendable {
    public let microphones: [FakeMicrophone]
    public let directory: URL
    /// The configuration file.
    public let path: String
    public let includesSystemConfiguration: Bool

    public init(_ microphones: [FakeMicrophone], includingSystemConfiguration: Bool = false) throws {
        precondition(!microphones.isEmpty, "a configuration needs a microphone")
        precondition(Set(microphones.map(\.name)).count == microphones.count, "microphone names must differ")
        self.microphones = microphones
        includesSystemConfiguration = includingSystemConfiguration
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("fake-alsa-\(UUID().uuidString)")
        // ALSA_CONFIG_PATH splits at ':' and ' '.
        precondition(!directory.path.contains(where: { $0 == ":" || $0 == " " }), "ALSA_CONFIG_PATH cannot hold \(directory.path)")
        path = directory.appendingPathComponent("asound.conf").path
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var text = "# Fake microphones for one test (Tests/FakeALSA/fake_alsa.c documents the knobs).\n"
        text += "pcm_type.vtfake { lib \(quoted(try FakeALSALibrary.path())) }\n"
        for microphone in microphones {
            text += microphone.definition(report: directory.appendingPathComponent("report-\(microphone.name)-%p.txt").path)
        }
        if !includingSystemConfiguration {
            text += "pcm.plug { @args [ SLAVE ] @args.SLAVE { type string } type plug slave.pcm $SLAVE }\n"
        }
        text += "pcm.!default { type plug slave.pcm \(quoted(microphones[0].name)) }\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    /// A path inside the configuration's directory, for recordings and other files of the test.
    public func file(_ name: String) -> String {
        directory.appendingPathComponent(name).path
    }

    /// The environment for a child process: `base` with ALSA_CONFIG_PATH naming this
    /// configuration (after alsa.conf when it includes the system's).
    public func environment(base: [String: String] = ProcessInfo.processInfo.environment) -> [String: String] {
        var environment = base
        environment["ALSA_CONFIG_PATH"] = includesSystemConfiguration ? "/usr/share/alsa/alsa.conf:\(path)" : path
        return environment
    }

    /// The reports of every process that opened (or was refused) the microphone `name`, oldest
    /// first.
    public func reports(of name: String) throws -> [FakeMicrophone.Report] {
        let prefix = "report-\(name)-"
        let reports = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasPrefix(prefix) && $0.hasSuffix(".txt") && Int($0.dropFirst(prefix.count).dropLast(4)) != nil }
            .map { try FakeMicrophone.Report(text: String(contentsOfFile: file($0), encoding: .utf8)) }
        return reports.sorted { $0.firstOpen < $1.firstOpen }
    }

    /// The report of the one process that used the microphone `name`.
    public func report(of name: String) throws -> FakeMicrophone.Report {
        let all = try reports(of: name)
        guard all.count == 1 else { throw ReportMissing(name: name, count: all.count, directory: directory.path) }
        return all[0]
    }

    public struct ReportMissing: Error, CustomStringConvertible {
        public let name: String
        public let count: Int
        public let directory: String
        public var description: String {
            "expected one report of \(name) in \(directory), found \(count) (a process writes one when it opens "
                + "the microphone or is refused)"
        }
    }
}

extension FakeMicrophone {
    /// What one microphone did in one process (fake_alsa's report.c documents each key). Times
    /// are CLOCK_MONOTONIC ns, -1 when never.
    public struct Report: KeyValueReport, Sendable, CustomStringConvertible {
        public let values: [String: String]

        /// One run of the device, start to stop, in order.
        public struct Run: Sendable, Equatable {
            public let start: Int64
            /// Frames the client took, and the position the run ended at.
            public let delivered: Int
            public let captured: Int
            /// stop, prepare, overrun (forced), xrun (the client was late), unplug, close, running.
            public let end: String
        }

        init(text: String) {
            values = Self.values(of: text)
        }

        public var processIdentifier: Int { number("pid") }
        public var opens: Int { number("opens") }
        /// Opens refused while the microphone was unplugged.
        public var openRefusals: Int { number("open_refusals") }
        public var closes: Int { number("closes") }
        public var openHandles: Int { number("open_handles") }
        public var starts: Int { number("starts") }
        public var framesCaptured: Int { number("frames_captured") }
        public var framesDelivered: Int { number("frames_delivered") }
        /// Every overrun, forced or the client's own.
        public var xruns: Int { number("xruns") }
        public var forcedXruns: Int { number("xruns_forced") }
        public var stalls: Int { number("stalls") }
        public var stallFrames: Int { number("stall_frames") }
        public var unplugged: Bool { number("unplugged") == 1 }
        public var unpluggedHandles: Int { number("unplugged_handles") }
        public var opensAfterReplug: Int { number("opens_after_replug") }
        public var epoch: Int64 { Int64(number("epoch_ns")) }
        public var rate: Int { number("rate") }
        public var format: String { values["format"] ?? "" }
        public var channels: Int { number("channels") }
        public var periodSize: Int { number("period_size") }
        public var bufferSize: Int { number("buffer_size") }
        public var access: String { values["access"] ?? "" }

        public var runs: [Run] {
            (0..<32).compactMap { index -> Run? in
                guard let fields = values["run_\(index)"]?.split(separator: ","), fields.count == 4,
                      let start = Int64(fields[0]), let delivered = Int(fields[1]), let captured = Int(fields[2])
                else { return nil }
                return Run(start: start, delivered: delivered, captured: captured, end: String(fields[3]))
            }
        }

        /// When the process first opened the microphone or was refused.
        public var firstOpen: Int64 { Int64(number("first_open_ns")) }

        public var description: String {
            values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
    }
}

private func quoted(_ text: String) -> String {
    "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
}

private func seconds(_ duration: Duration) -> String {
    let (whole, attoseconds) = duration.components
    return String(format: "%.9f", Double(whole) + Double(attoseconds) / 1e18)
}
