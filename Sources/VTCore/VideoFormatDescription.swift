/// How a track's pictures are compressed (CoreMedia's `CMVideoCodecType`).
public enum VideoCodec: String, Sendable, Equatable {
    /// H.264: access units in AVCC form, described by their parameter sets.
    case h264
    /// Motion JPEG: each picture a whole JPEG (SOI to EOI), a keyframe, described by nothing
    /// more than its size; a camera's own, stored as it sent them.
    case mjpeg
}

/// What a decoder needs before the first frame: the codec, the size and, for H.264, the
/// parameter sets (CoreMedia's `CMVideoFormatDescription`).
///
/// Building and parsing the avcC record lives with the bitstream code (VTH264).
public struct VideoFormatDescription: Sendable, Equatable {
    public var codec: VideoCodec
    public var width: Int
    public var height: Int
    /// Sequence parameter set NAL units, each with its one-byte NAL header and no start code.
    public var sequenceParameterSets: [[UInt8]]
    /// Picture parameter set NAL units, each with its one-byte NAL header and no start code.
    public var pictureParameterSets: [[UInt8]]
    /// Bytes in each NAL length prefix of the session's access units.
    public var nalUnitLengthSize: Int

    public init(width: Int, height: Int, sequenceParameterSets: [[UInt8]],
                pictureParameterSets: [[UInt8]], nalUnitLengthSize: Int = 4) {
        codec = .h264
        self.width = width
        self.height = height
        self.sequenceParameterSets = sequenceParameterSets
        self.pictureParameterSets = pictureParameterSets
        self.nalUnitLengthSize = nalUnitLengthSize
    }

    /// Motion JPEG pictures of `width` × `height`.
    public static func mjpeg(width: Int, height: Int) -> VideoFormatDescription {
        var format = VideoFormatDescription(width: width, height: height, sequenceParameterSets: [], pictureParameterSets: [])
        format.codec = .mjpeg
        return format
    }

    /// Parameter set `index`, SPS first then PPS
    /// (`CMVideoFormatDescriptionGetH264ParameterSetAtIndex`).
    public func parameterSet(at index: Int) -> [UInt8]? {
        let all = sequenceParameterSets + pictureParameterSets
        return all.indices.contains(index) ? all[index] : nil
    }

    public var parameterSetCount: Int { sequenceParameterSets.count + pictureParameterSets.count }
}
