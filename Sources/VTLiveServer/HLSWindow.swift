import DequeModule
import Foundation
import NIOCore

/// The last few seconds of the live stream as Low-Latency HLS (RFC 8216bis): segments that
/// start at keyframes, each made of parts (fMP4 fragments of a few pictures) that a player can
/// fetch as soon as they exist. Players without LL-HLS see plain segments.
///
/// A segment's bytes are its parts' fragments one after the other: no copy is kept twice.
struct HLSWindow {
    struct Part {
        var bytes: ByteBuffer
        var duration: Double
        var independent: Bool
    }

    struct Segment {
        var sequence: Int
        var parts: [Part] = []
        var complete = false
        var duration: Double { parts.reduce(0) { $0 + $1.duration } }
    }

    /// Complete segments kept (about 12 s at the default 2 s keyframe interval): enough for a
    /// player that starts three segments from the end.
    static let keptSegments = 6
    /// Segments at the end whose parts the playlist lists.
    static let segmentsWithParts = 3

    private(set) var segments = Deque<Segment>()
    /// The longest part so far, at least the target: the playlist's PART-TARGET.
    private(set) var partTarget: Double
    /// The init segment the parts play after.
    private(set) var initSegment: ByteBuffer?

    init(partTarget: Double) {
        self.partTarget = partTarget
    }

    /// A new time line (the first picture, or a new size): everything before it goes.
    mutating func restart(initSegment: ByteBuffer) {
        let next = (segments.last?.sequence ?? -1) + 1
        segments.removeAll()
        segments.append(Segment(sequence: next))
        self.initSegment = initSegment
    }

    /// Appends a part to the segment being made.
    mutating func add(_ part: Part) {
        guard !segments.isEmpty else { return }
        if segments[segments.count - 1].complete {
            segments.append(Segment(sequence: segments[segments.count - 1].sequence + 1))
        }
        segments[segments.count - 1].parts.append(part)
        partTarget = max(partTarget, (part.duration * 1000).rounded(.up) / 1000)
        while segments.count > Self.keptSegments + 1 { segments.removeFirst() }
    }

    /// The segment being made is complete (a keyframe starts the next).
    mutating func closeSegment() {
        guard let last = segments.last, !last.complete, !last.parts.isEmpty else { return }
        segments[segments.count - 1].complete = true
    }

    var isEmpty: Bool { segments.first { !$0.parts.isEmpty } == nil }

    /// Complete segments a player needs to start: three, so that it can begin three target
    /// durations from the live end (RFC 8216 6.3.3). Chromium's own player refuses a live
    /// playlist with fewer as unparseable (DEMUXER_ERROR_COULD_NOT_PARSE) and does not retry.
    static let segmentsToStart = 3

    /// Whether a player can start on the playlist as it is.
    var isStartable: Bool { segments.count { $0.complete } >= Self.segmentsToStart }

    /// The sequence number of the segment being made (the next one once the last is complete).
    var currentSequence: Int {
        guard let last = segments.last else { return 0 }
        return last.complete ? last.sequence + 1 : last.sequence
    }

    private func segment(_ sequence: Int) -> Segment? {
        guard let first = segments.first, sequence >= first.sequence else { return nil }
        let index = sequence - first.sequence
        return index < segments.count ? segments[index] : nil
    }

    /// A complete segment's bytes.
    func segmentBytes(_ sequence: Int) -> ByteBuffer? {
        guard let segment = segment(sequence), segment.complete else { return nil }
        var bytes = ByteBuffer()
        bytes.reserveCapacity(segment.parts.reduce(0) { $0 + $1.bytes.readableBytes })
        for part in segment.parts { bytes.writeImmutableBuffer(part.bytes) }
        return bytes
    }

    func part(_ sequence: Int, _ index: Int) -> ByteBuffer? {
        guard let segment = segment(sequence), index >= 0, index < segment.parts.count else { return nil }
        return segment.parts[index].bytes
    }

    /// Whether a blocking playlist request for segment `sequence` (and part `part` of it) can
    /// be answered: that part exists, or the segment is complete (with no part asked for).
    func has(sequence: Int, part: Int?) -> Bool {
        if let last = segments.last, last.sequence > sequence, last.parts.isEmpty == false || last.complete {
            return true
        }
        guard let segment = segment(sequence) else { return false }
        guard let part else { return segment.complete }
        return part < segment.parts.count || segment.complete
    }

    /// Whether a part that is not there yet is the next one to come (the preload hint, or the
    /// one after the segment being made): worth waiting for.
    func isNext(sequence: Int, part: Int) -> Bool {
        guard let last = segments.last else { return false }
        if last.complete { return sequence == last.sequence + 1 && part == 0 }
        return sequence == last.sequence && part == last.parts.count
            || sequence == last.sequence + 1 && part == 0
    }

    /// The media playlist, with `prefix` before every URI ("live/").
    func playlist(prefix: String) -> String {
        let complete = segments.filter(\.complete)
        // Each segment's duration rounded to the nearest second, at most (RFC 8216bis 4.4.3.1):
        // rounded up, a segment a picture over its second doubled it, and players that reload
        // an unchanged playlist after half of it (ffmpeg) came a second late.
        let target = max(1, Int((complete.map(\.duration).max() ?? 1).rounded()))
        var text = "#EXTM3U\n#EXT-X-VERSION:9\n#EXT-X-TARGETDURATION:\(target)\n"
        text += "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=\(seconds(partTarget * 3))\n"
        text += "#EXT-X-PART-INF:PART-TARGET=\(seconds(partTarget))\n"
        text += "#EXT-X-MEDIA-SEQUENCE:\(segments.first?.sequence ?? 0)\n"
        text += "#EXT-X-MAP:URI=\"\(prefix)init.mp4\"\n"
        let listedFrom = (segments.last?.sequence ?? 0) - Self.segmentsWithParts + 1
        for segment in segments where !segment.parts.isEmpty {
            if segment.sequence >= listedFrom {
                for (index, part) in segment.parts.enumerated() {
                    text += "#EXT-X-PART:DURATION=\(seconds(part.duration)),URI=\"\(prefix)\(segment.sequence).\(index).m4s\""
                    text += part.independent ? ",INDEPENDENT=YES\n" : "\n"
                }
            }
            if segment.complete {
                text += "#EXTINF:\(seconds(segment.duration)),\n\(prefix)\(segment.sequence).m4s\n"
            }
        }
        if let last = segments.last {
            let (sequence, part) = last.complete ? (last.sequence + 1, 0) : (last.sequence, last.parts.count)
            text += "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"\(prefix)\(sequence).\(part).m4s\"\n"
        }
        return text
    }

    private func seconds(_ value: Double) -> String { String(format: "%.3f", value) }
}
