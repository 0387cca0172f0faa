import Foundation
import Testing

/// `vtrecord verify`: clean files are clean (frames as ffprobe counts them), and each kind of
/// damage it is shown is found, at its place, with exit status 6.
@Suite struct VerifyTests {
    /// A 320x240 test-pattern recording of 60 frames in GOPs of 15, with B-frames.
    static func record(_ dir: TemporaryDirectory, _ name: String, _ extra: [String] = []) throws -> String {
        let path = dir.path(name)
        let r = try Tools.vtrecord(["--test-pattern", "--size", "320x240", "--frames", "60", "--keyint", "15",
                                    "--bframes", "2", "--quiet", "-o", path] + extra)
        #expect(r.status == 0, "\(r.stderr)")
        return path
    }

    struct Verdict {
        var status: Int32
        var stderr: String
        var document: [String: Any]
        var file: [String: Any] { ((document["files"] as? [[String: Any]]) ?? []).first ?? [:] }
        var problems: [[String: Any]] { (file["problems"] as? [[String: Any]]) ?? [] }
        var kinds: [String] { problems.compactMap { $0["kind"] as? String } }
    }

    static func verify(_ files: [String]) throws -> Verdict {
        let r = try Tools.vtrecord(["verify", "--json"] + files)
        let document = (try? JSONSerialization.jsonObject(with: r.stdout) as? [String: Any]) ?? [:]
        return Verdict(status: r.status, stderr: r.stderr, document: document)
    }

    /// Each access unit of a file as ffprobe finds it: byte offset and size.
    static func packets(_ path: String) throws -> [(pos: Int, size: Int)] {
        let json = try Tools.ffprobe(path, ["-select_streams", "v:0", "-show_entries", "packet=pos,size"])
        return ((json["packets"] as? [[String: Any]]) ?? []).compactMap { packet in
            guard let pos = (packet["pos"] as? String).flatMap(Int.init), let size = (packet["size"] as? String).flatMap(Int.init)
            else { return nil }
            return (pos, size)
        }
    }

