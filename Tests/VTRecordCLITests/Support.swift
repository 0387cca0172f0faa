import Foundation
import Testing
import VTCapture

/// What a finished process left behind.
struct ProcessResult {
    var status: Int32
    var stdout: Data
    var stderr: String
    var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
}

enum Tools {
    /// The vtrecord binary built next to this test bundle (or VTRECORD_BIN).
    static let vtrecord: String = {
        if let path = ProcessInfo.processInfo.environment["VTRECORD_BIN"] { return path }
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var dir = here.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("vtrecord").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/vtrecord").path
    }()

    /// vtrecord at nice -5, as a recorder on a host of its own, above the rest of the test suite:
    /// for a recording that must drop nothing while a server or a stream works beside it, not
    /// while the other tests keep both cores busy. A stall in vtrecord itself still shows.
    static let vtrecordAboveTheSuite = ["/usr/bin/nice", "-n", "-5", vtrecord]

    /// Runs a program to its end. `stdin` is a file to read from (default: nothing).
    @discardableResult
    static func run(_ program: String, _ arguments: [String], stdin: String? = nil,
                    cwd: URL? = nil, environment: [String: String]? = nil) throws -> ProcessResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program.hasPrefix("/") ? program : "/usr/bin/env")
        process.arguments = program.hasPrefix("/") ? arguments : [program] + arguments
        if let cwd { process.currentDirectoryURL = cwd }
        if let environment { process.environment = environment }
        // stdout through a pipe (it may be a whole stream), stderr into a file, so neither can
        // fill up and stall the child while the other is read.
        let out = Pipe()
        let errURL = FileManager.default.temporaryDirectory
            .appendingPathComponent("vtrecord-stderr-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: errURL.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }
        defer { try? FileManager.default.removeItem(at: errURL) }
        let err = try FileHandle(forWritingTo: errURL)
        process.standardOutput = out
        process.standardError = err
        if let stdin {
            process.standardInput = FileHandle(forReadingAtPath: stdin)
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try err.close()
        let errData = (try? Data(contentsOf: errURL)) ?? Data()
        return ProcessResult(status: process.terminationStatus, stdout: outData,
                             stderr: String(decoding: errData, as: UTF8.self))
    }

    /// Runs vtrecord.
    @discardableResult
    static func vtrecord(_ arguments: [String], stdin: String? = nil, cwd: URL? = nil) throws -> ProcessResult {
        try run(vtrecord, arguments, stdin: stdin, cwd: cwd)
    }

    /// Runs a shell pipeline (for pipes between programs).
    @discardableResult
    static func shell(_ script: String, cwd: URL? = nil) throws -> ProcessResult {
        var env = ProcessInfo.processInfo.environment
        env["VTRECORD"] = vtrecord
        return try run("/bin/bash", ["-c", script], cwd: cwd, environment: env)
    }

    /// The frame counters (test pattern, fake camera) in a decoded recording, in display
    /// order, nil where unreadable. Only the top `rows` are decoded: the code sits there.
    static func counters(_ file: String, width: Int, rows: Int = 96) throws -> [Int?] {
        let r = try run("ffmpeg", ["-v", "error", "-i", file, "-fps_mode", "passthrough",
                                   "-vf", "crop=\(width):\(rows):0:0", "-f", "rawvideo", "-pix_fmt", "gray", "-"])
        try #require(r.status == 0, "ffmpeg: \(r.stderr)")
        let frameSize = width * rows
        try #require(r.stdout.count % frameSize == 0)
        return r.stdout.withUnsafeBytes { raw in
            let base = raw.bindMemory(to: UInt8.self).baseAddress!
            return (0..<(raw.count / frameSize)).map {
                TestPatternSource.frameNumber(luma: base + $0 * frameSize, width: width, height: rows, bytesPerRow: width)
            }
        }
    }

    /// Options for two recordings whose pictures a test compares byte for byte: one encoder
    /// thread. With frame threads x264 is not reproducible run to run on small pictures: the
    /// x264 CLI itself, `--preset veryfast` on 50 frames of 320x240 testsrc2, wrote 3 different
    /// streams in 40 runs, the last nine pictures differing (its lookahead thread decides the
    /// last frame types on what has arrived by the flush). With one thread, 16 of 16 alike.
    static let reproducible = ["--threads", "1"]

    /// Runs a test-pattern recording of one frame with `arguments` in a folder of its own and
    /// expects it refused as bad usage: exit 2, one line saying `expected`, nothing written.
    static func expectRefused(_ arguments: [String], saying expected: String,
                              sourceLocation: SourceLocation = #_sourceLocation) throws {
        let directory = try TemporaryDirectory()
        let r = try run(vtrecord, ["--test-pattern", "--frames", "1"] + arguments, cwd: directory.url)
        #expect(r.status == 2, "\(r.stderr)", sourceLocation: sourceLocation)
        #expect(r.stderr.contains(expected), "\(r.stderr)", sourceLocation: sourceLocation)
        #expect(r.stderr.split(separator: "\n").count <= 2, "\(r.stderr)", sourceLocation: sourceLocation)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty,
                sourceLocation: sourceLocation)
    }

    /// Per-frame MD5s of the decoded pictures (`ffmpeg -fps_mode passthrough -f framemd5`).
    static func frameMD5s(_ file: String) throws -> [String] {
        let r = try run("ffmpeg", ["-v", "error", "-i", file, "-fps_mode", "passthrough",
                                   "-f", "framemd5", "-"])
        #expect(r.status == 0, "ffmpeg could not decode \(file): \(r.stderr)")
        return r.stdoutText.split(separator: "\n")
            .filter { !$0.hasPrefix("#") }
            .compactMap { $0.split(separator: ",").last?.trimmingCharacters(in: .whitespaces) }
    }

    /// ffprobe's JSON for `entries`.
    static func ffprobe(_ file: String, _ arguments: [String]) throws -> [String: Any] {
        let r = try run("ffprobe", ["-v", "error", "-of", "json"] + arguments + [file])
        #expect(r.status == 0, "ffprobe failed on \(file): \(r.stderr)")
        return (try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any]) ?? [:]
    }
}

/// A directory that disappears with the test.
final class TemporaryDirectory: Sendable {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("vtrecord-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    deinit { try? FileManager.default.removeItem(at: url) }
}
