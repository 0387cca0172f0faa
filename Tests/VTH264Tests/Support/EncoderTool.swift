import Foundation

/// Runs the real encoders and ffprobe that the agreement tests compare against, in a
/// temporary directory that is removed afterwards.
struct EncoderTool {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let directory: URL

    /// Runs `body` with a fresh temporary directory.
    static func withTemporaryDirectory<R>(_ body: (EncoderTool) throws -> R) throws -> R {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("vth264-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try body(EncoderTool(directory: directory))
    }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Runs a program found on PATH and returns its standard output; throws with its standard
    /// error when it exits with a failure.
    @discardableResult
    func run(_ program: String, _ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [program] + arguments
        process.currentDirectoryURL = directory
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read both pipes before waiting, so a chatty program cannot fill a pipe and stall.
        let errorData = ErrorCollector(errors.fileHandleForReading)
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let stderr = errorData.finish()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "\(program) \(arguments.joined(separator: " ")) exited with "
                + "\(process.terminationStatus): \(String(decoding: stderr, as: UTF8.self))")
        }
        return data
    }

    /// `frames` frames of FFmpeg's testsrc2 pattern as a Y4M file.
    func testPattern(width: Int, height: Int, rate: String, frames: Int,
                     pixelFormat: String = "yuv420p", name: String = "input.y4m") throws -> String {
        try run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi",
                           "-i", "testsrc2=size=\(width)x\(height):rate=\(rate)",
                           "-frames:v", "\(frames)", "-pix_fmt", pixelFormat, path(name)])
        return path(name)
    }

    func read(_ file: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
    }

    /// ffprobe's JSON for the file's first video stream.
    func probeStream(_ file: String) throws -> [String: Any] {
        let data = try run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_streams",
                                       "-of", "json", file])
        let root = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        guard let stream = (root?["streams"] as? [[String: Any]])?.first else {
            throw Failure(description: "ffprobe found no video stream in \(file)")
        }
        return stream
    }

    /// The avcC record FFmpeg writes when it copies the stream into MP4.
    func avcCFromMP4(_ file: String) throws -> [UInt8] {
        let mp4 = path("remuxed.mp4")
        try run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", file, "-c", "copy", mp4])
        let bytes = try read(mp4)
        let type: [UInt8] = Array("avcC".utf8)
        guard let at = (4..<bytes.count - 4).first(where: { bytes[$0..<$0 + 4].elementsEqual(type) }) else {
            throw Failure(description: "no avcC box in \(mp4)")
        }
        let size = bytes[at - 4..<at].reduce(0) { $0 << 8 | Int($1) }
        return Array(bytes[at + 4..<at - 4 + size])
    }

    /// Frames ffprobe decodes, and packets it flags as keyframes.
    func probeFrameCounts(_ file: String) throws -> (frames: Int, keyframes: Int) {
        let data = try run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-count_frames",
                                       "-show_entries", "stream=nb_read_frames:packet=flags",
                                       "-of", "json", file])
        let root = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        let stream = (root?["streams"] as? [[String: Any]])?.first
        let frames = Int(stream?["nb_read_frames"] as? String ?? "") ?? -1
        let packets = root?["packets"] as? [[String: Any]] ?? []
        let keyframes = packets.filter { ($0["flags"] as? String)?.hasPrefix("K") == true }.count
        return (frames, keyframes)
    }
}

/// Drains a pipe on another thread while the main one reads standard output.
private final class ErrorCollector: @unchecked Sendable {
    // Written once by the reading thread before `done` is signalled, read only after.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    func finish() -> Data {
        done.wait()
        return data
    }
}