    @Test(arguments: ["h264", "mp4", "mkv", "ts"])
    func aCleanRecordingIsClean(_ container: String) throws {
        let dir = try TemporaryDirectory()
        let path = try Self.record(dir, "clean.\(container)")
        let verdict = try Self.verify([path])
        #expect(verdict.status == 0, "\(verdict.stderr) \(verdict.document)")
        #expect(verdict.document["clean"] as? Bool == true)
        #expect(verdict.problems.isEmpty, "\(verdict.problems)")
        let probe = try Tools.ffprobe(path, ["-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames"])
        let counted = ((probe["streams"] as? [[String: Any]])?.first?["nb_read_frames"] as? String).flatMap(Int.init)
        #expect(verdict.file["frames"] as? Int == counted && counted == 60)
        #expect(verdict.file["decoded_frames"] as? Int == 60)
        #expect(verdict.file["keyframes"] as? Int == 4)
        #expect(verdict.file["gop_lengths"] as? [Int] == [15, 15, 15, 15])
        #expect(verdict.file["container"] as? String == container)
        #expect(verdict.file["width"] as? Int == 320 && verdict.file["height"] as? Int == 240)
        if container != "h264" {
            #expect(abs((verdict.file["duration"] as? Double ?? 0) - 2.0) < 0.05, "\(verdict.file)")
        }
        // The text report says so in its first line.
        let text = try Tools.vtrecord(["verify", path])
        #expect(text.status == 0)
        #expect(text.stdoutText.hasPrefix("\(path): clean — \(container), 320x240, 60 frames (60 decoded), 4 keyframes, GOPs of 15 frames"),
                "\(text.stdoutText)")
    }

    /// A raw stream cut in the middle of an access unit: the largest of the last GOP, so that
    /// what is cut off holds coded macroblocks (half of a B-frame of skipped blocks can decode
    /// from the padding as if whole).
    @Test func aFileCutInsideAFrameIsCutShort() throws {
        let dir = try TemporaryDirectory()
        let path = try Self.record(dir, "cut.h264")
        let packets = try Self.packets(path)
        let index = try #require((45..<packets.count).max { packets[$0].size < packets[$1].size })
        let victim = packets[index]
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.prefix(victim.pos + victim.size / 2).write(to: URL(fileURLWithPath: path))
        let verdict = try Self.verify([path])
        #expect(verdict.status == 6, "\(verdict.stderr)")
        #expect(verdict.document["clean"] as? Bool == false)
        #expect(verdict.file["frames"] as? Int == index + 1)
        let cut = verdict.problems.first { $0["kind"] as? String == "cut-short" }
        #expect(cut?["unit"] as? Int == index, "\(verdict.problems)")
        #expect(cut?["offset"] as? Int == victim.pos, "\(verdict.problems)")
    }

    /// A fragmented MP4 cut inside its last fragment: still fragmented, and cut short.
    @Test func anMP4LeftFragmentedAndCutIsBoth() throws {
        let dir = try TemporaryDirectory()
        let path = try Self.record(dir, "frag.mp4", ["--mp4-fragmented"])
        let whole = try Self.verify([path])
        #expect(whole.status == 6)
        #expect(whole.kinds == ["unfinalized"], "\(whole.problems)")
        #expect(whole.file["decoded_frames"] as? Int == 60)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.prefix(bytes.count - 300).write(to: URL(fileURLWithPath: path))
        let cut = try Self.verify([path])
        #expect(cut.status == 6)
        #expect(Set(cut.kinds).isSuperset(of: ["unfinalized", "cut-short"]), "\(cut.problems)")
        #expect((cut.file["frames"] as? Int ?? 0) >= 45, "the fragments before the cut are read")
    }

    /// Bytes flipped inside a slice: the frame is named, with its offset.
    @Test func flippedBytesInASliceAreFoundAtTheirFrame() throws {
        let dir = try TemporaryDirectory()
        let path = try Self.record(dir, "flipped.h264", ["--bframes", "0"])
        let packets = try Self.packets(path)
        let victim = 20
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let middle = packets[victim].pos + packets[victim].size / 2
        for index in middle..<(middle + 16) { bytes[index] ^= 0xA5 }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let verdict = try Self.verify([path])
        #expect(verdict.status == 6, "\(verdict.stderr)")
        let damage = verdict.problems.first { ["concealed", "undecodable"].contains($0["kind"] as? String) }
        #expect(damage?["unit"] as? Int == victim, "\(verdict.problems)")
        #expect(damage?["offset"] as? Int == packets[victim].pos)
    }

    /// A raw stream whose first IDR is gone (its parameter sets kept): the frames before the
    /// next keyframe cannot be decoded.
    @Test func aStartWithoutAKeyframeIsNamed() throws {
        let dir = try TemporaryDirectory()
        let path = try Self.record(dir, "noidr.h264", ["--bframes", "0"])
        let packets = try Self.packets(path)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        // SPS and PPS: the NAL units before the first slice of the first unit.
        var cut = 0
        var index = 0
        while index + 4 < packets[1].pos {
            if bytes[index] == 0, bytes[index + 1] == 0, bytes[index + 2] == 1 {
                let type = bytes[index + 3] & 0x1F
                if type == 5 || type == 1 || type == 6 { cut = index > 0 && bytes[index - 1] == 0 ? index - 1 : index; break }
            }
            index += 1
        }
        #expect(cut > 0)
        try Data(bytes[0..<cut] + bytes[packets[1].pos...]).write(to: URL(fileURLWithPath: path))
        let verdict = try Self.verify([path])
        #expect(verdict.status == 6, "\(verdict.stderr)")
        #expect(verdict.kinds.first == "no-keyframe-at-start", "\(verdict.problems)")
        #expect(verdict.file["frames"] as? Int == 59)
        #expect(verdict.file["decoded_frames"] as? Int == 45)
    }

    /// Several files: each gets its report, and the status is the worst.
    @Test func severalFilesEachGetTheirReport() throws {
        let dir = try TemporaryDirectory()
        let clean = try Self.record(dir, "a.mkv")
        let fragmented = try Self.record(dir, "b.mp4", ["--mp4-fragmented"])
        let r = try Tools.vtrecord(["verify", clean, fragmented])
        #expect(r.status == 6)
        let lines = r.stdoutText.split(separator: "\n")
        #expect(lines.first?.hasPrefix("\(clean): clean") == true, "\(r.stdoutText)")
        #expect(lines.contains { $0.hasPrefix("\(fragmented): DAMAGED") }, "\(r.stdoutText)")
        #expect(lines.contains { $0.contains("unfinalized") })
    }

    /// What is not H.264 video at all: one line naming the file, exit 2; the others are verified.
    @Test(arguments: ["empty", "text", "garbage", "audio"])
    func whatIsNotVideoGetsOneLine(_ kind: String) throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("bad-\(kind)")
        switch kind {
        case "empty": try Data().write(to: URL(fileURLWithPath: path))
        case "text": try Data("not a video, just words\n".utf8).write(to: URL(fileURLWithPath: path))
        case "garbage":
            var random = SystemRandomNumberGenerator()
            try Data((0..<4096).map { _ in UInt8.random(in: 0...255, using: &random) }).write(to: URL(fileURLWithPath: path))
        default:
            let r = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=duration=1",
                                             "-f", "wav", "-y", path])
            #expect(r.status == 0)
        }
        let r = try Tools.vtrecord(["verify", path])
        #expect(r.status == 2, "\(r.stderr)")
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("vtrecord: error: \(path)"), "\(r.stderr)")
        let clean = try Self.record(dir, "good.h264")
        let both = try Tools.vtrecord(["verify", path, clean])
        #expect(both.status == 2)
        #expect(both.stdoutText.hasPrefix("\(clean): clean"), "\(both.stdoutText)")
    }
}
