import VTCore

/// Decode times for pictures that come out of an encoder in decode order, from the
/// presentation times the frames arrived with (VideoToolbox's DTS in the output sample).
///
/// An encoder that reorders by `delay` pictures (`CompressionSession.reorderDelay`) hands out
/// as its k-th picture one that shows at display position k − delay or later, so the k-th
/// picture out decodes at the (k − delay)-th arrival time; the first `delay` pictures decode
/// one frame interval apart before the first arrival. Decode times rise, and never pass
/// presentation times, even when frames arrive unevenly (a camera's own times).
///
/// Arrivals may also come in decode order (a stream read back from a file): the (k − delay)-th
/// presentation time in display order is then the earliest not yet given out once the k-th
/// picture has arrived, because no picture shows more than `delay` places before its decode
/// position. So `arrived` keeps the times sorted, and `next` may follow each `arrived`.
public struct DecodeTimes: Sendable {
    public let delay: Int
    public let frameDuration: MediaTime
    private var first: MediaTime?
    /// Arrival times not yet given out as a decode time.
    private var arrivals: [MediaTime] = []
    private var delivered = 0

    public init(delay: Int, frameDuration: MediaTime) {
        precondition(delay >= 0, "an encoder cannot decode behind its presentation order")
        self.delay = delay
        self.frameDuration = frameDuration
    }

    public mutating func arrived(_ pts: MediaTime) {
        first = min(first ?? pts, pts)
        // In display order (the usual case) this appends.
        var index = arrivals.count
        while index > 0 && pts < arrivals[index - 1] { index -= 1 }
        arrivals.insert(pts, at: index)
    }

    /// The decode time of the next picture out.
    public mutating func next() -> MediaTime {
        guard let first else { preconditionFailure("a picture came out before any went in") }
        defer { delivered += 1 }
        if delivered < delay {
            let lead = Int64(delay - delivered) * frameDuration.value
            return first + MediaTime(value: -lead, timescale: frameDuration.timescale)
        }
        return arrivals.removeFirst()
    }
}
