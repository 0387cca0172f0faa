import Foundation
import VTCore
import VTReading

/// What `vtrecord verify` found in one file.
public struct VerificationReport: Encodable, Sendable {
    /// One thing wrong with the file, with its place when it has one.
    public struct Problem: Encodable, Sendable, Equatable {
        public enum Kind: String, Encodable, Sendable {
            /// The first access unit is not a keyframe (IDR): what comes before one cannot be decoded.
            case noKeyframeAtStart = "no-keyframe-at-start"
            /// The decoder refused an access unit, or it gave no picture.
            case undecodable
            /// A picture decoded with damage the decoder concealed.
            case concealed
            /// A decode time that goes back.
            case timeGoesBack = "time-goes-back"
            /// A presentation time given to two frames.
            case timeRepeats = "time-repeats"
            /// An MP4 still fragmented: the recording was not stopped cleanly (it plays, but
            /// is not a regular MP4).
            case unfinalized
            /// The file ends inside an access unit or a container box.
            case cutShort = "cut-short"
        }

        public var kind: Kind
        /// The access unit's number in decode order, from 0.
        public var unit: Int?
        /// The byte offset in the file where that unit (or the cut) starts.
        public var offset: Int64?
        /// The unit's presentation time in seconds, when the file gives times.
        public var time: Double?
        public var detail: String
    }

    public var file: String
    /// h264 (a raw stream), mp4, mkv or ts.
    public var container: String
    public var width: Int
    public var height: Int
    /// Access units in the file.
    public var frames: Int
    /// Pictures the decoder gave.
    public var decodedFrames: Int
    public var keyframes: Int
    /// Access units from each keyframe to the next (the last to the end of the file).
    public var gopLengths: [Int]
    /// Seconds, from the container, or from the frame count and the stream's frame rate.
    public var duration: Double?
    /// The decoder that decoded the file: software, or vaapi.
    public var decoder = "software"
    public var problems: [Problem] {
        didSet { isClean = problems.isEmpty }
    }
    /// No problem found.
    public private(set) var isClean = true

    enum CodingKeys: String, CodingKey {
        case file, container, width, height, frames, decodedFrames = "decoded_frames", keyframes,
             gopLengths = "gop_lengths", duration, decoder, isClean = "clean", problems
    }
}

