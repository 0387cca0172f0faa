import Testing
import VTH264

/// The cheap check of a camera's H.264 access unit (`AccessUnitCheck`) on a stream ffmpeg's
/// libx264 made, cut into access units as a UVC H.264 camera delivers them (parameter sets
/// before each IDR): every one passes, and each kind of damage is found.
@Suite struct AccessUnitCheckTests {
    /// Access units of a 64x48 stream, 12 pictures with an IDR every 4, two slices a picture
    /// (so the picture's start is a slice of its own), as `AccessUnitReader` splits the stream,
    /// in Annex B with the parameter sets before every IDR.
    static let units: [[UInt8]] = {
        let stream = try? EncoderTool.withTemporaryDirectory { tool -> [UInt8] in
            try tool.run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=30",
                                    "-frames:v", "12", "-pix_fmt", "yuv420p", "-c:v", "libx264", "-threads", "1",
                                    "-g", "4", "-bf", "0", "-x264-params", "slices=2",
                                    "-f", "h264", tool.path("out.h264")])
            return try tool.read(tool.path("out.h264"))
        }
        return (try? accessUnits(stream ?? [])) ?? []
    }()

    /// `stream`'s access units in Annex B, the parameter sets before every IDR.
    static func accessUnits(_ stream: [UInt8]) throws -> [[UInt8]] {
        try stream.withUnsafeBytes { bytes in
            var reader = AccessUnitReader(annexB: bytes)
            var units: [[UInt8]] = []
            while let unit = try reader.nextUnit() {
                let parameterSets = unit.isKeyFrame
                    ? unit.format.sequenceParameterSets + unit.format.pictureParameterSets : []
                var annexB: [UInt8] = []
                try unit.data.withUnsafeBytes { avcc in
                    try AnnexB.appendAccessUnit(avcc: avcc, nalUnitLengthSize: 4, parameterSets: parameterSets, to: &annexB)
                }
                units.append(annexB)
            }
            return units
        }
    }

    /// The NAL units of `unit`, and the unit made again from them.
    static func nalUnits(_ unit: [UInt8]) -> [[UInt8]] {
        AnnexB.nalUnitRanges(in: unit).map { Array(unit[$0]) }
    }

    static func join(_ nalUnits: [[UInt8]]) -> [UInt8] {
        nalUnits.flatMap { [0, 0, 0, 1] + $0 }
    }

    static var idr: [UInt8] { units[0] }
    static var nonIDR: [UInt8] { units[1] }

    @Test func everyAccessUnitOfAnEncodersStreamPasses() throws {
        try #require(Self.units.count == 12, "ffmpeg gave \(Self.units.count) access units")
        for (index, unit) in Self.units.enumerated() {
            #expect(AccessUnitCheck.problem(unit, parameterSetsSeen: index > 0) == nil, "access unit \(index)")
        }
        // An IDR without its parameter sets passes only once they were seen.
        let bare = Self.join(Self.nalUnits(Self.idr).filter { ![.sps, .pps].contains(NALUnitHeader($0[0]).type) })
        #expect(AccessUnitCheck.problem(bare, parameterSetsSeen: true) == nil)
        #expect(AccessUnitCheck.problem(bare, parameterSetsSeen: false) == .noParameterSets)
    }

    @Test func damageIsFound() throws {
        try #require(Self.units.count == 12)
        var nal = Self.nalUnits(Self.nonIDR)
        let slice = try #require(nal.firstIndex { NALUnitHeader($0[0]).type == .sliceNonIDR })
        var forbidden = nal
        forbidden[slice][0] |= 0x80
        #expect(AccessUnitCheck.problem(Self.join(forbidden), parameterSetsSeen: true) == .forbiddenBit(unit: slice))
        var reserved = nal
        reserved[slice][0] = reserved[slice][0] & 0xE0 | 17
        #expect(AccessUnitCheck.problem(Self.join(reserved), parameterSetsSeen: true) == .reservedType(unit: slice, type: 17))
        // The picture's first slice lost: the second does not start at macroblock 0.
        nal.remove(at: slice)
        #expect(AccessUnitCheck.problem(Self.join(nal), parameterSetsSeen: true) == .pictureStartMissing)
        #expect(AccessUnitCheck.problem(Array(Self.nonIDR.dropFirst(4)), parameterSetsSeen: true) == .noStartCode)
        let parameterSetsOnly = Self.join(Self.nalUnits(Self.idr).filter { !NALUnitHeader($0[0]).type.isVCL })
        #expect(AccessUnitCheck.problem(parameterSetsOnly, parameterSetsSeen: true) == .noSlice)
        #expect(AccessUnitCheck.problem([], parameterSetsSeen: true) == .noStartCode)
    }

    @Test func anIDRMixedWithANonIDRSliceOrWithoutReferenceIsFound() throws {
        try #require(Self.units.count == 12)
        let idr = Self.nalUnits(Self.idr)
        let second = try #require(idr.lastIndex { NALUnitHeader($0[0]).type == .sliceIDR })
        var mixed = idr
        mixed[second][0] = mixed[second][0] & 0xE0 | NALUnitType.sliceNonIDR.rawValue
        #expect(AccessUnitCheck.problem(Self.join(mixed), parameterSetsSeen: true) == .mixedSlices)
        var unreferenced = idr
        unreferenced[second][0] &= 0x9F
        #expect(AccessUnitCheck.problem(Self.join(unreferenced), parameterSetsSeen: true)
                == .unreferenced(unit: second, type: NALUnitType.sliceIDR.rawValue))
    }

    /// Every NAL unit's header with its forbidden bit set is found as that; every cut that
    /// leaves no slice is found; and every byte changed to a few values and every other cut
    /// gets an answer without a read past the end.
    @Test func everyChangeAndCutGivesAnAnswer() throws {
        try #require(Self.units.count == 12)
        let unit = Self.idr
        let ranges = AnnexB.nalUnitRanges(in: unit)
        for (index, range) in ranges.enumerated() {
            var damaged = unit
            damaged[range.lowerBound] |= 0x80
            #expect(AccessUnitCheck.problem(damaged, parameterSetsSeen: false) == .forbiddenBit(unit: index))
        }
        let firstSlice = try #require(ranges.first { NALUnitHeader(unit[$0.lowerBound]).type == .sliceIDR })
        for offset in unit.indices {
            for value: UInt8 in [0x00, 0x01, 0x65, 0xFF] {
                var changed = unit
                changed[offset] = value
                _ = AccessUnitCheck.problem(changed, parameterSetsSeen: false)
            }
            let cut = AccessUnitCheck.problem(Array(unit[..<offset]), parameterSetsSeen: false)
            if offset <= firstSlice.lowerBound { #expect(cut != nil, "cut to \(offset) bytes") }
        }
    }
}
