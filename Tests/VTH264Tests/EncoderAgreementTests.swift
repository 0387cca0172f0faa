import Foundation
import Testing
import VTCore
@testable import VTH264

/// A tiny stream made by a real encoder, and what is known about it beyond what ffprobe says.
struct EncodedStream: Sendable, CustomTestStringConvertible {
    enum Encoder: Sendable {
        /// The x264 CLI, reading FFmpeg's test pattern as Y4M.
        case x264([String])
        /// FFmpeg's libx264 wrapper, writing a raw H.264 stream.
        case ffmpeg([String])
    }

    let name: String
    var width: Int
    var height: Int
    var rate = "25"
    var frames = 5
    var pixelFormat = "yuv420p"
    let encoder: Encoder
    /// Checks of values ffprobe does not print.
    var check: @Sendable (SequenceParameterSet, PictureParameterSet, StreamReport) -> Void = { _, _, _ in }

    var testDescription: String { name }

    func encode(in tool: EncoderTool) throws -> String {
        let output = tool.path("out.h264")
        switch encoder {
        case .x264(let options):
            let input = try tool.testPattern(width: width, height: height, rate: rate, frames: frames,
                                             pixelFormat: pixelFormat)
            try tool.run("x264", ["--quiet", "--no-progress", "--threads", "1"] + options + ["-o", output, input])
        case .ffmpeg(let options):
            try tool.run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi",
                                    "-i", "testsrc2=size=\(width)x\(height):rate=\(rate)",
                                    "-frames:v", "\(frames)", "-pix_fmt", pixelFormat, "-c:v", "libx264",
                                    "-threads", "1"] + options + ["-f", "h264", output])
        }
        return output
    }

    static let all: [EncodedStream] = [
        EncodedStream(name: "x264 baseline 176x144 at 30000/1001", width: 176, height: 144,
                      rate: "30000/1001", frames: 7, encoder: .x264(["--profile", "baseline", "--keyint", "3"])) {
            sps, pps, report in
            #expect(sps.profileName == "Constrained Baseline")
            #expect(pps.entropyCoding == .cavlc)
            #expect(sps.pictureOrderCount == .type2)
            #expect(report.gopLengths == [3, 3, 1])
            #expect(sps.timing?.timeScale == 60000 && sps.timing?.numUnitsInTick == 1001)
        },
        EncodedStream(name: "x264 main 1366x768 with B-frames", width: 1366, height: 768, frames: 6,
                      encoder: .x264(["--profile", "main", "--keyint", "4", "--bframes", "2", "--preset", "ultrafast",
                                      "--b-adapt", "0"])) { sps, pps, report in
            #expect(sps.frameCropping == .init(right: 5))
            #expect(sps.codedWidth == 1376)
            #expect(report.frameTypes["B", default: 0] > 0)
            #expect(report.gopLengths == [4, 2])
        },
        EncodedStream(name: "x264 high 720x576 SAR 16:15 full range BT.709", width: 720, height: 576, frames: 3,
                      encoder: .x264(["--sar", "16:15", "--range", "pc", "--colormatrix", "bt709"])) { sps, pps, _ in
            #expect(sps.vui?.aspectRatioIdc == 255)
            #expect(sps.vui?.videoSignalType?.fullRange == true)
            #expect(sps.vui?.videoSignalType?.colourDescription?.matrixCoefficients == 1)
            #expect(pps.entropyCoding == .cabac)
            #expect(pps.transform8x8Mode)
        },
        EncodedStream(name: "x264 interlaced 352x276", width: 352, height: 276, frames: 4,
                      encoder: .x264(["--tff", "--keyint", "2"])) { sps, _, _ in
            #expect(!sps.frameMbsOnly)
            #expect(sps.mbAdaptiveFrameField)
            #expect(sps.cropUnitY == 4)
        },
        EncodedStream(name: "x264 4:4:4 322x242", width: 322, height: 242, frames: 3, pixelFormat: "yuv444p",
                      encoder: .x264(["--output-csp", "i444", "--keyint", "2"])) { sps, _, _ in
            #expect(sps.chromaFormatIdc == 3)
            #expect(sps.cropUnitX == 1)
        },
        EncodedStream(name: "x264 high 10-bit", width: 176, height: 144, frames: 3,
                      encoder: .x264(["--output-depth", "10"])) { sps, _, _ in
            #expect(sps.bitDepthLuma == 10 && sps.bitDepthChroma == 10)
        },
        EncodedStream(name: "x264 JVT matrices, 3 slices, AUDs", width: 320, height: 240, frames: 8,
                      encoder: .x264(["--cqm", "jvt", "--slices", "3", "--aud", "--keyint", "5"])) { sps, pps, report in
            // x264 sends its matrices in the PPS, not the SPS.
            #expect(pps.highProfileExtension?.scalingMatrix?.count == 8)
            #expect(report.pps?.scalingMatrixPresent == true)
            #expect(report.nalCounts["access_unit_delimiter"] == 8)
            #expect(report.nalCounts["slice_idr", default: 0] + report.nalCounts["slice_non_idr", default: 0] == 24)
            #expect(report.gopLengths == [5, 3])
        },
        EncodedStream(name: "x264 CBR with NAL HRD", width: 176, height: 144, frames: 6,
                      encoder: .x264(["--bitrate", "300", "--vbv-maxrate", "300", "--vbv-bufsize", "600",
                                      "--nal-hrd", "cbr", "--keyint", "3"])) { sps, _, report in
            // The HRD codes rates in steps of 2^(6 + bit_rate_scale) bit/s, so x264 rounds.
            let hrd = sps.vui?.nalHRD
            #expect(abs((hrd?.bitRate() ?? 0) - 300_000) < 1 << (6 + (hrd?.bitRateScale ?? 0)))
            #expect(abs((hrd?.cpbSize() ?? 0) - 600_000) < 1 << (4 + (hrd?.cpbSizeScale ?? 0)))
            #expect(hrd?.codedPictureBuffers.first?.constantBitRate == true)
            // Buffering period and picture timing SEI for every frame.
            #expect(report.nalCounts["sei", default: 0] >= 6)
        },
        EncodedStream(name: "ffmpeg libx264 main 1366x768 at 30000/1001", width: 1366, height: 768,
                      rate: "30000/1001", frames: 5,
                      encoder: .ffmpeg(["-profile:v", "main", "-g", "3", "-preset", "veryfast"])) { sps, _, report in
            #expect(sps.profileName == "Main")
            #expect(report.gopLengths == [3, 2])
        },
        EncodedStream(name: "ffmpeg libx264 high 640x360 SAR 12:11 full range", width: 640, height: 360, frames: 6,
                      encoder: .ffmpeg(["-profile:v", "high", "-g", "4", "-bf", "0", "-vf", "setsar=12/11",
                                        "-color_range", "pc", "-colorspace", "bt709", "-color_primaries", "bt709",
                                        "-color_trc", "bt709"])) { sps, _, _ in
            #expect(sps.vui?.aspectRatioIdc == 2)
            #expect(sps.vui?.videoSignalType?.colourDescription == .bt709)
        },
        EncodedStream(name: "ffmpeg libx264 baseline 320x180", width: 320, height: 180, frames: 4,
                      encoder: .ffmpeg(["-profile:v", "baseline", "-g", "2"])) { sps, pps, report in
            #expect(sps.frameCropping == .init(bottom: 6))
            #expect(pps.entropyCoding == .cavlc)
            #expect(report.everyIDRHasParameterSets)
        },
    ]
}

