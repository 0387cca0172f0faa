import Foundation
import Testing
import VTTestSupport

/// Bounded fuzz runs of the binary on damaged files: `vtrecord inspect` on H.264, `vtrecord
/// presets show` on preset files, and recording from Y4M with x264 and with the VA-API double.
/// Each input runs in its own process, so a crash or a hang is caught with the input saved
/// (under .build/fuzz-artifacts, or FUZZ_ARTIFACTS). The promise checked: bad input exits 2
/// with one error line, never a signal, a hang or another exit status.
///
/// Each run prints its seed; `FUZZ_SEED=<seed>` replays it and FUZZ_ITERATIONS lengthens it.
@Suite struct FuzzCLITests {
    /// A clean environment: no user presets, no VA-API device by accident.
    static func environment(_ directory: TemporaryDirectory) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = directory.url.path
        return environment
    }

    /// Seeds: small test-pattern recordings, one per (container, options).
    static func recordings(_ kinds: [(container: String, options: [String])], frames: Int,
                           in directory: TemporaryDirectory) throws -> [[UInt8]] {
        try kinds.enumerated().map { index, kind in
            let output = directory.path("seed-\(index).\(kind.container)")
            let made = try Tools.vtrecord(["--test-pattern", "--size", "64x64", "--frames", "\(frames)", "--encoder", "x264",
                                           "--quiet", "-o", output] + kind.options)
            try #require(made.status == 0, "\(made.stderr)")
            return Array(try Data(contentsOf: URL(fileURLWithPath: output)))
        }
    }

    private func record(_ findings: [FuzzFinding]) {
        for finding in findings.prefix(5) { Issue.record("\(finding)") }
    }

    @Test func inspect() throws {
        let directory = try TemporaryDirectory()
        let corpus = [FuzzCLICorpus.handMadeStream]
            + (try Self.recordings([("h264", ["--profile", "baseline"]), ("h264", ["--bframes", "2", "--keyint", "3"])],
                                   frames: 4, in: directory))
        var campaign = ChildFuzzCampaign(target: "cli-inspect", corpus: corpus, tokens: FuzzCLICorpus.h264Tokens,
                                         iterations: 100, fileExtension: "h264")
        record(try campaign.run(in: directory.url.path, environment: Self.environment(directory),
                                arguments: { [Tools.vtrecord, "inspect", $0] },
                                judge: { FuzzCLIJudge.reportOrOneError($0, allowed: [0, 2]) }))
    }

    /// `inspect` on damaged MP4, Matroska and MPEG-TS files (the container readers): a report or
    /// one line with exit 2.
    @Test(arguments: ["mp4", "mkv", "ts"])
    func inspectContainers(_ container: String) throws {
        let directory = try TemporaryDirectory()
        let corpus = try Self.recordings([(container, ["--bframes", "2", "--keyint", "3"])]
                                         + (container == "mp4" ? [("mp4", ["--mp4-fragmented", "--keyint", "2"])] : []),
                                         frames: 6, in: directory)
        var campaign = ChildFuzzCampaign(target: "cli-inspect-\(container)", corpus: corpus, tokens: FuzzCLICorpus.h264Tokens,
                                         iterations: 60, fileExtension: container)
        record(try campaign.run(in: directory.url.path, environment: Self.environment(directory),
                                arguments: { [Tools.vtrecord, "inspect", $0] },
                                judge: { FuzzCLIJudge.reportOrOneError($0, allowed: [0, 2]) }))
    }

    /// `verify` on damaged raw streams, MP4, Matroska and MPEG-TS files: a report (clean, or
    /// damaged with exit 6) and nothing on standard error, or one line with exit 2.
    @Test func verify() throws {
        let directory = try TemporaryDirectory()
        let corpus = try Self.recordings([("h264", ["--bframes", "2", "--keyint", "3"]), ("mp4", ["--bframes", "2", "--keyint", "3"]),
                                          ("mp4", ["--mp4-fragmented", "--keyint", "3"]), ("mkv", ["--keyint", "3"]),
                                          ("ts", ["--keyint", "3"])], frames: 6, in: directory)
        var campaign = ChildFuzzCampaign(target: "cli-verify", corpus: corpus, tokens: FuzzCLICorpus.h264Tokens,
                                         iterations: 80, fileExtension: "bin")
        record(try campaign.run(in: directory.url.path, environment: Self.environment(directory),
                                arguments: { [Tools.vtrecord, "verify", $0] },
                                judge: FuzzCLIJudge.verdict))
    }

    /// `thumbnail` on the same kinds of damaged files: a JPEG on standard output and nothing on
    /// standard error, or one line with exit 2.
    @Test func thumbnail() throws {
        let directory = try TemporaryDirectory()
        let corpus = try Self.recordings([("h264", ["--bframes", "2", "--keyint", "3"]), ("mp4", ["--bframes", "2", "--keyint", "3"]),
                                          ("mkv", ["--keyint", "3"]), ("ts", ["--keyint", "3"])], frames: 6, in: directory)
        var campaign = ChildFuzzCampaign(target: "cli-thumbnail", corpus: corpus, tokens: FuzzCLICorpus.h264Tokens,
                                         iterations: 40, fileExtension: "bin")
        record(try campaign.run(in: directory.url.path, environment: Self.environment(directory),
                                arguments: { [Tools.vtrecord, "thumbnail", $0, "--at", "0.1", "--exact", "-o", "-"] },
                                judge: { FuzzCLIJudge.reportOrOneError($0, allowed: [0, 2]) }))
    }

    @Test func presetsShow() throws {
        let directory = try TemporaryDirectory()
        var campaign = ChildFuzzCampaign(target: "cli-preset", corpus: try FuzzCLICorpus.presets(), tokens: FuzzCLICorpus.tomlTokens,
                                         iterations: 50, fileExtension: "toml", maximumSize: 4096)
        record(try campaign.run(in: directory.url.path, environment: Self.environment(directory),
                                arguments: { [Tools.vtrecord, "presets", "show", $0] },
                                judge: { FuzzCLIJudge.reportOrOneError($0, allowed: [0, 2]) }))
    }

    @Test func recordY4MWithX264() throws {
        let directory = try TemporaryDirectory()
        let output = directory.path("out.h264")
        var campaign = ChildFuzzCampaign(target: "cli-y4m-x264", corpus: FuzzCLICorpus.y4m, tokens: FuzzCLICorpus.y4mTokens,
                                         iterations: 60, fileExtension: "y4m", maximumSize: 16384)
        record(try campaign.run(in: directory.url.path, environment: Self.environment(directory),
                                arguments: { [Tools.vtrecord, "--input", $0, "--encoder", "x264", "--quiet", "-o", output, "--overwrite"] },
                                judge: { FuzzCLIJudge.recording($0, allowed: [0, 2]) }))
    }

    /// The same through the VA-API encoder. A device may refuse a size it cannot encode
    /// (exit 4, one line), and the double must see no protocol mistake.
    @Test func recordY4MWithVAAPI() throws {
        let va = try FakeVADevice()
        let directory = try TemporaryDirectory()
        let output = directory.path("out.h264")
        var campaign = ChildFuzzCampaign(target: "cli-y4m-vaapi", corpus: FuzzCLICorpus.y4m, tokens: FuzzCLICorpus.y4mTokens,
                                         iterations: 30, fileExtension: "y4m", maximumSize: 16384)
        record(try campaign.run(in: directory.url.path, environment: try va.environment(base: Self.environment(directory)),
                                arguments: { [Tools.vtrecord, "--input", $0, "--encoder", "vaapi", "--va-device", va.devicePath,
                                              "--quiet", "-o", output, "--overwrite"] },
                                judge: { FuzzCLIJudge.recording($0, allowed: [0, 2, 4]) }))
    }

    /// The judge must be able to fail: another exit status, a second error line, or an error
    /// with a zero exit status, are findings.
    @Test func judgeCatchesBrokenContracts() {
        func result(_ status: Int32, _ standardError: String, _ output: String = "") -> ChildProcess.Result {
            ChildProcess.Result(status: status, standardOutput: Data(output.utf8), standardError: standardError,
                                timedOut: false, signal: nil)
        }
        #expect(FuzzCLIJudge.reportOrOneError(result(2, "vtrecord: error: bad\n"), allowed: [0, 2]) == nil)
        #expect(FuzzCLIJudge.reportOrOneError(result(0, "", "report\n"), allowed: [0, 2]) == nil)
        #expect(FuzzCLIJudge.reportOrOneError(result(1, "vtrecord: error: bad\n"), allowed: [0, 2]) != nil)
        #expect(FuzzCLIJudge.reportOrOneError(result(2, "vtrecord: error: a\nvtrecord: error: b\n"), allowed: [0, 2]) != nil)
        #expect(FuzzCLIJudge.reportOrOneError(result(0, "vtrecord: error: a\n", "x"), allowed: [0, 2]) != nil)
        #expect(FuzzCLIJudge.recording(result(2, "vtrecord: warning: w\nvtrecord: error: e\n"), allowed: [0, 2]) == nil)
        #expect(FuzzCLIJudge.recording(result(4, "x264 [error]: x\nvtrecord: error: e\n"), allowed: [0, 2]) != nil)
        #expect(FuzzCLIJudge.recording(result(0, "fake-va: violation: frame_num\n"), allowed: [0, 2]) != nil)
        #expect(FuzzCLIJudge.verdict(result(6, "", "x: DAMAGED\n")) == nil)
        #expect(FuzzCLIJudge.verdict(result(6, "vtrecord: error: x\n", "x: DAMAGED\n")) != nil)
        #expect(FuzzCLIJudge.verdict(result(6, "")) != nil)
        #expect(FuzzCLIJudge.verdict(result(2, "vtrecord: error: x\n")) == nil)
        #expect(FuzzCLIJudge.verdict(result(1, "vtrecord: error: x\n")) != nil)
    }
}

