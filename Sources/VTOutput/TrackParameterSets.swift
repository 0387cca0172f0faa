import VTCore
import VTH264

/// What a container with one H.264 track keeps of the session's parameter sets: the avcC its
/// track header carries, fixed once the first frame has been taken; parameter sets that change
/// after that (a new size mid-recording) go in-band, length-prefixed, before the next keyframes.
/// A Motion JPEG track has none: its header gives the size, and each JPEG carries its own.
struct TrackParameterSets {
    /// The latest parameter sets.
    private(set) var format: VideoFormatDescription?
    /// The ones the track header describes (its size, its avcC).
    private(set) var trackFormat: VideoFormatDescription?
    private(set) var avcC: [UInt8] = []
    /// Length-prefixed SPS and PPS for the front of each keyframe; empty while the avcC holds.
    private(set) var inBand: [UInt8] = []

    /// Takes the parameter sets of the frames that follow; `fixed` once a frame was taken.
    /// `container` names the format in the error ("an MP4", "Matroska").
    mutating func update(_ format: VideoFormatDescription, fixed: Bool, container: String) throws(OutputError) {
        guard format != self.format else { return }
        if let codec = (trackFormat ?? self.format)?.codec, codec != format.codec {
            throw .invalidAccessUnit(reason: "\(container) track of \(codec.rawValue) cannot go on in \(format.codec.rawValue)")
        }
        if format.codec == .mjpeg {
            if !fixed { trackFormat = format }
            self.format = format
            return
        }
        let record: [UInt8]
        do {
            record = try format.avcC()
        } catch {
            throw .invalidAccessUnit(reason: "its parameter sets cannot be stored in \(container): \(error)")
        }
        if fixed {
            inBand = AVCC.lengthPrefixed(format.sequenceParameterSets + format.pictureParameterSets,
                                         lengthSize: format.nalUnitLengthSize)
        } else {
            avcC = record
            trackFormat = format
        }
        self.format = format
    }

    /// What an MP4 track's sample entry says of the coding.
    var mp4Coding: MP4VideoCoding { trackFormat?.codec == .mjpeg ? .jpeg : .avc(avcC) }

    /// The sample aspect ratio the track's SPS gives, if any.
    var sampleAspectRatio: SampleAspectRatio? {
        guard let sps = trackFormat?.sequenceParameterSets.first else { return nil }
        return (try? SequenceParameterSet(nalUnit: sps))?.vui?.sampleAspectRatio
    }
}
