import VTCore

/// Decode times for pictures that come out of an encoder in decode order, from the
/// presentation times the frames arrived with (VideoToolbox's DTS in the output sample).
///
/// Without reordering the k-th picture out decodes at the k-th arrival time. With B-pictures
/// (non-pyramid) a picture coded at position k shows at display position k−1 or later, so it
/// decodes at the (k−1)-th arrival time, the first one frame early: decode times rise, and never
/// pass presentation times even when frames arrive unevenly.
struct DecodeTimes: Sendable {
    let reordering: Bool
    let frameDuration: MediaTime
    private var arrivals: [MediaTime] = []
    private var delivered = 0

    init(reordering: Bool, frameDuration: MediaTime) {
        self.reordering = reordering
        self.frameDuration = frameDuration
    }

    mutating func arrived(_ pts: MediaTime) {
        arrivals.append(pts)
    }

    /// The decode time of the next picture out.
    mutating func next() -> MediaTime {
        defer { delivered += 1 }
        if reordering && delivered == 0 {
            return arrivals[0] + MediaTime(value: -frameDuration.value, timescale: frameDuration.timescale)
        }
        return arrivals.removeFirst()
    }
}
