import VTCore

/// The byte-stream format of H.264 Annex B: each NAL unit preceded by a start code
/// (00 00 01, or 00 00 00 01). This is what `.h264` files and most players expect.
public enum AnnexB {
    /// The four-byte start code written before every NAL unit. The four-byte form (with its
    /// leading zero_byte) is required before parameter sets and the first NAL unit of each
    /// access unit; using it everywhere keeps the writer simple.
    public static let startCode: [UInt8] = [0, 0, 0, 1]

    /// Appends one access unit in Annex B form to `out`: a start code and each of
    /// `parameterSets`, then a start code and each NAL unit of the AVCC access unit `avcc`.
    ///
    /// Runs once per frame, so it checks every length first, reserves the exact size once and
    /// then copies each NAL unit with no intermediate arrays. When it throws, `out` is left as
    /// it was. NAL units of length zero are skipped: they carry no header byte, and a start
    /// code with nothing after it is not a NAL unit.
    public static func appendAccessUnit(avcc: UnsafeRawBufferPointer, nalUnitLengthSize: Int,
                                        parameterSets: [[UInt8]],
                                        to out: inout [UInt8]) throws(BitstreamError) {
        var size = 0
        for parameterSet in parameterSets where !parameterSet.isEmpty {
            size += startCode.count + parameterSet.count
        }
        try AVCC.forEachNALUnit(in: avcc, lengthSize: nalUnitLengthSize) { range in
            size += startCode.count + range.count
        }
        out.reserveCapacity(out.count + size)
        for parameterSet in parameterSets where !parameterSet.isEmpty {
            out.append(contentsOf: startCode)
            out.append(contentsOf: parameterSet)
        }
        guard !avcc.isEmpty else { return }
        let bytes = avcc.assumingMemoryBound(to: UInt8.self)
        // Already checked above, so this second walk cannot throw.
        try AVCC.forEachNALUnit(in: avcc, lengthSize: nalUnitLengthSize) { range in
            out.append(contentsOf: startCode)
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[range]))
        }
    }

    /// One encoded frame in Annex B form. A keyframe gets the format's SPS, then its PPS,
    /// first, so that decoding can start at any keyframe of the file.
    public static func annexB(_ frame: EncodedFrame, format: VideoFormatDescription) throws(BitstreamError) -> [UInt8] {
        let parameterSets = frame.isKeyFrame
            ? format.sequenceParameterSets + format.pictureParameterSets : []
        var out: [UInt8] = []
        try withBytes(frame.data) { (avcc) throws(BitstreamError) in
            try appendAccessUnit(avcc: avcc, nalUnitLengthSize: format.nalUnitLengthSize,
                                 parameterSets: parameterSets, to: &out)
        }
        return out
    }

    /// Whether `data` begins with a start code (00 00 01 or 00 00 00 01): Annex B rather than
    /// length-prefixed NAL units.
    public static func startsWithStartCode(_ data: [UInt8]) -> Bool {
        data.starts(with: [0, 0, 1]) || data.starts(with: [0, 0, 0, 1])
    }

    /// The byte ranges of the NAL units in an Annex B stream, without start codes.
    ///
    /// Both 3- and 4-byte start codes are recognised. Zero bytes before a start code are
    /// trailing_zero_8bits (or the zero_byte of a 4-byte start code), never part of the NAL
    /// unit before it: a NAL unit cannot end in a zero byte. Bytes before the first start code
    /// are leading_zero_8bits or garbage and are not reported; input with no start code gives
    /// no ranges. Empty NAL units (two start codes in a row) are skipped.
    public static func nalUnitRanges(in data: UnsafeRawBufferPointer) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var nalStart: Int?
        var index = 0
        let count = data.count

        func close(_ start: Int, _ end: Int) {
            var end = end
            while end > start && data[end - 1] == 0 { end -= 1 }
            if end > start { ranges.append(start..<end) }
        }

        while index + 2 < count {
            let third = data[index + 2]
            // No start code can begin at index, index + 1 or index + 2 when this byte is
            // above 1, so three positions are skipped at once.
            if third > 1 {
                index += 3
            } else if third == 1 && data[index] == 0 && data[index + 1] == 0 {
                if let start = nalStart { close(start, index) }
                nalStart = index + 3
                index += 3
            } else {
                index += 1
            }
        }
        if let start = nalStart { close(start, count) }
        return ranges
    }

    public static func nalUnitRanges(in data: [UInt8]) -> [Range<Int>] {
        data.withUnsafeBytes { nalUnitRanges(in: $0) }
    }
}
