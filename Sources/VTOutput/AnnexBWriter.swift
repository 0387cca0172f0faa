import VTCore
import VTH264

/// Writes a raw H.264 elementary stream (Annex B): start code + SPS, start code + PPS before
/// every keyframe, so every GOP decodes on its own, then each NAL unit of the access unit.
///
/// One write(2) per access unit, so the file always ends at its last complete access unit; a
/// regular file is cut back to that point after a failed write.
public final class AnnexBWriter: SingleFileOutput {
    public let file: OutputFile
    public private(set) var statistics = OutputStatistics()

    private var accessUnit: [UInt8] = []
    private var format: VideoFormatDescription?
    private var parameterSets: [[UInt8]] = []

    /// Opens `path` ("-" for standard output); see `OutputFile` for what is refused.
    public init(path: String, overwrite: Bool) throws(OutputError) {
        file = try OutputFile(path: path, overwrite: overwrite)
    }

    public var path: String { file.path }
    public var holdsNothing: Bool { true }

    /// A raw stream has no header of its own: the parameter sets go before each keyframe.
    public func writeHeader(_ format: VideoFormatDescription) throws(OutputError) {
        guard format != self.format else { return }
        guard format.codec == .h264 else {
            throw .muxer(path: file.path, reason: "carries H.264 only, not \(format.codec.rawValue): write Motion JPEG to .mkv or .mp4")
        }
        self.format = format
        parameterSets = format.sequenceParameterSets + format.pictureParameterSets
    }

    /// Appends one access unit, with the parameter sets first when it is a keyframe.
    public func writeAudio(_ packet: EncodedAudioPacket) throws(OutputError) {
        preconditionFailure("sound written to an output opened without a sound track")
    }

    public func write(_ frame: EncodedFrame) throws(OutputError) {
        guard let format else { preconditionFailure("a frame written before its header") }
        accessUnit.removeAll(keepingCapacity: true)
        do {
            try frame.data.withUnsafeBytes { avcc in
                try AnnexB.appendAccessUnit(avcc: avcc, nalUnitLengthSize: format.nalUnitLengthSize,
                                            parameterSets: frame.isKeyFrame ? parameterSets : [],
                                            to: &accessUnit)
            }
        } catch {
            throw .invalidAccessUnit(reason: "\(error)")
        }
        try append(accessUnit, of: frame)
    }

    public var writesAnnexB: Bool { true }

    /// The access unit as the streams beside the recording send it: converted once for all.
    public func write(_ frame: EncodedFrame, sharing annexB: SharedAnnexB) throws(OutputError) {
        precondition(format != nil, "a frame written before its header")
        try append(annexB.bytes(), of: frame)
    }

    private func append(_ bytes: [UInt8], of frame: EncodedFrame) throws(OutputError) {
        try file.append(bytes)
        statistics.bytes += Int64(bytes.count)
        statistics.frames += 1
        if frame.isKeyFrame { statistics.keyFrames += 1 }
    }

    /// Every access unit went out as it was written.
    public func complete() {}
    public func salvage() {}
}
