import VTCapture
import VTCore

/// Places captured frames on the nominal frame grid (`--timing cfr`), because a raw H.264
/// stream carries no timestamps: a player shows frame n at n ÷ fps, so the file plays at the
/// right speed only if every slot of the grid holds exactly one frame.
///
/// Each frame goes to the slot nearest its capture time. A slot left empty (the driver
/// dropped a frame, the camera slowed down in the dark) repeats the frame before it; two
/// frames in one slot keep the later. The grid holds one frame back until the next arrives,
/// since only then is it known how many slots the held frame fills. It owns that frame: a
/// frame displaced from its slot, and one still held when the grid goes (a limit, an error),
/// is released with it.
struct ConstantRateGrid: ~Copyable {
    /// A frame and the slots it fills: the first shows it, the others repeat it.
    struct Emission: ~Copyable {
        var frame: CapturedFrame
        var slots: Range<Int64>
    }

    let rate: FrameRate
    /// Frames that lost their slot to a later frame.
    private(set) var framesDisplaced = 0
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

    /// Takes the next captured frame. Returns the held frame with the slots it fills, once they
    /// are known.
    mutating func add(_ frame: consuming CapturedFrame) -> Emission? {
        let slot = slot(for: frame.pts)
        if slot <= pendingSlot, pending != nil {
            // Same slot, or a timestamp that went backwards: the later frame wins the slot,
            // and the one it displaces is let go.
            framesDisplaced += 1
            pending = consume frame
            return nil
        }
        guard let held = pending.take() else {
            pending = consume frame
            pendingSlot = slot
            return nil
        }
        let emission = Emission(frame: held, slots: pendingSlot..<slot)
        pending = consume frame
        pendingSlot = slot
        return emission
    }

    /// The held frame, in its one slot, at the end of the recording.
    mutating func finish() -> Emission? {
        guard let held = pending.take() else { return nil }
        return Emission(frame: held, slots: pendingSlot..<(pendingSlot + 1))
    }
}