@Suite struct EncoderAgreementTests {
    @Test(arguments: EncodedStream.all)
    func parameterSetsAndCountsAgreeWithFFprobe(stream: EncodedStream) throws {
        try EncoderTool.withTemporaryDirectory { tool in
            let file = try stream.encode(in: tool)
            let bytes = try tool.read(file)
            let (spsNAL, ppsNAL) = try Self.firstParameterSets(in: bytes)
            let sps = try SequenceParameterSet(nalUnit: spsNAL)
            let pps = try PictureParameterSet(nalUnit: ppsNAL, chromaFormatIdc: sps.chromaFormatIdc)
            let report = try StreamInspector.inspect(annexB: bytes)

            // Parsing keeps every field: writing back gives the encoder's bytes.
            #expect(sps.nalUnit(refIdc: NALUnitHeader(spsNAL[0]).refIdc) == spsNAL)
            #expect(pps.nalUnit(refIdc: NALUnitHeader(ppsNAL[0]).refIdc) == ppsNAL)

            let probe = try tool.probeStream(file)
            #expect(sps.profileName == probe["profile"] as? String)
            #expect(sps.levelIdc == probe["level"] as? Int)
            #expect(sps.width == probe["width"] as? Int)
            #expect(sps.height == probe["height"] as? Int)
            #expect(sps.width == stream.width - stream.width % (stream.pixelFormat == "yuv444p" ? 1 : 2))
            if let sar = sps.sampleAspectRatio {
                #expect(sar.description == probe["sample_aspect_ratio"] as? String)
            }
            #expect(Self.known(probe["color_range"]) == sps.vui?.videoSignalType.map { $0.fullRange ? "pc" : "tv" })
            let colour = sps.vui?.videoSignalType?.colourDescription
            #expect(Self.known(probe["color_space"]) == colour.map(\.matrixCoefficientsName).flatMap(Self.known))
            #expect(Self.known(probe["color_primaries"]) == colour.map(\.colourPrimariesName).flatMap(Self.known))
            #expect(Self.known(probe["color_transfer"]) == colour.map(\.transferCharacteristicsName).flatMap(Self.known))
            if sps.frameMbsOnly, sps.timing?.fixedFrameRate == true {
                let probed = (probe["r_frame_rate"] as? String).flatMap(FrameRate.init(parsing:))
                #expect(sps.timing?.frameRate == probed)
                #expect(probed == FrameRate(parsing: stream.rate))
            }

            let counts = try tool.probeFrameCounts(file)
            #expect(report.frames == counts.frames)
            #expect(report.frames == stream.frames)
            #expect(report.idrFrames == counts.keyframes)
            #expect(report.gopLengths.reduce(0, +) == report.frames)
            #expect(report.everyIDRHasParameterSets)
            #expect(report.sps == StreamReport.SequenceSummary(sps))
            #expect(report.pps == StreamReport.PictureSummary(pps))

            stream.check(sps, pps, report)
        }
    }

