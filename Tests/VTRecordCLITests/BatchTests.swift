import Foundation
import Testing

/// `vtrecord batch`: jobs run in order, a failing job does not stop the rest, every job is
/// checked before the first runs, and the result of each is reported.
@Suite struct BatchTests {
    static func run(_ arguments: [String], in dir: TemporaryDirectory) throws -> ProcessResult {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = dir.path("config")
        return try Tools.run(Tools.vtrecord, arguments, cwd: dir.url, environment: environment)
    }

    static let threeJobs = """
        description = "three jobs, the second cannot run"

        [defaults]
        preset = "low-latency"
        frames = 12
        quiet = true

        [[job]]
        name = "small"
        test-pattern = true
        size = "320x240"
        output = "small.h264"

        [[job]]
        name = "missing input"
        input = "does-not-exist.y4m"
        output = "missing.h264"

        [[job]]
        name = "tiny"
        test-pattern = true
        size = "160x120"
        frames = 7
        preset = ["720p30"]
        output = "tiny.h264"
        """

    @Test func aFailingJobDoesNotStopTheOthersAndTheExitSaysSo() throws {
        let dir = try TemporaryDirectory()
        try Data(Self.threeJobs.utf8).write(to: URL(fileURLWithPath: dir.path("jobs.toml")))
        let r = try Self.run(["batch", "jobs.toml", "--json"], in: dir)
        // The first failure's status: a Y4M file that cannot be opened is exit 2.
        #expect(r.status == 2, "\(r.stderr)")
        #expect(try Tools.counters(dir.path("small.h264"), width: 320) == (0..<12).map { $0 })
        #expect(try Tools.counters(dir.path("tiny.h264"), width: 160) == (0..<7).map { $0 })
        #expect(!FileManager.default.fileExists(atPath: dir.path("missing.h264")))

        let lines = r.stderr.split(separator: "\n").map(String.init)
        #expect(lines.contains("vtrecord: job 1 (small): ok, 12 frames to small.h264 stopped by frames"), "\(r.stderr)")
        #expect(lines.contains { $0.hasPrefix("vtrecord: job 2 (missing input): failed (exit 2): cannot open does-not-exist.y4m") },
                "\(r.stderr)")
        #expect(lines.contains("vtrecord: job 3 (tiny): ok, 7 frames to tiny.h264 stopped by frames"), "\(r.stderr)")

