import Foundation
import VTCore
@testable import VTH264

/// Good inputs for the H.264 fuzz runs to start from: small streams from x264 and FFmpeg that
/// between them use every part of the SPS and PPS syntax those encoders write (profiles,
/// B-frames, fields, 4:4:4, 10-bit, scaling matrices, slices, HRD, SAR and colour), and hand-made
/// parameter sets for the syntax no encoder on this machine writes (POC type 1, matrices in the
/// SPS, VCL HRD, chroma location, bitstream restriction).
///
/// Built once per test process: encoding takes a few seconds.
enum H264FuzzCorpus {
    struct Streams: Sendable {
        /// Whole Annex B streams.
        let annexB: [[UInt8]]
        /// SPS NAL units (header byte and escaped RBSP).
        let sequenceParameterSets: [[UInt8]]
        /// PPS NAL units.
        let pictureParameterSets: [[UInt8]]
        /// avcC records made from each stream's parameter sets.
        let avcCRecords: [[UInt8]]
        /// Access units as AVCC (4-byte lengths): each stream's first few NAL units.
        let avccAccessUnits: [[UInt8]]
    }

    /// Small sizes keep the streams a few kilobytes, so mutations land in headers as often as
    /// in slice data.
    static let encoded: [EncodedStream] = [
        EncodedStream(name: "baseline", width: 48, height: 32, frames: 4,
                      encoder: .x264(["--profile", "baseline", "--keyint", "2"])),
        EncodedStream(name: "main with B-frames", width: 64, height: 48, frames: 5,
                      encoder: .x264(["--profile", "main", "--keyint", "4", "--bframes", "2", "--b-adapt", "0"])),
        EncodedStream(name: "high SAR full range", width: 34, height: 18, frames: 2,
                      encoder: .x264(["--sar", "16:15", "--range", "pc", "--colormatrix", "bt709"])),
        EncodedStream(name: "interlaced", width: 48, height: 36, frames: 2, encoder: .x264(["--tff"])),
        EncodedStream(name: "4:4:4", width: 33, height: 17, frames: 2, pixelFormat: "yuv444p",
                      encoder: .x264(["--output-csp", "i444"])),
        EncodedStream(name: "10-bit", width: 32, height: 32, frames: 2, encoder: .x264(["--output-depth", "10"])),
        EncodedStream(name: "JVT matrices, slices, AUDs", width: 64, height: 48, frames: 3,
                      encoder: .x264(["--cqm", "jvt", "--slices", "3", "--aud", "--keyint", "2"])),
        EncodedStream(name: "CBR with NAL HRD", width: 32, height: 32, frames: 3,
                      encoder: .x264(["--bitrate", "100", "--vbv-maxrate", "100", "--vbv-bufsize", "200",
                                      "--nal-hrd", "cbr"])),
        EncodedStream(name: "ffmpeg baseline", width: 40, height: 30, frames: 3,
                      encoder: .ffmpeg(["-profile:v", "baseline", "-g", "2"])),
    ]

    static let streams: Result<Streams, any Error> = Result {
        let annexB = try EncoderTool.withTemporaryDirectory { tool in
            try encoded.map { stream in try tool.read(stream.encode(in: tool)) }
        }
        var sequence = handMadeSequenceParameterSets
        var picture = handMadePictureParameterSets
        var records: [[UInt8]] = []
        var accessUnits: [[UInt8]] = []
        for stream in annexB {
            let units = AnnexB.nalUnitRanges(in: stream).map { Array(stream[$0]) }
            let spsUnits = units.filter { NALUnitHeader($0[0]).type == .sps }
            let ppsUnits = units.filter { NALUnitHeader($0[0]).type == .pps }
            sequence += spsUnits.prefix(1)
            picture += ppsUnits.prefix(1)
            records.append(try VideoFormatDescription(h264ParameterSets: Array(spsUnits.prefix(1) + ppsUnits.prefix(1))).avcC())
            accessUnits.append(units.prefix(6).flatMap { unit in
                withUnsafeBytes(of: UInt32(unit.count).bigEndian, Array.init) + unit
            })
        }
        return Streams(annexB: annexB + [handMadeStream], sequenceParameterSets: sequence,
                       pictureParameterSets: picture, avcCRecords: records, avccAccessUnits: accessUnits)
    }

