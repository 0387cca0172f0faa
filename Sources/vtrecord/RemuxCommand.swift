import ArgumentParser
import Foundation
import VTCore
import VTEncoding
import VTH264
import VTOutput

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
        var frames: [EncodedFrame] = []
        var formats: [FormatDescription] = []
        var rate: FrameRate
        if rawInput {
            (frames, formats, rate) = try readRaw()
        } else {
            let reader = try AssetReader(path: input)
            while let frame = try reader.nextFrame() {
                guard let format = reader.format else { break }
                frames.append(frame)
                formats.append(format)
            }
            rate = fps?.rate ?? Self.rate(of: frames) ?? FrameRate(numerator: 30, denominator: 1)!
            // Matroska keeps no decode times, and libavformat then repeats the presentation
            // time: decode times are made again the same way for every input.
            let sps = formats.first?.sequenceParameterSets.first.flatMap { try? SequenceParameterSet(nalUnit: $0) }
            var decodeTimes = DecodeTimes(delay: sps.map(AccessUnitReader.reorderDepth) ?? 2,
                                          frameDuration: rate.frameDuration)
            for time in frames.map(\.pts).sorted() { decodeTimes.arrived(time) }
            for index in frames.indices { frames[index].dts = decodeTimes.next() }
        }
        guard !frames.isEmpty else { throw ReadError(path: input, reason: "holds no complete frame") }
        let settings = AssetWriter.Settings(
            container: kind, overwrite: overwrite, frameRate: rate, sourceTimes: true,
            fragmentDuration: fragmentDuration?.seconds ?? 1, keepFragmented: mp4Fragmented,
            metadata: ContainerMetadata(encoder: "vtrecord \(VTRecord.version)", source: input))
        let writer = try AssetWriter.open(path: output, settings: settings)
        let log = try (!rawInput && kind == .h264 ? timestamps : nil).map { path throws(OutputError) in
            try TimestampLog(path: path, overwrite: overwrite)
        }
        do {
            var current: FormatDescription?
            for (frame, format) in zip(frames, formats) {
                if format != current {
                    try writer.writeHeader(format)
                    current = format
                }
                try writer.write(frame)
            }
            if let log {
                // The log lists presentation times in display order.
                for pts in frames.map(\.pts).sorted() { try log.record(pts + MediaTime(value: -frames[0].pts.value, timescale: frames[0].pts.timescale)) }
                try log.close()
            }
            try writer.finish(keepEmpty: false)
        } catch {
            writer.abandon()
            throw error
        }
    }

    /// A raw stream's access units with times: the --timestamps file's, or n ÷ rate, given to
    /// the pictures in display order; decode times follow from the stream's reorder depth.
    private func readRaw() throws -> ([EncodedFrame], [FormatDescription], FrameRate) {
        let bytes: [UInt8]
        do {
            bytes = Array(try Data(contentsOf: URL(fileURLWithPath: input)))
        } catch {
            throw ReadError(path: input, reason: "cannot read it: \(error.localizedDescription)")
        }
        var reader = AccessUnitReader(annexB: bytes)
        var units: [AccessUnitReader.Unit] = []
        do {
            while let unit = try reader.nextUnit() { units.append(unit) }
        } catch {
            throw ReadError(path: input, reason: "damaged H.264 stream: \(error)")
        }
        let rate = fps?.rate ?? reader.vuiFrameRate ?? FrameRate(numerator: 30, denominator: 1)!
        let times: [MediaTime]
        if let timestamps {
            times = try Self.readTimestamps(timestamps)
            guard times.count >= units.count else {
                throw UsageError("\(timestamps) has \(times.count) times for the \(units.count) frames of \(input)")
            }
        } else {
            times = (0..<units.count).map { MediaTime(value: Int64($0 * rate.denominator), timescale: Int32(rate.numerator)) }
        }
        var decodeTimes = DecodeTimes(delay: reader.declaredReorderDepth ?? 2, frameDuration: rate.frameDuration)
        for time in times.prefix(units.count) { decodeTimes.arrived(time) }
        let frames = units.map { unit in
            EncodedFrame(data: unit.data, pts: times[unit.displayIndex], dts: decodeTimes.next(),
                         isKeyFrame: unit.isKeyFrame, token: FrameToken(UInt64(unit.displayIndex)))
        }
        return (frames, units.map(\.format), rate)
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

    /// The nominal rate of frames with times: the most common interval between presentation times.
    static func rate(of frames: [EncodedFrame]) -> FrameRate? {
        let times = frames.map(\.pts.seconds).sorted()
        let gaps = zip(times, times.dropFirst()).map { $1 - $0 }.filter { $0 > 0 }
        guard !gaps.isEmpty else { return nil }
        let median = gaps.sorted()[gaps.count / 2]
        return FrameRate(parsing: String(format: "%.3f", 1 / median))
    }
}
