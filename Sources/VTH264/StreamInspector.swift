/// Reads an Annex B stream far enough to describe it (`vtrecord inspect`): every NAL header,
/// every parameter set, and the first two fields of each slice header. Slice data is never
/// decoded, so a long recording is inspected at the speed it can be read.
public enum StreamInspector {
    /// Describes an Annex B stream. Throws when there is no start code at all, or when a
    /// parameter set or slice header is malformed.
    public static func inspect(annexB data: [UInt8]) throws(BitstreamError) -> StreamReport {
        let ranges = AnnexB.nalUnitRanges(in: data)
        guard !ranges.isEmpty else { throw .noStartCode(size: data.count) }

        var state = InspectionState()
        for range in ranges {
            let type = NALUnitType(headerByte: data[range.lowerBound])
            state.nalCounts[type.key, default: 0] += 1
            let body = data[range.lowerBound + 1..<range.upperBound]
            switch type {
            case .sps:
                let sps = try SequenceParameterSet(rbsp: removeEmulationPrevention(body))
                state.sequenceParameterSets[sps.seqParameterSetId] = sps
                state.firstSPS = state.firstSPS ?? sps
                state.spsSinceLastFrame = true
            case .pps:
                let rbsp = removeEmulationPrevention(body)
                let chromaFormat = state.sequenceParameterSets[try referencedSPS(rbsp)]?.chromaFormatIdc ?? 1
                let pps = try PictureParameterSet(rbsp: rbsp, chromaFormatIdc: chromaFormat)
                state.firstPPS = state.firstPPS ?? pps
                state.ppsSinceLastFrame = true
            case .sliceNonIDR, .sliceIDR, .sliceDataPartitionA:
                let start = try sliceStart(body)
                if start.firstMbInSlice == 0 {
                    state.beginFrame(isIDR: type == .sliceIDR, sliceType: start.sliceType)
                }
            default:
                break
            }
        }
        return state.report()
    }

    /// seq_parameter_set_id, the second field of a PPS.
    private static func referencedSPS(_ rbsp: [UInt8]) throws(BitstreamError) -> Int {
        var reader = BitReader(rbsp: rbsp, syntax: "PPS")
        _ = try reader.ue("pic_parameter_set_id")
        return try reader.ue("seq_parameter_set_id", in: 0...31)
    }

    /// first_mb_in_slice and slice_type, the first two fields of every slice header. Only the
    /// first bytes are unescaped: both fields fit in well under 16.
    private static func sliceStart(_ body: ArraySlice<UInt8>) throws(BitstreamError) -> (firstMbInSlice: UInt32, sliceType: Int) {
        var reader = BitReader(rbsp: removeEmulationPrevention(body.prefix(16)), syntax: "slice header")
        let firstMb = try reader.ue("first_mb_in_slice")
        let sliceType = try reader.ue("slice_type", in: 0...9)
        return (firstMb, sliceType % 5)
    }
}

/// The running counts of one inspection.
private struct InspectionState {
    var nalCounts: [String: Int] = [:]
    var frames = 0
    var idrFrames = 0
    var frameTypes: [String: Int] = [:]
    var gopLengths: [Int] = []
    var currentGOP: Int?
    var everyIDRHasParameterSets = true
    var spsSinceLastFrame = false
    var ppsSinceLastFrame = false
    var sequenceParameterSets: [Int: SequenceParameterSet] = [:]
    var firstSPS: SequenceParameterSet?
    var firstPPS: PictureParameterSet?

    /// slice_type modulo 5 (Table 7-6).
    static let sliceTypeNames = ["P", "B", "I", "SP", "SI"]

    mutating func beginFrame(isIDR: Bool, sliceType: Int) {
        frames += 1
        frameTypes[Self.sliceTypeNames[sliceType], default: 0] += 1
        if isIDR {
            idrFrames += 1
            if !(spsSinceLastFrame && ppsSinceLastFrame) { everyIDRHasParameterSets = false }
            if let length = currentGOP { gopLengths.append(length) }
            currentGOP = 1
        } else if let length = currentGOP {
            currentGOP = length + 1
        }
        spsSinceLastFrame = false
        ppsSinceLastFrame = false
    }

    func report() -> StreamReport {
        StreamReport(nalCounts: nalCounts, frames: frames, idrFrames: idrFrames, frameTypes: frameTypes,
                     gopLengths: gopLengths + (currentGOP.map { [$0] } ?? []),
                     everyIDRHasParameterSets: everyIDRHasParameterSets,
                     sps: firstSPS.map(StreamReport.SequenceSummary.init),
                     pps: firstPPS.map(StreamReport.PictureSummary.init))
    }
}
