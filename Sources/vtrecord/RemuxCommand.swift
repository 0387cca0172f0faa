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
        commandName: "remux",
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

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("A raw input's frame rate when there is no --timestamps (default: the rate in its SPS).", valueName: "rate"))
    var fps: FrameRateArgument?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("MP4 and Matroska: the longest fragment (cluster), as when recording (default 1s).", valueName: "time"), transform: DurationArgument.parse)
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
            var left = LeftOut()
            var index = 0
            let written = try copy(to: kind, rate: fps?.rate ?? reader.frameRate ?? .fps30,
                                   logTimes: kind == .h264, leftOut: { left.count > 0 ? left.summary : nil }) {
                () throws(ReadError) -> (EncodedFrame, VideoFormatDescription)? in
                while let packet = try reader.nextPacket() {
                    defer { index += 1 }
                    guard let format = packet.format else {
                        throw ReadError(path: input, reason: "a frame comes before any SPS and PPS")
                    }
                    // A container cut inside a frame (a crash, a full disk) hands out the part
                    // that is there; copied, it would be a damaged frame in a file that looks whole.
                    if let problem = Self.framingProblem(packet.frame.data, lengthSize: format.nalUnitLengthSize) {
                        left.note(index: index, position: packet.position, problem: problem)
                        continue
                    }
                    return (packet.frame, format)
                }
                return nil
            }
            if left.count > 0 { throw DamagedInput(path: input, leftOut: left, written: written, output: output) }
        }
    }

    /// Why an access unit read from a container cannot be a whole frame: its NAL unit lengths
    /// do not tile it, or it holds no slice. nil when it parses.
    static func framingProblem(_ data: [UInt8], lengthSize: Int) -> String? {
        let ranges: [Range<Int>]
        do {
            ranges = try AVCC.nalUnitRanges(in: data, lengthSize: lengthSize)
        } catch {
            return error.description
        }
        let hasSlice = ranges.contains { NALUnitType(headerByte: data[$0.lowerBound]).isVCL }
        return hasSlice ? nil : "its \(data.count) bytes hold no slice"
    }

    /// The frames of a container input that did not parse: how many, and the first.
    struct LeftOut {
        var count = 0
        var first: (index: Int, position: Int64?, problem: String)?

        mutating func note(index: Int, position: Int64?, problem: String) {
            count += 1
            if first == nil { first = (index, position, problem) }
        }

        var summary: String {
            let place = first.map { "frame \($0.index)" + ($0.position.map { " at byte \($0)" } ?? "") + ": \($0.problem)" } ?? ""
            return count == 1 ? "1 frame does not parse and was left out (\(place))"
                : "\(count) frames do not parse and were left out (the first, \(place))"
        }
    }

    /// A container input with frames that did not parse, the others written: exit 6, as
    /// `verify` gives for a damaged file, so a script does not take the copy for a whole one.
    struct DamagedInput: ReportableError {
        let path: String
        let leftOut: LeftOut
        let written: Int
        let output: String

        var exitStatus: ExitStatus { .damaged }
        var description: String {
            "\(path) is damaged or cut short: \(leftOut.summary); the other \(written) frame\(written == 1 ? " is" : "s are") in \(output)"
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
    /// `leftOut` says which frames of the input were not given to `next` and why, if any were.
    /// Returns how many frames were written.
    @discardableResult
    private func copy(to kind: Container, rate: FrameRate, logTimes: Bool, leftOut: () -> String? = { nil },
                      next: () throws(ReadError) -> (EncodedFrame, VideoFormatDescription)?) throws -> Int {
        let settings = AssetWriter.Settings(
            container: kind, overwrite: overwrite, frameRate: rate, sourceTimes: true,
            fragmentDuration: fragmentDuration?.seconds ?? 1, keepFragmented: mp4Fragmented,
            metadata: ContainerMetadata(encoder: "vtrecord \(VTRecord.version)", source: input))
        guard var item = try next() else {
            throw ReadError(path: input, reason: "holds no complete frame" + (leftOut().map { ": \($0)" } ?? ""))
        }
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
            var written = 0
            while true {
                var (frame, format) = item
                decodeTimes.arrived(frame.pts)
                frame.dts = decodeTimes.next()
                if format != current {
                    try writer.writeHeader(format)
                    current = format
                }
                try writer.write(frame)
                written += 1
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
            return written
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