        let results = try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [[String: Any]])
        #expect(results.map { $0["status"] as? Int } == [0, 2, 0])
        #expect(results.map { $0["name"] as? String } == ["small", "missing input", "tiny"])
        let small = try #require(results[0]["summary"] as? [String: Any])
        let tiny = try #require(results[2]["summary"] as? [String: Any])
        // Defaults and presets: low-latency for the first, 720p30 replacing it for the third.
        #expect((small["settings"] as? [String: Any])?["tune"] as? String == "zerolatency")
        #expect((tiny["settings"] as? [String: Any])?["tune"] == nil)
        #expect(results[1]["summary"] is NSNull)
    }

    @Test func everyJobIsCheckedBeforeTheFirstRuns() throws {
        let dir = try TemporaryDirectory()
        let text = """
            [[job]]
            test-pattern = true
            frames = 5
            output = "first.h264"

            [[job]]
            test-pattern = true
            framez = 5
            output = "second.h264"
            """
        try Data(text.utf8).write(to: URL(fileURLWithPath: dir.path("jobs.toml")))
        let r = try Self.run(["batch", "jobs.toml"], in: dir)
        #expect(r.status == 2)
        #expect(r.stderr.contains("jobs.toml:8: framez: unknown key: did you mean 'frames'?"), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path) == ["jobs.toml"])

        try Data("output = \"-\"\n".utf8).write(to: URL(fileURLWithPath: dir.path("stdout.toml")))
        let combination = """
            [[job]]
            test-pattern = true
            preset = "stdout.toml"
            """
        try Data(combination.utf8).write(to: URL(fileURLWithPath: dir.path("jobs.toml")))
        let stdout = try Self.run(["batch", "jobs.toml"], in: dir)
        #expect(stdout.status == 2)
        #expect(stdout.stderr.contains("jobs.toml:1: job 1 (job 1): output = \"-\" cannot be used in a batch"), "\(stdout.stderr)")

        let missingPreset = """
            [[job]]
            test-pattern = true

            [[job]]
            test-pattern = true
            preset = "nosuch"
            """
        try Data(missingPreset.utf8).write(to: URL(fileURLWithPath: dir.path("jobs.toml")))
        let missing = try Self.run(["batch", "jobs.toml"], in: dir)
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("jobs.toml:4: job 2 (job 2): --preset nosuch: no preset of that name"), "\(missing.stderr)")

        let combined = """
            [[job]]
            test-pattern = true

            rate-control = "cbr"
            """
        try Data(combined.utf8).write(to: URL(fileURLWithPath: dir.path("jobs.toml")))
        let cbr = try Self.run(["batch", "jobs.toml"], in: dir)
        #expect(cbr.status == 2)
        #expect(cbr.stderr.contains("jobs.toml:4: rate-control: "), "\(cbr.stderr)")
    }

    /// Defaults, then the job's presets, then the job's own keys; a summary file left from
    /// before is not taken for the job's.
    @Test func aJobsPresetBeatsTheDefaultsAndAnOldSummaryIsNotReported() throws {
        let dir = try TemporaryDirectory()
        try Data(#"{"frames_encoded": 999}"#.utf8).write(to: URL(fileURLWithPath: dir.path("stale.json")))
        let text = """
            [defaults]
            test-pattern = true
            size = "160x120"
            frames = 3
            speed = "ultrafast"

            [[job]]
            name = "preset size"
            preset = "low-bandwidth"
            output = "a.h264"

            [[job]]
            name = "fails"
            input = "missing.y4m"
            json-summary = "stale.json"
            """
        try Data(text.utf8).write(to: URL(fileURLWithPath: dir.path("jobs.toml")))
        let r = try Self.run(["batch", "jobs.toml", "--json"], in: dir)
        #expect(r.status == 2, "\(r.stderr)")
        let results = try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [[String: Any]])
        let first = try #require(results.first?["summary"] as? [String: Any])
        // low-bandwidth's 640x480 beats the defaults' size; the defaults' speed, which the
        // preset also sets, gives way too.
        #expect((first["format"] as? [String: Any])?["width"] as? Int == 640)
        #expect((first["settings"] as? [String: Any])?["speed"] as? String == "medium")
        #expect(results.last?["summary"] is NSNull, "\(results)")
    }

    @Test func aSignalFinishesTheRunningJobAndStartsNoMore() throws {
        let dir = try TemporaryDirectory()
        let text = """
            [defaults]
            test-pattern = true
            realtime = true
            size = "320x240"

            [[job]]
            name = "long"
            duration = "60s"
            output = "long.h264"

            [[job]]
            name = "never"
            frames = 5
            output = "never.h264"
            """
        try Data(text.utf8).write(to: URL(fileURLWithPath: dir.path("jobs.toml")))
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = dir.path("config")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tools.vtrecord)
        process.arguments = ["batch", "jobs.toml"]
        process.currentDirectoryURL = dir.url
        process.environment = environment
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        // Wait for the first job to be recording.
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline && ((try? FileManager.default.attributesOfItem(atPath: dir.path("long.h264"))[.size] as? Int) ?? 0) < 2000 {
            Thread.sleep(forTimeInterval: 0.1)
        }
        kill(process.processIdentifier, SIGTERM)
        let text2 = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text2)")
        #expect(text2.contains("job 1 (long): ok"), "\(text2)")
        #expect(text2.contains("stopped by signal"), "\(text2)")
        #expect(text2.contains("job 2 (never): not run (stopped by a signal)"), "\(text2)")
        #expect(!FileManager.default.fileExists(atPath: dir.path("never.h264")))
        let counters = try Tools.counters(dir.path("long.h264"), width: 320)
        #expect(!counters.isEmpty && counters == (0..<counters.count).map { $0 })
    }
}
