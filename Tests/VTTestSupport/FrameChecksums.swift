import Foundation

/// One decoded frame as `ffmpeg -f framemd5` lists it: its presentation time (in the
/// stream's time base) and the MD5 of its pictures or samples.
public struct FrameChecksum: Sendable, Equatable, CustomStringConvertible {
    public var pts: Int64
    public var hash: String

    public init(pts: Int64, hash: String) {
        self.pts = pts
        self.hash = hash
    }

    public var description: String { "\(pts) \(hash)" }
}

/// What `ffmpeg -map 0:v? -map 0:a? -fps_mode passthrough -f framemd5` wrote for a stream: the
/// video frames and the sound frames, each in the order they were decoded. Sound is known from
/// decoded frames, not from the stream's header, so a stream that declares sound but carries
/// none that decodes counts as silent; and a damaged sound frame shows as a checksum that
/// differs, where the log may not say which frame was hit.
public struct FrameChecksums: Sendable, Equatable {
    public var video: [FrameChecksum]
    public var audio: [FrameChecksum]

    public init(video: [FrameChecksum] = [], audio: [FrameChecksum] = []) {
        self.video = video
        self.audio = audio
    }

    /// Reads framemd5 text: the `#media_type N: …` header lines say which stream index is
    /// video and which is sound; every other line is `stream, dts, pts, duration, size, hash`.
    /// A line cut short (a receiver killed while writing) is skipped.
    public init(parsing text: String) {
        var mediaTypes: [Int: String] = [:]
        var video: [FrameChecksum] = []
        var audio: [FrameChecksum] = []
        for line in text.split(separator: "\n") {
            if line.hasPrefix("#media_type ") {
                let parts = line.dropFirst("#media_type ".count).split(separator: ":", maxSplits: 1)
                if parts.count == 2, let index = Int(parts[0]) {
                    mediaTypes[index] = parts[1].trimmingCharacters(in: .whitespaces)
                }
                continue
            }
            if line.hasPrefix("#") { continue }
            let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard fields.count == 6, let index = Int(fields[0]), let pts = Int64(fields[2]),
                  fields[5].count == 32 else { continue }
            switch mediaTypes[index] {
            case "video": video.append(FrameChecksum(pts: pts, hash: fields[5]))
            case "audio": audio.append(FrameChecksum(pts: pts, hash: fields[5]))
            default: break
            }
        }
        self.init(video: video, audio: audio)
    }

    public var hashes: [String] { video.map(\.hash) }
    public var hasSound: Bool { !audio.isEmpty }

    /// Decodes `file` to its end with ffmpeg (so the last frames its decoder holds come out
    /// too) and returns the checksums with ffmpeg's warnings and errors, which name any damage
    /// it met ("Packet corrupt", "error while decoding MB").
    public static func decoding(_ file: String, timeout: Duration = .seconds(30)) throws -> (FrameChecksums, log: String) {
        let result = try ChildProcess.run(
            ["ffmpeg", "-nostdin", "-hide_banner", "-nostats", "-v", "warning", "-i", file,
             "-map", "0:v?", "-map", "0:a?", "-fps_mode", "passthrough", "-f", "framemd5", "-"],
            environment: ProcessInfo.processInfo.environment, timeout: timeout)
        var log = result.standardError
        if result.status != 0 || result.timedOut {
            log += "\nffmpeg decoding \(file): exit status \(result.status)\(result.timedOut ? " (timed out)" : "")"
        }
        return (FrameChecksums(parsing: result.standardOutputText), log)
    }
}