/// Decodes every access unit of a recording and reports what is wrong with it (`vtrecord
/// verify`): units the decoder refuses or conceals, units that give no picture, a start without
/// a keyframe, times that go back or repeat, an MP4 left fragmented, a file cut short.
public enum RecordingVerifier {
    /// Verifies the file at `path`. `progress` is told the fraction of the file read so far,
    /// now and then. A file that holds no H.264 video at all is a `ReadError`.
    ///
    /// Two passes. The first decodes everything with frame threads, as fast as FFmpeg, with
    /// libavcodec refusing any unit in which it detects an error: that finds damage for sure,
    /// but not always where (with frame threads an error comes back a few units late, and a
    /// refused keyframe can take the pictures still waiting for display with it). Only when it
    /// found something are the GOPs concerned read again and decoded on one thread, where each
    /// error comes back from its own unit and each concealed picture carries its flag.
    public static func verify(path: String, threads: Int = 0,
                              decoders: DecoderChooser = DecoderChooser(),
                              progress: ((Double) -> Void)? = nil) throws -> VerificationReport {
        let reader = try AssetReader(path: path)
        let container = reader.container
        let fileSize = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value
        var report = VerificationReport(file: path, container: container, width: reader.width, height: reader.height,
                                        frames: 0, decodedFrames: 0, keyframes: 0, gopLengths: [], duration: nil,
                                        problems: [])
        var units: [Unit] = []
        var readFailure: String?
        var lastProgress = 0.0
        let first = Pass(path: path, threads: threads, refusingDamage: true, decoders: decoders)
        while true {
            let packet: AssetReader.Packet?
            do {
                packet = try reader.nextPacket()
            } catch {
                guard !units.isEmpty else { throw error }
                readFailure = error.reason
                break
            }
            guard let packet else { break }
            // A raw stream has no times of its own: libavformat's guesses are not checked.
            units.append(Unit(packet, timed: container != "h264"))
            try first.decode(packet, index: units.count - 1)
            if let progress, let fileSize, fileSize > 0, let position = packet.position {
                let fraction = Double(position) / Double(fileSize)
                if fraction - lastProgress >= 0.01 {
                    lastProgress = fraction
                    progress(fraction)
                }
            }
        }
        try first.finish(lastUnit: units.count - 1)
        guard !units.isEmpty else { throw ReadError(path: path, reason: "holds no H.264 frame") }
        if let size = first.size { (report.width, report.height) = size }

        report.frames = units.count
        report.decodedFrames = first.pictures.count
        report.keyframes = units.filter(\.isKeyFrame).count
        report.gopLengths = gopLengths(units)
        // A raw stream's duration is libavformat's estimate from the bit rate; its frames at
        // the SPS's rate say more.
        let counted = reader.frameRate.map { Double(units.count) / $0.framesPerSecond }
        report.duration = container == "h264" ? counted : reader.duration ?? counted
        var problems: [VerificationReport.Problem] = []
        func problem(_ kind: VerificationReport.Problem.Kind, _ unit: Int?, _ detail: String) {
            problems.append(.init(kind: kind, unit: unit, offset: unit.flatMap { units[$0].position },
                                  time: unit.flatMap { units[$0].time }, detail: detail))
        }

        let firstKeyframe = units.firstIndex(where: \.isKeyFrame) ?? units.count
        if firstKeyframe > 0 {
            problem(.noKeyframeAtStart, 0, firstKeyframe == units.count
                    ? "the file has no keyframe: none of its \(units.count) frames can be decoded"
                    : "the file starts with \(firstKeyframe) frame\(firstKeyframe == 1 ? "" : "s") before its first keyframe, which cannot be decoded")
        }
        // The GOPs where the first pass saw anything: a unit without a picture, a concealed
        // picture, an error (and the GOP before it, since errors come back late).
        let gopStarts = units.indices.filter { units[$0].isKeyFrame && $0 >= firstKeyframe }
        func gop(of unit: Int) -> Int? { gopStarts.lastIndex { $0 <= unit } }
        var suspects = Set<Int>()
        for index in firstKeyframe..<units.count where !first.pictures.contains(index) {
            if let start = gop(of: index) { suspects.insert(start) }
        }
        for index in first.concealed {
            if let start = gop(of: index) { suspects.insert(start) }
        }
        for refusal in first.refusals {
            if let g = gop(of: refusal.unit) { suspects.insert(g); if g > 0 { suspects.insert(g - 1) } }
        }
        let lastUnit = units.count - 1
        if !suspects.isEmpty {
            let second = try attribute(path: path, decoders: decoders, gops: suspects.sorted().map { g in
                gopStarts[g]..<(g + 1 < gopStarts.count ? gopStarts[g + 1] : units.count)
            })
            for index in second.undecodable.sorted() {
                let reason = second.reasons[index].map { "the decoder refused it (\($0))" } ?? "it gave no picture"
                if index == lastUnit && readFailure == nil {
                    problem(.cutShort, index, "the file ends inside its last frame: \(reason)")
                } else {
                    problem(.undecodable, index, reason)
                }
            }
            for index in second.concealed.sorted() where !second.undecodable.contains(index) {
                if index == lastUnit && readFailure == nil {
                    problem(.cutShort, index, "the file ends inside its last frame, which decodes only in part")
                } else {
                    problem(.concealed, index, "decoded with damage concealed")
                }
            }
            if second.undecodable.isEmpty && second.concealed.isEmpty {
                // Seen with frame threads and not on one thread: say so, without a place.
                let detail = first.refusals.first.map { "the decoder reported an error near frame \($0.unit): \($0.reason)" }
                    ?? "frames gave no picture when decoded with frame threads"
                problem(.undecodable, nil, detail)
            }
        }
        if let readFailure { problem(.cutShort, nil, "reading stopped after frame \(lastUnit): \(readFailure)") }
        if units.contains(where: \.hasTimes) { problems += timeProblems(units) }
        if container == "mp4", let layout = MP4Layout(path: path) {
            if !layout.isFinalized && layout.fragments > 0 {
                problem(.unfinalized, nil, "the MP4 is still fragmented (\(layout.fragments) fragments): the recording was not stopped cleanly; it plays, and 'vtrecord remux' makes it a regular MP4")
            }
            if layout.trailingBytes > 0 {
                problems.append(.init(kind: .cutShort, unit: nil, offset: fileSize.map { $0 - Int64(layout.trailingBytes) },
                                      time: nil, detail: "the last \(layout.trailingBytes) bytes are not a whole box: the file was cut short"))
            }
        }
        report.problems = problems.sorted { ($0.unit ?? Int.max, $0.kind.rawValue) < ($1.unit ?? Int.max, $1.kind.rawValue) }
        report.decoder = decoders.selection?.backend.name ?? "software"
        return report
    }

    /// One decoding of units: which gave pictures, which were concealed or refused.
    private final class Pass {
        let path: String
        let threads: Int
        let refusingDamage: Bool
        let decoders: DecoderChooser
        var session: LibavcodecDecompressionSession?
        var pictures = Set<Int>()
        var concealed: [Int] = []
        var refusals: [(unit: Int, reason: String)] = []
        var size: (Int, Int)?

        init(path: String, threads: Int, refusingDamage: Bool, decoders: DecoderChooser) {
            self.path = path
            self.threads = threads
            self.refusingDamage = refusingDamage
            self.decoders = decoders
        }