    @Test(arguments: EncodedStream.all)
    func avcCAgreesWithFFmpeg(stream: EncodedStream) throws {
        try EncoderTool.withTemporaryDirectory { tool in
            let file = try stream.encode(in: tool)
            let bytes = try tool.read(file)
            let (spsNAL, ppsNAL) = try Self.firstParameterSets(in: bytes)
            let format = try VideoFormatDescription(h264ParameterSets: [ppsNAL, spsNAL])
            let record = try format.avcC()
            let reference = try tool.avcCFromMP4(file)
            // FFmpeg writes the chroma format and bit depth trailer for every profile above
            // Extended; ISO/IEC 14496-15 asks for it with profiles 100, 110, 122 and 144 only.
            if spsNAL[1] == 244 {
                #expect(record == Array(reference.dropLast(4)))
            } else {
                #expect(record == reference)
            }
            #expect(try VideoFormatDescription(avcC: reference) == format)
            #expect(try VideoFormatDescription(avcC: record) == format)
            #expect(format.width == stream.width - stream.width % (stream.pixelFormat == "yuv444p" ? 1 : 2))
            #expect(format.height == stream.height)
        }
    }

    /// The first SPS and PPS NAL units of an Annex B stream.
    private static func firstParameterSets(in bytes: [UInt8]) throws -> (sps: [UInt8], pps: [UInt8]) {
        let units = AnnexB.nalUnitRanges(in: bytes).map { Array(bytes[$0]) }
        let sps = try #require(units.first { NALUnitHeader($0[0]).type == .sps })
        let pps = try #require(units.first { NALUnitHeader($0[0]).type == .pps })
        return (sps, pps)
    }

    /// ffprobe leaves a value out or prints "unknown" when the stream does not say.
    private static func known(_ value: Any?) -> String? {
        guard let text = value as? String, text != "unknown" else { return nil }
        return text
    }
}
