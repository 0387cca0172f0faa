import VTCapture
import VTCore

/// Places captured frames on the nominal frame grid (`--timing cfr`), because a raw H.264
/// stream carries no timestamps: a player shows frame n at n ÷ fps, so the file plays at the
/// right speed only if every slot of the grid holds exactly one frame.
///
/// Each frame goes to the slot nearest its capture time. A slot left empty (the driver
/// dropped a frame, the camera slowed down in the dark) repeats the frame before it; two
/// frames in one slot keep the later. The grid holds one frame back until the next arrives,
/// since only then is it known how many slots the held frame fills.
struct ConstantRateGrid {
    /// A frame and the slots it fills: the first shows it, the others repeat it.
    struct Emission {
        var frame: CapturedFrame
        var slots: Range<Int64>
    }

    let rate: FrameRate
    private var pending: CapturedFrame?
    private var pendingSlot: Int64 = 0

    init(rate: FrameRate) {
        self.rate = rate
    }

    /// The slot for a presentation time (seconds from the first frame).
    func slot(for pts: MediaTime) -> Int64 {
        Int64((pts.seconds * rate.framesPerSecond).rounded())
    }

    /// Presentation time of a slot.
    func time(ofSlot slot: Int64) -> MediaTime {
        MediaTime(value: slot * Int64(rate.denominator), timescale: Int32(rate.numerator))
    }

    /// Takes the next captured frame. Returns what is now settled: the held frame with the
    /// slots it fills, or the held frame it displaced from the same slot (to be released
    /// unencoded).
    mutating func add(_ frame: CapturedFrame) -> (emit: Emission?, displaced: CapturedFrame?) {
        let slot = slot(for: frame.pts)
        guard let held = pending else {
            pending = frame
            pendingSlot = slot
            return (nil, nil)
        }
        if slot <= pendingSlot {
            // Same slot, or a timestamp that went backwards: the later frame wins the slot.
            pending = frame
            return (nil, held)
        }
        let emission = Emission(frame: held, slots: pendingSlot..<slot)
        pending = frame
        pendingSlot = slot
        return (emission, nil)
    }

    /// The held frame, in its one slot, at the end of the recording.
    mutating func finish() -> Emission? {
        defer { pending = nil }
        return pending.map { Emission(frame: $0, slots: pendingSlot..<(pendingSlot + 1)) }
    }

    /// Hands back a held frame without encoding it (the recording stopped at a limit).
    mutating func discard() -> CapturedFrame? {
        defer { pending = nil }
        return pending
    }
}