        func decode(_ packet: AssetReader.Packet, index: Int) throws {
            guard let format = packet.format else { return }
            var frame = packet.frame
            frame.token = FrameToken(UInt64(index))
            do {
                if session == nil {
                    session = try decoders.session(format: format, threads: threads,
                                                   refusingDamage: refusingDamage) { [unowned self] picture in
                        let unit = Int(picture.token.rawValue)
                        pictures.insert(unit)
                        if picture.isDamaged { concealed.append(unit) }
                        size = (picture.pixelBuffer.width, picture.pixelBuffer.height)
                    }
                }
                try session?.decode(frame, format: format)
            } catch let DecoderError.damaged(_, reason) {
                refusals.append((index, reason))
            } catch let error as DecoderError {
                // The decoder itself failed (not one unit): exit 4, or software under auto.
                throw error
            } catch {
                throw ReadError(path: path, reason: "\(error)")
            }
        }

        func finish(lastUnit: Int) throws {
            do {
                try session?.finishDelayedFrames()
            } catch let DecoderError.damaged(_, reason) {
                refusals.append((lastUnit, reason))
            } catch let error as DecoderError {
                // The decoder itself failed (not one unit): exit 4, or software under auto.
                throw error
            } catch {
                throw ReadError(path: path, reason: "\(error)")
            }
            session?.invalidate()
            session = nil
        }
    }

    /// The second pass: the GOPs in `ranges` (units in decode order) read again and decoded
    /// each on its own, on one thread.
    private static func attribute(path: String, decoders: DecoderChooser, gops ranges: [Range<Int>])
        throws -> (undecodable: Set<Int>, concealed: Set<Int>, reasons: [Int: String]) {
        let reader = try AssetReader(path: path)
        var undecodable = Set<Int>()
        var concealed = Set<Int>()
        var reasons: [Int: String] = [:]
        var index = 0
        var remaining = ranges[...]
        var pass: Pass?
        func close(_ range: Range<Int>) throws {
            guard let done = pass else { return }
            try done.finish(lastUnit: range.upperBound - 1)
            for refusal in done.refusals where reasons[refusal.unit] == nil {
                reasons[refusal.unit] = refusal.reason
                undecodable.insert(refusal.unit)
            }
            for unit in range where !done.pictures.contains(unit) { undecodable.insert(unit) }
            concealed.formUnion(done.concealed)
            pass = nil
        }
        while let range = remaining.first {
            let packet: AssetReader.Packet?
            do { packet = try reader.nextPacket() } catch { packet = nil }
            guard let packet else {
                try close(range)
                remaining.removeFirst()
                continue
            }
            defer { index += 1 }
            guard range.contains(index) else { continue }
            if pass == nil { pass = Pass(path: path, threads: 1, refusingDamage: false, decoders: decoders) }
            try pass?.decode(packet, index: index)
            if index == range.upperBound - 1 {
                try close(range)
                remaining.removeFirst()
            }
        }
        return (undecodable, concealed, reasons)
    }

    /// What is kept of each access unit.
    private struct Unit {
        var isKeyFrame: Bool
        var position: Int64?
        var time: Double?
        var pts: MediaTime
        var dts: MediaTime?
        var hasTimes: Bool

        init(_ packet: AssetReader.Packet, timed: Bool) {
            isKeyFrame = packet.frame.isKeyFrame
            position = packet.position
            hasTimes = timed && packet.hasTimes
            time = hasTimes ? packet.frame.pts.seconds : nil
            pts = packet.frame.pts
            dts = timed && packet.hasDecodeTime ? packet.frame.dts : nil
        }
    }

    private static func gopLengths(_ units: [Unit]) -> [Int] {
        let starts = units.indices.filter { units[$0].isKeyFrame }
        return starts.indices.map { (index: Int) -> Int in
            (index + 1 < starts.count ? starts[index + 1] : units.count) - starts[index]
        }
    }

    /// Decode times that go back, presentation times given twice.
    private static func timeProblems(_ units: [Unit]) -> [VerificationReport.Problem] {
        var problems: [VerificationReport.Problem] = []
        var seen: [MediaTime: Int] = [:]
        var previousDTS: MediaTime?
        for (index, unit) in units.enumerated() {
            if let dts = unit.dts {
                if let previousDTS, dts < previousDTS {
                    problems.append(.init(kind: .timeGoesBack, unit: index, offset: unit.position, time: unit.time,
                                          detail: String(format: "its decode time %.6f s is before the previous frame's, %.6f s",
                                                         dts.seconds, previousDTS.seconds)))
                }
                previousDTS = dts
            }
            if unit.hasTimes {
                if let earlier = seen[unit.pts] {
                    problems.append(.init(kind: .timeRepeats, unit: index, offset: unit.position, time: unit.time,
                                          detail: "frame \(earlier) has the same time, " + String(format: "%.6f s", unit.pts.seconds)))
                } else {
                    seen[unit.pts] = index
                }
            }
        }
        return problems
    }
}
