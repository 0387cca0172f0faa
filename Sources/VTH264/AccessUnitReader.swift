import VTCore

/// Splits a raw H.264 stream (Annex B) into access units in decode order, each in AVCC form
/// without its parameter sets, with its keyframe flag and its place in display order, which a
/// raw stream carries only as the picture order count of its slices (7.4.3, 8.2.1). Used to
/// give a raw stream's frames their times when it is put in a container.
public struct AccessUnitReader {
    /// One access unit as the stream holds it.
    public struct Unit: Sendable {
        /// AVCC with 4-byte lengths, SPS, PPS and access unit delimiters left out.
        public var data: [UInt8]
        public var isKeyFrame: Bool
        /// The picture's position in display order, counted from the start of the stream.
        public var displayIndex: Int
        /// The parameter sets in force for this picture.
        public var format: VideoFormatDescription
    }

    private let bytes: UnsafeRawBufferPointer
    private let ranges: [Range<Int>]
    private var next = 0
    private var sequenceParameterSets: [Int: [UInt8]] = [:]
    private var pictureParameterSets: [Int: [UInt8]] = [:]
    private var parsedSPS: [Int: SequenceParameterSet] = [:]
    private var ppsToSPS: [Int: Int] = [:]
    /// The description of the parameter sets seen so far; nil when one changed since it was made.
    private var format: VideoFormatDescription?
    /// Pictures of the current IDR period, waiting for the period to end to be ranked.
    private var period: [(unit: Unit, order: Int)] = []
    private var ready: [Unit] = []
    private var shown = 0
    private var previousMsb = 0
    private var previousLsb = 0
    private var decodeCount = 0

    /// Reads the stream in `bytes` (a mapped file, say), which must stay valid while the reader
    /// is used.
    public init(annexB bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        ranges = AnnexB.nalUnitRanges(in: bytes).filter { !$0.isEmpty }
    }

    /// The reorder depth the stream declares (VUI max_num_reorder_frames), else what its
    /// picture order count type allows (none for type 2, 2 otherwise).
    public var declaredReorderDepth: Int? {
        parsedSPS.values.first.map(Self.reorderDepth)
    }

    /// How far decoding may run ahead of display in a stream with this SPS: its VUI's
    /// max_num_reorder_frames, else none with picture order count type 2, else 2 (x264's
    /// B-pyramid, the most the encoders here use).
    public static func reorderDepth(of sps: SequenceParameterSet) -> Int {
        if let depth = sps.vui?.bitstreamRestriction?.maxNumReorderFrames { return depth }
        if case .type2 = sps.pictureOrderCount { return 0 }
        return 2
    }

    /// The nominal frame rate from the SPS's VUI timing, if it has one.
    public var vuiFrameRate: FrameRate? {
        parsedSPS.values.first?.timing?.frameRate
    }

    /// The next access unit in decode order, or nil at the end.
    public mutating func nextUnit() throws(BitstreamError) -> Unit? {
        while ready.isEmpty {
            guard try readPicture() else {
                flushPeriod()
                break
            }
        }
        return ready.isEmpty ? nil : ready.removeFirst()
    }

    /// Reads NAL units up to the end of the next picture; false at the end of the stream.
    private mutating func readPicture() throws(BitstreamError) -> Bool {
        var data: [UInt8] = []
        var header: (idr: Bool, reference: Bool, order: Int)?
        while next < ranges.count {
            let range = ranges[next]
            let nal = NALUnitHeader(bytes[range.lowerBound])
            if nal.type.isVCL {
                let slice = try sliceOrder(Array(bytes[range]), header: nal)
                if header != nil && slice.firstMb == 0 { break }  // the next picture
                if header == nil { header = (nal.type == .sliceIDR, nal.refIdc != 0, slice.order) }
            } else if header != nil && [.sps, .pps, .sei, .accessUnitDelimiter].contains(nal.type) {
                break  // what comes before the next picture
            }
            next += 1
            switch nal.type {
            case .sps:
                let sps = try SequenceParameterSet(nalUnit: Array(bytes[range]))
                sequenceParameterSets[sps.seqParameterSetId] = Array(bytes[range])
                parsedSPS[sps.seqParameterSetId] = sps
                format = nil
            case .pps:
                let pps = try PictureParameterSet(nalUnit: Array(bytes[range]))
                pictureParameterSets[pps.picParameterSetId] = Array(bytes[range])
                ppsToSPS[pps.picParameterSetId] = pps.seqParameterSetId
                format = nil
            case .accessUnitDelimiter:
                break
            default:
                data += AVCC.lengthPrefixed([Array(bytes[range])])
            }
        }
        guard let header else { return false }
        if header.idr { flushPeriod() }
        // Made again only when a parameter set came (before every keyframe), not per picture.
        let current: VideoFormatDescription
        if let format {
            current = format
        } else {
            current = try VideoFormatDescription(
                h264ParameterSets: sequenceParameterSets.keys.sorted().compactMap { sequenceParameterSets[$0] }
                    + pictureParameterSets.keys.sorted().compactMap { pictureParameterSets[$0] })
            format = current
        }
        period.append((Unit(data: data, isKeyFrame: header.idr, displayIndex: 0, format: current), header.order))
        decodeCount += 1
        return true
    }

    /// Ranks the pictures of the period that just ended by their picture order count.
    private mutating func flushPeriod() {
        let ranked = period.indices.sorted { (period[$0].order, $0) < (period[$1].order, $1) }
        var units = period.map(\.unit)
        for (rank, index) in ranked.enumerated() { units[index].displayIndex = shown + rank }
        shown += units.count
        ready += units
        period.removeAll()
    }

    /// first_mb_in_slice and the picture order count of a slice (frames only: every picture
    /// vtrecord writes is a frame).
    private mutating func sliceOrder(_ nalUnit: [UInt8], header: NALUnitHeader) throws(BitstreamError)
        -> (firstMb: Int, order: Int) {
        var reader = BitReader(rbsp: removeEmulationPrevention(nalUnit.dropFirst()), syntax: "slice header")
        let idr = header.type == .sliceIDR
        let (start, sps) = try SliceHeaderStart.read(&reader, isIDR: idr) { [ppsToSPS, parsedSPS] ppsId throws(BitstreamError) in
            guard let spsId = ppsToSPS[ppsId], let sps = parsedSPS[spsId] else { throw .missingParameterSet(.pps) }
            return sps
        }
        let firstMb = start.firstMbInSlice
        guard firstMb == 0 else { return (firstMb, 0) }
        switch sps.pictureOrderCount {
        case .type0(let log2MaxLsb):
            let lsb = Int(try reader.u(log2MaxLsb, "pic_order_cnt_lsb"))
            let maxLsb = 1 << log2MaxLsb
            if idr { (previousMsb, previousLsb) = (0, 0) }
            var msb = previousMsb
            if lsb < previousLsb && previousLsb - lsb >= maxLsb / 2 {
                msb += maxLsb
            } else if lsb > previousLsb && lsb - previousLsb > maxLsb / 2 {
                msb -= maxLsb
            }
            if header.refIdc != 0 { (previousMsb, previousLsb) = (msb, lsb) }
            return (firstMb, msb + lsb)
        default:
            // Output order is decode order (type 2; type 1 is not written by the encoders here).
            return (firstMb, decodeCount)
        }
    }
}
