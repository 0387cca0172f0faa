import Testing
import VTCore
import VTH264

/// A camera's Annex B access units made into a session's (`CameraAccessUnits`), on the access
/// units of a stream ffmpeg's libx264 made (`AccessUnitCheckTests.units`: 12 pictures, an IDR
/// every 4, parameter sets before each IDR).
@Suite struct CameraAccessUnitsTests {
    static var units: [[UInt8]] { AccessUnitCheckTests.units }

    /// The first access unit (an IDR with its parameter sets) of a 32x32 stream.
    static let otherSizeIDR: [UInt8]? = {
        let stream = try? EncoderTool.withTemporaryDirectory { tool -> [UInt8] in
            try tool.run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=32x32:rate=30",
                                    "-frames:v", "1", "-pix_fmt", "yuv420p", "-c:v", "libx264", "-threads", "1",
                                    "-f", "h264", tool.path("out.h264")])
            return try tool.read(tool.path("out.h264"))
        }
        return (try? AccessUnitCheckTests.accessUnits(stream ?? []))?.first
    }()

    /// Each unit's bytes as Annex B again, with the parameter sets of `format` before the IDRs.
    static func annexB(_ data: [UInt8], keyFrame: Bool, format: VideoFormatDescription) throws -> [UInt8] {
        var out: [UInt8] = []
        try data.withUnsafeBytes { avcc in
            try AnnexB.appendAccessUnit(avcc: avcc, nalUnitLengthSize: 4,
                                        parameterSets: keyFrame ? format.sequenceParameterSets + format.pictureParameterSets : [],
                                        to: &out)
        }
        return out
    }

    @Test func aWholeStreamGoesThroughUnchanged() throws {
        try #require(Self.units.count == 12)
        var intake = CameraAccessUnits()
        for (index, unit) in Self.units.enumerated() {
            guard case .unit(let data, let isKeyFrame, _) = intake.take(unit) else {
                Issue.record("access unit \(index) was not let through")
                continue
            }
            #expect(isKeyFrame == (index % 4 == 0))
            let format = try #require(intake.format)
            // Without its parameter sets in the data, and the same stream once they are put back.
            let types = try AVCC.nalUnitRanges(in: data, lengthSize: 4).map { NALUnitHeader(data[$0.lowerBound]).type }
            #expect(!types.contains(.sps) && !types.contains(.pps), "\(types)")
            #expect(try Self.annexB(data, keyFrame: isKeyFrame, format: format) == unit, "access unit \(index)")
        }
    }

    /// A stream joined in the middle of a GOP starts at its first IDR.
    @Test func unitsBeforeTheFirstIDRWait() {
        var intake = CameraAccessUnits()
        for unit in Self.units[1..<4] { #expect(intake.take(unit) == .waitingForKeyFrame) }
        #expect(intake.format == nil)
        guard case .unit(_, true, _) = intake.take(Self.units[4]) else {
            Issue.record("the IDR did not start the stream")
            return
        }
    }

    /// A damaged unit is dropped, and so is every one after it up to the next IDR, whose
    /// pictures may refer to the one lost.
    @Test func afterDamageEverythingWaitsForTheNextIDR() {
        var intake = CameraAccessUnits()
        var outcomes: [String] = []
        for (index, unit) in Self.units.enumerated() {
            var unit = unit
            if index == 5 {
                // The forbidden bit of the first slice's NAL header.
                let slice = AnnexB.nalUnitRanges(in: unit).first { NALUnitHeader(unit[$0.lowerBound]).type.isVCL }!
                unit[slice.lowerBound] |= 0x80
            }
            switch intake.take(unit) {
            case .unit(_, let key, _): outcomes.append(key ? "key" : "unit")
            case .damaged: outcomes.append("damaged")
            case .waitingForKeyFrame: outcomes.append("wait")
            }
        }
        #expect(outcomes == ["key", "unit", "unit", "unit", "key", "damaged", "wait", "wait", "key", "unit", "unit", "unit"])
    }

    /// New parameter sets (the camera asked for another size) give a new format; the same ones
    /// sent again before each IDR do not.
    @Test func theFormatFollowsTheCamerasParameterSets() throws {
        var intake = CameraAccessUnits()
        _ = intake.take(Self.units[0])
        let first = try #require(intake.format)
        _ = intake.take(Self.units[4])
        #expect(intake.format == first)
        let other = try #require(Self.otherSizeIDR)
        guard case .unit(_, true, _) = intake.take(other) else {
            Issue.record("the IDR of another size was not let through")
            return
        }
        #expect(intake.format?.width == 32 && intake.format?.height == 32 && intake.format != first)
    }
}