/// What a run of the binary on a damaged file may end in.
enum FuzzCLIJudge {
    /// A command that prints a report: exit 0 with the report and nothing on standard error, or
    /// an allowed failure status with exactly one line, the error.
    static func reportOrOneError(_ result: ChildProcess.Result, allowed: Set<Int32>) -> String? {
        guard allowed.contains(result.status) else { return "exit status \(result.status)" }
        let lines = result.standardError.split(separator: "\n")
        if result.status == 0 {
            if !lines.isEmpty { return "exit 0 with messages on standard error" }
            if result.standardOutput.isEmpty { return "exit 0 with no output" }
            return nil
        }
        guard lines.count == 1, lines[0].hasPrefix("vtrecord: error: ") else {
            return "exit \(result.status) with \(lines.count) lines on standard error, not one error line"
        }
        return nil
    }

    /// `verify` of one file: a report on standard output and nothing on standard error (exit 0
    /// clean, 6 damaged), or exit 2 with one error line.
    static func verdict(_ result: ChildProcess.Result) -> String? {
        if result.status == 0 || result.status == 6 {
            if !result.standardError.isEmpty { return "exit \(result.status) with messages on standard error" }
            return result.standardOutput.isEmpty ? "exit \(result.status) with no report" : nil
        }
        return reportOrOneError(result, allowed: [2])
    }

    /// A recording: warnings may come first, but a failure is one error line, at the end, and
    /// the VA-API double saw no mistake.
    static func recording(_ result: ChildProcess.Result, allowed: Set<Int32>) -> String? {
        guard allowed.contains(result.status) else { return "exit status \(result.status)" }
        if result.standardError.contains("fake-va: violation") { return "the VA-API double saw a protocol mistake" }
        let lines = result.standardError.split(separator: "\n")
        let errors = lines.filter { $0.contains("error") }
        if result.status == 0 {
            return errors.isEmpty ? nil : "exit 0 with an error message"
        }
        guard errors.count == 1, lines.last?.hasPrefix("vtrecord: error: ") == true else {
            return "exit \(result.status) with \(errors.count) error lines, not one error line at the end"
        }
        return nil
    }
}
