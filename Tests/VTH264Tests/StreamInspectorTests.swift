import Foundation
import Testing
@testable import VTH264

@Suite struct StreamInspectorTests {
    private let sps = SequenceParameterSet(profileIdc: 66, constraintFlags: 0xC0, levelIdc: 30, width: 320, height: 240)
    private let pps = PictureParameterSet(entropyCoding: .cavlc)

    /// A slice NAL unit: header, first_mb_in_slice, slice_type, then filler bits.
    private func slice(_ type: NALUnitType, firstMb: Int, sliceType: Int) -> [UInt8] {
        var writer = BitBuilder()
        writer.ue(firstMb)
        writer.ue(sliceType)
        writer.u(0x5A5A, bits: 16)
        writer.rbspTrailingBits()
        return NALUnitHeader(type: type, refIdc: 2).nalUnit(rbsp: writer.bytes)
    }

    private func stream(_ units: [[UInt8]]) -> [UInt8] {
        units.flatMap { AnnexB.startCode + $0 }
    }

    @Test func countsFramesSlicesAndGOPs() throws {
        let idr = [slice(.sliceIDR, firstMb: 0, sliceType: 7), slice(.sliceIDR, firstMb: 150, sliceType: 7)]
        let p = [slice(.sliceNonIDR, firstMb: 0, sliceType: 5), slice(.sliceNonIDR, firstMb: 150, sliceType: 0)]
        let b = [slice(.sliceNonIDR, firstMb: 0, sliceType: 1)]
        let ps = [sps.nalUnit(), pps.nalUnit()]
        let units = [[0x09, 0xF0]] + p + ps + idr + p + b + ps + idr + p + [[0x0C, 0xFF, 0xFF, 0x80]]
        let report = try StreamInspector.inspect(annexB: stream(units))
        #expect(report.frames == 6)
        #expect(report.idrFrames == 2)
        #expect(report.frameTypes == ["I": 2, "P": 3, "B": 1])
        #expect(report.gopLengths == [3, 2])
        #expect(report.everyIDRHasParameterSets)
        #expect(report.nalCounts == ["access_unit_delimiter": 1, "slice_idr": 4, "slice_non_idr": 7,
                                     "sps": 2, "pps": 2, "filler_data": 1])
        #expect(report.sps?.width == 320)
        #expect(report.sps?.profile == "Constrained Baseline")
        #expect(report.pps?.entropyCoding == .cavlc)
    }

    @Test func idrWithoutFreshParameterSetsIsReported() throws {
        let idr = slice(.sliceIDR, firstMb: 0, sliceType: 2)
        let p = slice(.sliceNonIDR, firstMb: 0, sliceType: 0)
        let report = try StreamInspector.inspect(annexB: stream([sps.nalUnit(), pps.nalUnit(), idr, p, idr, p]))
        #expect(!report.everyIDRHasParameterSets)
        #expect(report.gopLengths == [2, 2])
        // Parameter sets sent after the IDR's first slice belong to the next frame.
        let late = try StreamInspector.inspect(annexB: stream([sps.nalUnit(), idr, pps.nalUnit(), p]))
        #expect(!late.everyIDRHasParameterSets)
    }

    @Test func streamWithoutStartCodesIsNotAnnexB() {
        let error = #expect(throws: BitstreamError.self) { try StreamInspector.inspect(annexB: [0x47, 0x40, 0x11, 0x10]) }
        #expect(error == .noStartCode(size: 4))
        #expect(error?.description == "no start code (00 00 01) in 4 bytes: the input is not an H.264 Annex B stream")
    }

    @Test func truncatedSliceHeaderIsReported() {
        // The escaped zeros are slice header bits; a bare trailing zero would be
        // trailing_zero_8bits and leave nothing after the header byte.
        #expect(throws: BitstreamError.endOfData(syntax: "slice header", field: "first_mb_in_slice", bitOffset: 16)) {
            try StreamInspector.inspect(annexB: stream([[0x65, 0x00, 0x00, 0x03]]))
        }
        #expect(throws: BitstreamError.endOfData(syntax: "slice header", field: "first_mb_in_slice", bitOffset: 0)) {
            try StreamInspector.inspect(annexB: stream([[0x41, 0x00]]))
        }
    }

    @Test func jsonUsesSnakeCaseKeys() throws {
        var vuiSPS = sps
        vuiSPS.vui = VideoUsabilityInformation()
        vuiSPS.vui?.timing = TimingInfo(numUnitsInTick: 1001, timeScale: 60000, fixedFrameRate: true)
        vuiSPS.vui?.videoSignalType = VideoSignalType(fullRange: true, colourDescription: .bt709)
        let report = try StreamInspector.inspect(annexB: stream([vuiSPS.nalUnit(), pps.nalUnit(),
                                                                 slice(.sliceIDR, firstMb: 0, sliceType: 7)]))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = try #require(String(data: encoder.encode(report), encoding: .utf8))
        for key in ["\"nal_counts\":", "\"frames\":1", "\"idr_frames\":1", "\"gop_lengths\":[1]",
                    "\"every_idr_has_parameter_sets\":true", "\"entropy_coding\":\"cavlc\"",
                    "\"frame_rate\":\"30000\\/1001\"", "\"time_scale\":60000", "\"num_units_in_tick\":1001",
                    "\"video_full_range\":true", "\"matrix_coefficients\":\"bt709\"", "\"profile_idc\":66",
                    "\"constraint_set_flags\":[true,true,false,false,false,false]", "\"level\":\"3.0\""] {
            #expect(json.contains(key), "missing \(key) in \(json)")
        }
        #expect(!json.contains("\"sar\""))
        #expect(try JSONDecoder().decode(StreamReport.self, from: encoder.encode(report)) == report)
    }

    @Test func textDescription() throws {
        let report = try StreamInspector.inspect(annexB: stream([sps.nalUnit(), pps.nalUnit(),
                                                                 slice(.sliceIDR, firstMb: 0, sliceType: 7),
                                                                 slice(.sliceNonIDR, firstMb: 0, sliceType: 5)]))
        #expect(report.textDescription == """
            frames: 2 (IDR 1; I 1, P 1)
            GOP lengths: 2
            every IDR has SPS and PPS: yes
            NAL units: slice_idr 1, slice_non_idr 1, sps 1, pps 1
            SPS: Constrained Baseline 3.0, 320x240, 4:2:0 8-bit, progressive, POC type 2, 1 reference frame
                 SAR unspecified, no timing information
            PPS: CAVLC, pic_init_qp 26, id 0 (SPS 0)
            """)
    }
}
