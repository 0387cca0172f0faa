import ArgumentParser
import Foundation
import VTCore
import VTEncoding
import VTH264
import VTOutput
import VTReading

/// `vtrecord remux IN -o OUT`: the same access units in another container, without encoding.
struct Remux: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Put a recording in another container without encoding it again: raw .h264, MP4, Matroska, MPEG-TS."
    )

    @Argument(help: ArgumentHelp("A raw .h264 (Annex B) file, or an MP4, Matroska or MPEG-TS file.", valueName: "file"))
    var input: String

    @Option(name: [.short, .long], help: ArgumentHelp("The file to write, its kind chosen by its extension or --container.", valueName: "path"))
    var output: String

    @Option(name: .long, help: ArgumentHelp("What to write: h264, mp4, mkv or ts (default: by the -o extension).", valueName: "kind"))
    var container: Container?

    @Option(name: .long, help: ArgumentHelp("A raw input's frame times (timestamp format v2, as --timestamps records them); for a raw output, where to write them.", valueName: "path"))
    var timestamps: String?

    @Option(name: .long, help: ArgumentHelp("A raw input's frame rate when there is no --timestamps (default: the rate in its SPS).", valueName: "rate"))
    var fps: FrameRateArgument?

    @Option(name: .long, help: ArgumentHelp("MP4 and Matroska: the longest fragment (cluster), as when recording (default 1s).", valueName: "time"))
    var fragmentDuration: DurationArgument?

    @Flag(name: .long, help: "MP4: leave the file fragmented instead of finalizing it.")
    var mp4Fragmented = false

    @Flag(name: .long, help: "Replace an existing output file.")
    var overwrite = false

    func run() throws {
        let kind = try Container.choose(explicit: container, path: output)
        let rawInput = try Self.isRawStream(input)
        if rawInput && timestamps == nil && fps == nil && kind == .h264 {
            throw UsageError("\(input) and \(output) are both raw H.264: there is nothing to remux")
        }
        if rawInput {
            // Mapped, not read: a raw stream of hours stays on disk.
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: input), options: .alwaysMapped)
            } catch {
                throw ReadError(path: input, reason: "cannot read it: \(error.localizedDescription)")
            }
            try data.withUnsafeBytes { bytes in try remuxRaw(bytes, to: kind) }
        } else {
            let reader = try AssetReader(path: input)
            try copy(to: kind, rate: fps?.rate ?? reader.frameRate ?? .fps30,
                     logTimes: kind == .h264) {
                () throws(ReadError) -> (EncodedFrame, VideoFormatDescription)? in
                guard let frame = try reader.nextFrame(), let format = reader.format else { return nil }
                return (frame, format)
            }
        }
    }

    /// A raw stream's access units with times: the --timestamps file's, or n ÷ rate, given to
    /// the pictures in display order.
    private func remuxRaw(_ bytes: UnsafeRawBufferPointer, to kind: Container) throws {
        var reader = AccessUnitReader(annexB: bytes)
        // The SPS comes with the first picture: read it before choosing the rate.
        var first: AccessUnitReader.Unit?
        do {
            first = try reader.nextUnit()
        } catch {
            throw ReadError(path: input, reason: "damaged H.264 stream: \(error)")
        }
        let rate = fps?.rate ?? reader.vuiFrameRate ?? .fps30
        let times = try timestamps.map(Self.readTimestamps)
        var read = 0
        try copy(to: kind, rate: rate, logTimes: false) { () throws(ReadError) -> (EncodedFrame, VideoFormatDescription)? in
            let unit: AccessUnitReader.Unit?
            if let pending = first {
                unit = pending
                first = nil
            } else {
                do {
                    unit = try reader.nextUnit()
                } catch {
                    throw ReadError(path: input, reason: "damaged H.264 stream after \(read) frames: \(error)")
                }
            }
            guard let unit else { return nil }
            read += 1
            let pts: MediaTime
            if let times {
                guard unit.displayIndex < times.count else {
                    throw ReadError(path: timestamps ?? "", reason: "has \(times.count) times, fewer than the frames of \(input)")
                }
                pts = times[unit.displayIndex]
            } else {
                pts = MediaTime(value: Int64(unit.displayIndex * rate.denominator), timescale: Int32(rate.numerator))
            }
            return (EncodedFrame(data: unit.data, pts: pts, dts: pts, isKeyFrame: unit.isKeyFrame,
                                 token: FrameToken(UInt64(unit.displayIndex))), unit.format)
        }
    }

    /// Writes every frame `next` gives, in decode order, to the output. Decode times are made
    /// again from the presentation times and the stream's reorder depth, the same way for every
    /// input (Matroska keeps none; a raw stream has none).
    /// `logTimes`: write the presentation times to --timestamps (a container read into a raw
    /// stream).
    private func copy(to kind: Container, rate: FrameRate, logTimes: Bool,
                      next: () throws(ReadError) -> (EncodedFrame, VideoFormatDescription)?) throws {
        let settings = AssetWriter.Settings(
            container: kind, overwrite: overwrite, frameRate: rate, sourceTimes: true,
            fragmentDuration: fragmentDuration?.seconds ?? 1, keepFragmented: mp4Fragmented,
            metadata: ContainerMetadata(encoder: "vtrecord \(VTRecord.version)", source: input))
        guard var item = try next() else { throw ReadError(path: input, reason: "holds no complete frame") }
        let writer = try AssetWriter.open(path: output, settings: settings)
        let log = try (logTimes ? timestamps : nil).map { path throws(OutputError) in
            try TimestampLog(path: path, overwrite: overwrite)
        }
        do {
            let sps = item.1.sequenceParameterSets.first.flatMap { try? SequenceParameterSet(nalUnit: $0) }
            var decodeTimes = DecodeTimes(delay: sps.map(AccessUnitReader.reorderDepth) ?? 2, frameDuration: rate.frameDuration)
            let start = item.0.pts
            var shown: [MediaTime] = []
            var current: VideoFormatDescription?
            while true {
                var (frame, format) = item
                decodeTimes.arrived(frame.pts)
                frame.dts = decodeTimes.next()
                if format != current {
                    try writer.writeHeader(format)
                    current = format
                }
                try writer.write(frame)
                if log != nil { shown.append(frame.pts + MediaTime(value: -start.value, timescale: start.timescale)) }
                guard let following = try next() else { break }
                item = following
            }
            if let log {
                // The log lists presentation times in display order.
                for time in shown.sorted() { try log.record(time) }
                try log.close()
            }
            try writer.finish(keepEmpty: false)
        } catch {
            writer.abandon()
            throw error
        }
    }

    /// Times in milliseconds, one per line, after a "# timestamp format v2" header.
    static func readTimestamps(_ path: String) throws -> [MediaTime] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw UsageError("cannot read \(path)")
        }
        var times: [MediaTime] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            guard let milliseconds = Double(trimmed), milliseconds.isFinite else {
                throw UsageError("\(path):\(number + 1): \"\(trimmed)\" is not a time in milliseconds")
            }
            times.append(MediaTime(value: Int64((milliseconds * 1000).rounded()), timescale: 1_000_000))
        }
        return times
    }

    /// Whether `path` holds a raw stream: its extension, or its first bytes.
    static func isRawStream(_ path: String) throws -> Bool {
        if let kind = Container(pathExtension: URL(fileURLWithPath: path).pathExtension) { return kind == .h264 }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ReadError(path: path, reason: "cannot open it: \(SystemError.reason(errno))")
        }
        defer { try? handle.close() }
        return AnnexB.startsWithStartCode(Array((try? handle.read(upToCount: 4)) ?? Data()))
    }
}
