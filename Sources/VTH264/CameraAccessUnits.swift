import VTCore

/// A camera's H.264 (Annex B access units, one a buffer, as a UVC H.264 camera delivers them)
/// made into what a compression session hands out: each access unit checked
/// (`AccessUnitCheck`), in AVCC without its parameter sets, and the parameter sets as the
/// stream's `VideoFormatDescription`, renewed when the camera sends different ones. The
/// writers then store a camera's stream as they store an encoder's, and a raw `.h264` gets
/// the parameter sets before every IDR whether or not the camera repeats them.
///
/// Nothing is let through that a decoder could not start on or go on from: access units before
/// the first IDR (a stream joined in the middle of a GOP), a damaged one, and every one after
/// a damaged one up to the next IDR, since they may refer to the picture that was lost.
public struct CameraAccessUnits {
    public enum Outcome: Equatable, Sendable {
        /// An access unit to store: AVCC with 4-byte lengths, without SPS, PPS or delimiter, and
        /// the parameter sets it is decoded with.
        case unit(data: [UInt8], isKeyFrame: Bool, format: VideoFormatDescription)
        /// Damaged: dropped, and what follows waits for the next IDR.
        case damaged(String)
        /// Whole, but no IDR came since the start or the last damage: dropped.
        case waitingForKeyFrame
    }

    /// The parameter sets of the units let through so far; nil before the first IDR.
    public private(set) var format: VideoFormatDescription?
    private var waitsForKeyFrame = true

    public init() {}

    /// Takes the next access unit from the camera.
    public mutating func take(_ annexB: [UInt8]) -> Outcome {
        annexB.withUnsafeBytes { take($0) }
    }

    /// Takes the next access unit from the camera, in place in the camera's buffer: a unit
    /// let through is copied once, into its AVCC form.
    public mutating func take(_ annexB: UnsafeRawBufferPointer) -> Outcome {
        // The NAL units are found once, for the check and for the AVCC form.
        let units = AnnexB.nalUnitRanges(in: annexB)
        let isKeyFrame: Bool
        switch AccessUnitCheck.examine(annexB, units: units, parameterSetsSeen: format != nil) {
        case .success(let isIDR):
            isKeyFrame = isIDR
        case .failure(let problem):
            waitsForKeyFrame = true
            return .damaged(problem.description)
        }
        let split = AVCC.fromAnnexB(annexB, units: units, parameterSetsApart: true)
        if !split.sequenceParameterSets.isEmpty || !split.pictureParameterSets.isEmpty {
            // Sent alone, either keeps the other of the sets in force.
            let sequence = split.sequenceParameterSets.isEmpty ? format?.sequenceParameterSets ?? [] : split.sequenceParameterSets
            let picture = split.pictureParameterSets.isEmpty ? format?.pictureParameterSets ?? [] : split.pictureParameterSets
            if sequence != format?.sequenceParameterSets || picture != format?.pictureParameterSets {
                do {
                    format = try VideoFormatDescription(h264ParameterSets: sequence + picture)
                } catch {
                    waitsForKeyFrame = true
                    return .damaged("its parameter sets do not read: \(error)")
                }
            }
        }
        if waitsForKeyFrame {
            guard isKeyFrame, format != nil else { return .waitingForKeyFrame }
            waitsForKeyFrame = false
        }
        // Let through only after an IDR picture, which has parameter sets (checked above).
        guard let format else { preconditionFailure("a unit let through before any parameter sets") }
        return .unit(data: split.accessUnit, isKeyFrame: isKeyFrame, format: format)
    }

    /// What follows waits for the next IDR, as after a unit `take` found damaged: the unit just
    /// let through was found damaged after all (a full decode), a unit was lost (the driver
    /// dropped it), or the stream was broken off and started again (a reconnect), so the next
    /// units may refer to pictures never seen.
    public mutating func waitForKeyFrame() {
        waitsForKeyFrame = true
    }
}
