import Foundation
import VTCore
import VTH264

/// Good inputs for the fuzz runs of the binary, and the tokens each format is made of.
enum FuzzCLICorpus {
    static let h264Tokens: [[UInt8]] = [[0x67], [0x68], [0x65], [0x41], [0x09, 0xF0], [0x0C, 0xFF], [0x80], [0xFF, 0xFF]]

    /// Parameter sets with the optional parts (VUI, HRD, scaling lists) and slices of each
    /// type, which the test pattern recordings do not all have.
    static var handMadeStream: [UInt8] {
        var sps = SequenceParameterSet(profileIdc: 100, levelIdc: 31, width: 1280, height: 720,
                                       pictureOrderCount: .type0(log2MaxPicOrderCntLsb: 8))
        sps.scalingMatrix = [ScalingList(deltaScales: [-8]), nil, nil, nil, nil, nil, ScalingList(deltaScales: [2, 0]), nil]
        var vui = VideoUsabilityInformation()
        vui.sampleAspectRatio = SampleAspectRatio(width: 64, height: 45)
        vui.videoSignalType = VideoSignalType(fullRange: true, colourDescription: .bt709)
        vui.timing = TimingInfo(numUnitsInTick: 1001, timeScale: 60000, fixedFrameRate: true)
        vui.nalHRD = HRDParameters(bitRateScale: 1, cpbSizeScale: 2, codedPictureBuffers: [
            .init(bitRateValue: 100, cpbSizeValue: 200, constantBitRate: true)])
        vui.bitstreamRestriction = BitstreamRestriction(maxNumReorderFrames: 1, maxDecFrameBuffering: 2)
        sps.vui = vui
        var pps = PictureParameterSet(entropyCoding: .cabac)
        pps.highProfileExtension = .init(transform8x8Mode: true, secondChromaQpIndexOffset: -2)
        var units = [[0x09, 0x10], sps.nalUnit(), pps.nalUnit()]
        for (type, sliceType) in [(NALUnitType.sliceIDR, 7), (.sliceNonIDR, 0), (.sliceNonIDR, 6), (.sliceNonIDR, 1)] {
            var writer = BitBuilder()
            writer.ue(0)
            writer.ue(sliceType)
            writer.u(0x1234, bits: 16)
            writer.rbspTrailingBits()
            units.append(NALUnitHeader(type: type, refIdc: 2).nalUnit(rbsp: writer.bytes))
        }
        return units.flatMap { AnnexB.startCode + $0 }
    }

    static let tomlTokens: [[UInt8]] = ["=", " = ", "[", "]", "[[", "]]", "[job]", "\n[", "\n[[", "\"", "'", "\"\"\"", "'''", "#", "\n",
                                        ",", "{", "}", "{ a = 1 }", "true", "false", "inf", "-inf", "nan", "0x7f",
                                        "1_000", "1e400", "1979-05-27T07:32:00Z", "07:32:00", "\\u0000", "\\", ".",
                                        "size", "fps", "bitrate", "control", "description", "keyint", "preset",
                                        "no-realtime", "\"1920x1080\"", "\"2M\"", "\"2s\"", "\"30000/1001\"",
                                        "[\"a=1\"]", "\u{FEFF}", "\r\n", "\t"].map { Array($0.utf8) }

    /// The shipped presets, and hand-made ones that set every key between them, in every
    /// TOML spelling the keys take (strings, integers, floats, arrays, multi-line strings).
    static func presets() throws -> [[UInt8]] {
        let directory = PresetTests.root.appendingPathComponent("presets")
        let shipped = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".toml") }.sorted()
            .map { Array(try Data(contentsOf: directory.appendingPathComponent($0))) }
        let handMade = [
            """
            # a camera
            description = "desk camera"
            device = "/dev/video0"
            size = "1920x1080"
            fps = 29.97
            format = "mjpeg"
            strict-format = true
            buffers = 4
            reconnect = true
            control = ["power_line_frequency=50hz", "brightness=20", 'contrast=0x10']
            timing = "passthrough"
            realtime = true
            """,
            #"""
            description = """a file,
            in segments"""
            input = "clip.y4m"
            output = "out-{n:03}-%Y%m%d.h264"
            overwrite = false
            segment-time = "10m"
            segment-size = "500M"
            max-files = 144
            frames = 3000
            duration = "1h"
            quiet = true
            json-summary = "summary.json"
            timestamps = "ts.txt"
            """#,
            """
            test-pattern = true
            encoder = "x264"
            speed = "medium"
            tune = "zerolatency"
            profile = "high"
            level = "4.1"
            bframes = 0
            entropy = "cabac"
            rate-control = "vbr"
            bitrate = "4M"
            max-bitrate = 6_000_000
            bufsize = "2M"
            threads = 2
            keyint = 60
            """,
            """
            encoder = "vaapi"
            va-device = "/dev/dri/renderD128"
            rate-control = "cqp"
            qp = 23
            """,
            "rate-control = \"crf\"\ncrf = 18.5\n",
        ]
        return shipped + handMade.map { Array("\($0)\n".utf8) }
    }

    static let y4mTokens: [[UInt8]] = ["YUV4MPEG2 ", " W", " H", " F", " A", " I", " C", " X", "FRAME\n", "FRAME ", "\n",
                                       ":", "0:0", "C420jpeg", "C420mpeg2", "Cmono", "C444", "Ib", "XCOLORRANGE=FULL",
                                       "W1", "H1", "W3", "H17", "W16384", "H16384", "W8192", "F1000000:1",
                                       "F1:1000000", "A65535:1"].map { Array($0.utf8) }

    /// Small Y4M streams of each kind the reader accepts, two frames each.
    static var y4m: [[UInt8]] {
        let headers = ["W16 H16 F30:1 Ip A1:1 C420jpeg", "W32 H16 F30000:1001 It A16:15 C420paldv XCOLORRANGE=FULL",
                       "W16 H32 F25:1 A0:0 Cmono XCOLORRANGE=LIMITED", "W48 H16 F60:1 C420mpeg2", "W16 H16"]
        return headers.map { header in
            let tags = header.split(separator: " ")
            let width = Int(tags[0].dropFirst())!
            let height = Int(tags[1].dropFirst())!
            let size = header.contains("Cmono") ? width * height : width * height * 3 / 2
            var bytes = Array("YUV4MPEG2 \(header)\n".utf8)
            for frame in 0..<2 {
                bytes += Array("FRAME\n".utf8)
                bytes += (0..<size).map { UInt8(truncatingIfNeeded: $0 / 3 &+ frame &* 40) }
            }
            return bytes
        }
    }
}
