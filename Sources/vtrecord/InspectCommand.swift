import ArgumentParser
import Foundation
import VTCore
import VTH264
import VTOutput
import VTReading
import VTRecorder

struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Describe a recording: its container (MP4, Matroska, MPEG-TS), then the H.264 stream: NAL units, frames, GOPs, SPS and PPS."
    )

    @Flag(name: .long, help: "Print the report as JSON.")
    var json = false

    @Argument(help: ArgumentHelp("An Annex B .h264 file ('-' for standard input), or an MP4, Matroska or MPEG-TS file.", valueName: "file"))
    var file: String

    /// What a container adds to the report of its stream.
    struct ContainerJSON: Encodable {
        var format: String
        var duration: Double?
        var frames: Int
        var keyframes: Int
        /// MP4 only: whether the file is one regular MP4, and its fragments if it is not.
        var finalized: Bool?
        var fragments: Int?
    }

    struct ContainedReport: Encodable {
        var container: ContainerJSON
        var h264: StreamReport
    }

    func run() throws {
        let bytes = try readAll()
        if file != "-" && !AnnexB.startsWithStartCode(Array(bytes.prefix(4))) {
            return try inspectContainer(bytes)
        }
        let report = try StreamInspector.inspect(annexB: bytes)
        if json {
            try printJSON(report)
        } else {
            print(report.textDescription, terminator: report.textDescription.hasSuffix("\n") ? "" : "\n")
        }
    }

    private func readAll() throws -> [UInt8] {
        let handle: FileHandle
        if file == "-" {
            handle = FileHandle.standardInput
        } else if let opened = FileHandle(forReadingAtPath: file) {
            handle = opened
        } else {
            throw UsageError("cannot read \(file): \(SystemError(call: "open", errno: errno).reason)")
        }
        do {
            return Array(try handle.readToEnd() ?? Data())
        } catch {
            throw UsageError("cannot read \(file == "-" ? "standard input" : file): \(error.localizedDescription)")
        }
    }

    /// MP4, Matroska or MPEG-TS: the container's own facts, then the report of the H.264
    /// stream it carries (as Annex B, with SPS and PPS before each keyframe).
    private func inspectContainer(_ bytes: [UInt8]) throws {
        let reader = try AssetReader(path: file)
        var stream: [UInt8] = []
        var frames = 0
        var keyframes = 0
        while let frame = try reader.nextFrame() {
            guard let format = reader.format else { break }
            do {
                stream += try AnnexB.annexB(frame, format: format)
            } catch {
                throw ReadError(path: file, reason: "frame \(frames) is damaged: \(error)")
            }
            frames += 1
            if frame.isKeyFrame { keyframes += 1 }
        }
        guard frames > 0 else { throw ReadError(path: file, reason: "holds no complete frame") }
        let layout = reader.containerName.contains("mp4") ? MP4Layout(bytes: bytes) : nil
        let container = ContainerJSON(format: reader.container, duration: reader.duration,
                                      frames: frames, keyframes: keyframes, finalized: layout?.isFinalized,
                                      fragments: layout.map(\.fragments))
        let report = try StreamInspector.inspect(annexB: stream)
        if json {
            try printJSON(ContainedReport(container: container, h264: report))
            return
        }
        var line = "container: \(container.format)"
        if let layout {
            line += layout.isFinalized ? ", finalized (one complete moov)"
                : ", fragmented (\(layout.fragments) fragments), not finalized"
            if layout.trailingBytes > 0 { line += ", \(layout.trailingBytes) bytes cut short at the end" }
        }
        if let duration = container.duration { line += String(format: ", %.3f s", duration) }
        line += ", \(frames) frames, \(keyframes) keyframes"
        print(line)
        print(report.textDescription, terminator: report.textDescription.hasSuffix("\n") ? "" : "\n")
    }
}
