import Foundation
import Testing
import VTH264

/// The stream vtrecord writes: parameter sets before every IDR, every GOP decodable alone, and
/// `inspect` counting what ffprobe counts.
@Suite struct StreamStructureTests {
    static func record(_ dir: TemporaryDirectory, _ extra: [String]) throws -> String {
        let out = dir.path("gops.h264")
        let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--fps", "25", "--frames", "60",
                                    "--keyint", "15", "-o", out, "--quiet"] + extra)
        try #require(r.status == 0, "\(r.stderr)")
        return out
    }

    @Test(arguments: [["--bframes", "0"], ["--bframes", "3"], ["--speed", "veryfast", "--tune", "zerolatency"]])
    func everyIDRStartsAStreamThatDecodesAlone(_ extra: [String]) throws {
        let dir = try TemporaryDirectory()
        let path = try Self.record(dir, extra)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let nals = AnnexB.nalUnitRanges(in: bytes)
        let types = nals.map { bytes[$0.lowerBound] & 0x1F }

        // Each IDR picture is preceded by an SPS and a PPS since the previous picture. A picture
        // may have several slices; its first has first_mb_in_slice = 0, i.e. ue(v) bit "1".
        var sawSPS = false, sawPPS = false
        var idrCount = 0
        for (range, t) in zip(nals, types) {
            let firstSliceOfPicture = (t == 1 || t == 5) && bytes[range.lowerBound + 1] & 0x80 != 0
            switch t {
            case 7: sawSPS = true
            case 8: sawPPS = true
            case 5 where firstSliceOfPicture:
                #expect(sawSPS && sawPPS, "an IDR without SPS/PPS before it")
                idrCount += 1
                sawSPS = false; sawPPS = false
            case 1 where firstSliceOfPicture: sawSPS = false; sawPPS = false
            default: break
            }
        }
        #expect(idrCount == 4)

        // Cut the file where each keyframe's SPS starts: what follows must decode with no error.
        let spsStarts = zip(nals, types).filter { $0.1 == 7 }.map { $0.0.lowerBound - 4 }
        #expect(spsStarts.count == 4)
        for (index, start) in spsStarts.enumerated() {
            #expect(Array(bytes[start..<start + 4]) == [0, 0, 0, 1])
            let cut = dir.path("cut-\(index).h264")
            try Data(bytes[start...]).write(to: URL(fileURLWithPath: cut))
            let decode = try Tools.run("ffmpeg", ["-v", "error", "-i", cut, "-f", "null", "-"])
            #expect(decode.status == 0 && decode.stderr.isEmpty, "cut at IDR \(index): \(decode.stderr)")
            #expect(try Tools.frameMD5s(cut).count == 60 - 15 * index)
        }
    }

    @Test func inspectCountsWhatFFprobeCounts() throws {
        let dir = try TemporaryDirectory()
        let path = try Self.record(dir, ["--bframes", "2"])
        let r = try Tools.vtrecord(["inspect", "--json", path])
        #expect(r.status == 0, "\(r.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any])

        let frames = try Tools.ffprobe(path, ["-show_entries", "frame=pict_type,key_frame"])
        let list = try #require(frames["frames"] as? [[String: Any]])
        #expect(report["frames"] as? Int == list.count)
        #expect(report["idr_frames"] as? Int == list.filter { $0["key_frame"] as? Int == 1 }.count)
        let types = report["frame_types"] as? [String: Int] ?? [:]
        for kind in ["I", "P", "B"] {
            #expect(types[kind, default: 0] == list.filter { $0["pict_type"] as? String == kind }.count,
                    "\(kind) frames")
        }
        #expect(report["gop_lengths"] as? [Int] == [15, 15, 15, 15])
        #expect(report["every_idr_has_parameter_sets"] as? Bool == true)

        let streams = try Tools.ffprobe(path, ["-show_entries", "stream=width,height,profile,level"])
        let stream = try #require((streams["streams"] as? [[String: Any]])?.first)
        let sps = try #require(report["sps"] as? [String: Any])
        #expect(sps["width"] as? Int == stream["width"] as? Int)
        #expect(sps["height"] as? Int == stream["height"] as? Int)
        #expect(sps["profile"] as? String == stream["profile"] as? String)
        #expect(sps["level_idc"] as? Int == stream["level"] as? Int)
    }

    @Test func inspectRefusesWhatIsNotH264() throws {
        let dir = try TemporaryDirectory()
        let junk = dir.path("junk.h264")
        try Data([0, 0, 1, 0x67, 0xFF]).write(to: URL(fileURLWithPath: junk))
        let r = try Tools.vtrecord(["inspect", junk])
        #expect(r.status == 2, "\(r.stderr)")
        #expect(!r.stderr.isEmpty)
    }
}
