import Foundation
import Logging
import Synchronization
import Testing
import VTCapture
import VTCore

/// A fresh directory under the system temporary directory, removed when the value goes away.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("vtcapture-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}

struct ToolFailed: Error, CustomStringConvertible {
    let command: [String]
    let status: Int32
    let standardError: String
    var description: String { "\(command.joined(separator: " ")) exited with \(status): \(standardError)" }
}

/// Turns SIGPIPE off for the test process, once. A test that fails while a writer still
/// feeds a pipe (to a tool, or to a source under test) must fail, not kill the whole run.
let brokenPipesIgnored: Void = {
    signal(SIGPIPE, SIG_IGN)
}()

/// Runs a command-line tool found on PATH and returns its standard output.
@discardableResult
func runTool(_ arguments: [String], input: Data? = nil) throws -> Data {
    brokenPipesIgnored
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    let inputPipe = input.map { _ in Pipe() }
    process.standardInput = inputPipe ?? FileHandle.nullDevice
    try process.run()
    // Feed, drain stdout and drain stderr at the same time so no pipe fills up and stalls
    // the tool.
    let group = DispatchGroup()
    if let input, let writer = inputPipe?.fileHandleForWriting {
        DispatchQueue.global().async(group: group) {
            writer.write(input)
            try? writer.close()
        }
    }
    let errorText = Mutex(Data())
    let errorHandle = errors.fileHandleForReading
    DispatchQueue.global().async(group: group) {
        let data = errorHandle.readDataToEndOfFile()
        errorText.withLock { $0 = data }
    }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    group.wait()
    guard process.terminationStatus == 0 else {
        throw ToolFailed(command: arguments, status: process.terminationStatus,
                         standardError: String(decoding: errorText.withLock { $0 }, as: UTF8.self))
    }
    return data
}

/// `ffmpeg` with the banner and progress silenced.
@discardableResult
func ffmpeg(_ arguments: [String], input: Data? = nil) throws -> Data {
    try runTool(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error"] + arguments, input: input)
}

/// A swift-log handler that keeps every message, so tests can see the warnings a source logs.
struct RecordingLogHandler: LogHandler {
    final class Messages: Sendable {
        private let storage = Mutex<[String]>([])
        func append(_ message: String) { storage.withLock { $0.append(message) } }
        var all: [String] { storage.withLock { $0 } }
    }

    let messages: Messages
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    init(messages: Messages) { self.messages = messages }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        messages.append("\(event.level): \(event.message)")
    }

    /// A logger that records into a fresh message list.
    static func logger() -> (Logger, Messages) {
        let messages = Messages()
        return (Logger(label: "test") { _ in RecordingLogHandler(messages: messages) }, messages)
    }
}

/// The bytes of a tightly packed I420 picture, plane after plane.
func pictureBytes(_ buffer: PixelBuffer) -> [UInt8] {
    var bytes: [UInt8] = []
    for plane in buffer.planes {
        for row in 0..<plane.rows {
            bytes.append(contentsOf: UnsafeBufferPointer(start: plane.baseAddress + row * plane.bytesPerRow,
                                                         count: plane.rowBytes))
        }
    }
    return bytes
}

/// Writes pictures as a Y4M stream: the smallest writer that x264 and ffmpeg accept.
struct Y4MWriter {
    private(set) var data: Data

    init(width: Int, height: Int, frameRate: FrameRate, extraTags: String = "") {
        let tags = "W\(width) H\(height) F\(frameRate.numerator):\(frameRate.denominator) Ip A1:1 C420jpeg\(extraTags)"
        data = Data("YUV4MPEG2 \(tags)\n".utf8)
    }

    mutating func append(_ buffer: PixelBuffer) {
        data.append(contentsOf: Array("FRAME\n".utf8))
        data.append(contentsOf: pictureBytes(buffer))
    }

    mutating func append(picture: [UInt8]) {
        data.append(contentsOf: Array("FRAME\n".utf8))
        data.append(contentsOf: picture)
    }
}

extension Data {
    /// Splits a raw video stream into pictures of `size` bytes.
    func pictures(ofSize size: Int) -> [[UInt8]] {
        stride(from: 0, to: count - size + 1, by: size).map { Array(self[$0..<($0 + size)]) }
    }
}

struct MissingFrame: Error {}

/// `#require` for a frame: the macro takes only values it can copy, and a frame owns its
/// buffer's lease.
func requireFrame(_ frame: consuming CapturedFrame?,
                  sourceLocation: SourceLocation = #_sourceLocation) throws -> CapturedFrame {
    guard let frame else {
        Issue.record("the source gave no frame", sourceLocation: sourceLocation)
        throw MissingFrame()
    }
    return frame
}

extension Optional where Wrapped: ~Copyable {
    /// For `#expect`, which cannot take a frame to compare with nil.
    var isNone: Bool {
        switch self {
        case .none: true
        case .some: false
        }
    }
}

/// True when `next` gives no frame (for `#expect`, which cannot hold a frame itself).
func noFrame(_ next: () throws -> CapturedFrame?) rethrows -> Bool {
    try next().isNone
}