    /// SPS syntax the encoders here never write.
    static var handMadeSequenceParameterSets: [[UInt8]] {
        var pocType1 = SequenceParameterSet(profileIdc: 77, levelIdc: 30, width: 176, height: 144,
                                            pictureOrderCount: .type1(deltaPicOrderAlwaysZero: false, offsetForNonRefPic: -3,
                                                                      offsetForTopToBottomField: 1,
                                                                      offsetForRefFrame: [2, -2, 7]))
        pocType1.gapsInFrameNumAllowed = true

        var high = SequenceParameterSet(profileIdc: 100, levelIdc: 40, width: 1920, height: 1080,
                                        maxNumRefFrames: 4, pictureOrderCount: .type0(log2MaxPicOrderCntLsb: 6))
        high.scalingMatrix = [ScalingList(deltaScales: [-8]), nil, ScalingList(deltaScales: [3, -1, 0]),
                              nil, nil, nil, ScalingList(deltaScales: [1, 2, 3]), nil]
        var vui = VideoUsabilityInformation()
        vui.sampleAspectRatio = SampleAspectRatio(width: 4, height: 3)
        vui.overscanAppropriate = true
        vui.videoSignalType = VideoSignalType(videoFormat: 2, fullRange: false, colourDescription: .bt709)
        vui.chromaSampleLocation = ChromaSampleLocation(top: 1, bottom: 2)
        vui.timing = TimingInfo(numUnitsInTick: 1001, timeScale: 60000, fixedFrameRate: true)
        let buffers = [HRDParameters.CodedPictureBuffer(bitRateValue: 1000, cpbSizeValue: 2000, constantBitRate: false),
                       HRDParameters.CodedPictureBuffer(bitRateValue: 3000, cpbSizeValue: 4000, constantBitRate: true)]
        vui.nalHRD = HRDParameters(bitRateScale: 2, cpbSizeScale: 3, codedPictureBuffers: buffers)
        vui.vclHRD = HRDParameters(bitRateScale: 1, cpbSizeScale: 1, codedPictureBuffers: Array(buffers.prefix(1)))
        vui.lowDelayHRD = true
        vui.picStructPresent = true
        vui.bitstreamRestriction = BitstreamRestriction(maxNumReorderFrames: 2, maxDecFrameBuffering: 4)
        high.vui = vui

        var monochrome = SequenceParameterSet(profileIdc: 244, levelIdc: 51, width: 64, height: 64)
        monochrome.chromaFormatIdc = 0
        monochrome.bitDepthLuma = 14
        monochrome.bitDepthChroma = 14
        monochrome.frameMbsOnly = false
        monochrome.picHeightInMapUnits = 2
        monochrome.frameCropping = .init(left: 1, right: 2, top: 1, bottom: 1)
        return [pocType1.nalUnit(), high.nalUnit(), monochrome.nalUnit()]
    }

    /// PPS syntax the encoders here never write.
    static var handMadePictureParameterSets: [[UInt8]] {
        var pps = PictureParameterSet(picParameterSetId: 3, seqParameterSetId: 1, entropyCoding: .cabac)
        pps.bottomFieldPicOrderInFramePresent = true
        pps.numRefIdxL0DefaultActive = 4
        pps.numRefIdxL1DefaultActive = 2
        pps.weightedPred = true
        pps.weightedBipredIdc = 2
        pps.picInitQp = -30
        pps.picInitQs = 40
        pps.chromaQpIndexOffset = -12
        pps.redundantPicCntPresent = true
        pps.highProfileExtension = .init(transform8x8Mode: true,
                                         scalingMatrix: [nil, ScalingList(deltaScales: [-8]), nil, nil, nil, nil,
                                                         ScalingList(deltaScales: [5, 0]), nil],
                                         secondChromaQpIndexOffset: 12)
        return [pps.nalUnit(), PictureParameterSet(entropyCoding: .cavlc).nalUnit()]
    }

    /// A stream of hand-made parameter sets and slice starts of every slice type.
    static var handMadeStream: [UInt8] {
        var units = handMadeSequenceParameterSets + handMadePictureParameterSets
        for (type, sliceType) in [(NALUnitType.sliceIDR, 7), (.sliceNonIDR, 5), (.sliceNonIDR, 1), (.sliceDataPartitionA, 3),
                                  (.sliceNonIDR, 9)] {
            var writer = BitBuilder()
            writer.ue(0)
            writer.ue(sliceType)
            writer.u(0xA5A5, bits: 16)
            writer.rbspTrailingBits()
            units.append(NALUnitHeader(type: type, refIdc: 1).nalUnit(rbsp: writer.bytes))
        }
        units.append([0x09, 0x10])
        units.append([0x06, 0x05, 0x01, 0x00, 0x80])
        return units.flatMap { AnnexB.startCode + $0 }
    }
}
