import Foundation
import Testing
import VTCore
import VTOutput
import VTTestSupport

#if canImport(Glibc)
import Glibc
#endif

@Suite struct MatroskaWriterTests {
    /// One EBML element as a test reads it back: ID (marker bits included), where its data
    /// starts, and its size (nil when unknown).
    struct Element {
        var id: UInt32
        var start: Int
        var dataStart: Int
        var size: Int?
        var end: Int { size.map { dataStart + $0 } ?? Int.max }
    }

    /// The elements laid end to end in `bytes[range]`.
    static func elements(_ bytes: [UInt8], in range: Range<Int>) -> [Element] {
        var found: [Element] = []
        var at = range.lowerBound
        while at < range.upperBound {
            let start = at
            let idLength = bytes[at].leadingZeroBitCount + 1
            var id: UInt32 = 0
            for byte in bytes[at..<(at + idLength)] { id = id << 8 | UInt32(byte) }
            at += idLength
            let sizeLength = bytes[at].leadingZeroBitCount + 1
            var size = UInt64(bytes[at] & (0xFF >> sizeLength))
            var allOnes = size == UInt64(0xFF >> sizeLength)
            for byte in bytes[(at + 1)..<(at + sizeLength)] {
                size = size << 8 | UInt64(byte)
                allOnes = allOnes && byte == 0xFF
            }
            at += sizeLength
            let element = Element(id: id, start: start, dataStart: at, size: allOnes ? nil : Int(size))
            found.append(element)
            guard let known = element.size else { break }
            at += known
        }
        return found
    }

    static func unsigned(_ bytes: [UInt8], _ element: Element) -> UInt64 {
        bytes[element.dataStart..<element.end].reduce(0) { $0 << 8 | UInt64($1) }
    }

    static func run(_ arguments: [String]) throws -> ChildProcess.Result {
        try ChildProcess.run(arguments, environment: ProcessInfo.processInfo.environment)
    }

    static func writer(_ path: String, fragmentDuration: Double = 1) throws -> MatroskaWriter {
        try MatroskaWriter(path: path, overwrite: false,
                           options: .init(frameRate: MP4WriterTests.rate, fragmentDuration: fragmentDuration,
                                          metadata: ContainerMetadata(encoder: "vtrecord test", source: "unit")))
    }

    static func clusters(_ bytes: [UInt8]) throws -> (segment: Element, clusters: [Element], children: [Element]) {
        let top = elements(bytes, in: 0..<bytes.count)
        let segment = try #require(top.first { $0.id == 0x1853_8067 })
        let children = elements(bytes, in: segment.dataStart..<min(segment.end, bytes.count))
        return (segment, children.filter { $0.id == 0x1F43_B675 }, children)
    }

    /// Block times, in 10 µs units, of every SimpleBlock of a cluster, in file order.
    static func blockTimes(_ bytes: [UInt8], _ cluster: Element) -> (base: Int64, relative: [Int16], keys: [Bool]) {
        let inside = elements(bytes, in: cluster.dataStart..<cluster.end)
        let base = Int64(unsigned(bytes, inside.first { $0.id == 0xE7 }!))
        var relative: [Int16] = []
        var keys: [Bool] = []
        for block in inside where block.id == 0xA3 {
            relative.append(Int16(bitPattern: UInt16(bytes[block.dataStart + 1]) << 8 | UInt16(bytes[block.dataStart + 2])))
            keys.append(bytes[block.dataStart + 3] & 0x80 != 0)
        }
        return (base, relative, keys)
    }

    @Test func whileRecordingTheSegmentIsOpenAndEachClusterWhole() throws {
        let path = AnnexBWriterTests.temporaryPath("live.mkv")
        defer { unlink(path) }
        let writer = try Self.writer(path)
        try writer.writeHeader(MP4WriterTests.format)
        let frames = MP4WriterTests.frames(60)
        for frame in frames { try writer.write(frame) }
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let (segment, clusters, _) = try Self.clusters(bytes)
        #expect(segment.size == nil, "a live Segment has an unknown size")
        #expect(clusters.allSatisfy { $0.end <= bytes.count }, "every cluster in the file is whole")
        // The last GOP is still open: its frames are not in the file yet.
        var times: [Int64] = []
        for cluster in clusters {
            let blocks = Self.blockTimes(bytes, cluster)
            times += blocks.relative.map { blocks.base + Int64($0) }
        }
        #expect(times.count < 60 && times.count >= 48, "\(times.count) frames written")
        writer.abandon()
        let probe = try Self.run(["ffprobe", "-v", "error", "-show_entries", "packet=pts_time", "-of", "csv=p=0", path])
        #expect(probe.status == 0, "\(probe.standardError)")
        #expect(probe.standardOutputText.split(separator: "\n").count == 60, "an abandoned file keeps the open cluster too")
    }

    @Test func aCleanEndFillsInSizeCuesAndDuration() throws {
        let path = AnnexBWriterTests.temporaryPath("done.mkv")
        defer { unlink(path) }
        let writer = try Self.writer(path)
        try writer.writeHeader(MP4WriterTests.format)
        let frames = MP4WriterTests.frames(60, keyInterval: 12)
        for frame in frames { try writer.write(frame) }
        try writer.finish(keepEmpty: false)
        #expect(writer.finalized == true)
        #expect(writer.statistics.frames == 60 && writer.statistics.keyFrames == 5)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let (segment, clusters, children) = try Self.clusters(bytes)
        #expect(segment.end == bytes.count, "the Segment's size covers the file")
        let ids = children.map(\.id)
        #expect(ids.contains(0x1C53_BB6B), "Cues")
        #expect(ids.indices.filter { ids[$0] == 0xEC } == [1], "only the SeekHead's padding is Void: \(ids)")

        // A 12-frame GOP lasts 400 ms, more than a cluster's 16-bit block times reach at 10 µs
        // units (327 ms): each GOP takes two clusters, the first starting at its keyframe.
        var times: [Int64] = []
        var keyClusters = 0
        for cluster in clusters {
            let blocks = Self.blockTimes(bytes, cluster)
            times += blocks.relative.map { blocks.base + Int64($0) }
            if blocks.keys.first == true { keyClusters += 1 }
            #expect(blocks.keys.dropFirst().allSatisfy { !$0 }, "a keyframe starts its cluster")
        }
        #expect(keyClusters == 5 && clusters.count == 10, "\(clusters.count) clusters")
        // Every frame at n/30 s, to the nearest 10 µs.
        #expect(times.sorted() == (0..<60).map { Int64((Double($0) * 100_000 / 30).rounded()) })

        let probe = try Self.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path])
        #expect(probe.standardOutputText.trimmingCharacters(in: .newlines) == "2.000000", "\(probe.transcript)")
        let info = try Self.run(["mkvinfo", "--all", path])
        #expect(info.status == 0, "\(info.standardOutputText.suffix(400))")
        #expect(info.standardOutputText.components(separatedBy: "Cue point").count - 1 == 5, "a cue point per keyframe")
    }

    @Test func aClusterLastsNoLongerThanAsked() throws {
        let path = AnnexBWriterTests.temporaryPath("short.mkv")
        defer { unlink(path) }
        let writer = try Self.writer(path, fragmentDuration: 0.1)
        try writer.writeHeader(MP4WriterTests.format)
        for frame in MP4WriterTests.frames(60, keyInterval: 60, bFrames: false) { try writer.write(frame) }
        try writer.finish(keepEmpty: false)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let (_, clusters, _) = try Self.clusters(bytes)
        // 0.1 s at 30 fps: three frames a cluster.
        #expect(clusters.count == 20, "\(clusters.count) clusters")
        for cluster in clusters { #expect(Self.blockTimes(bytes, cluster).relative.count == 3) }
    }

    @Test func anEmptyRecordingLeavesNoFile() throws {
        let path = AnnexBWriterTests.temporaryPath("empty.mkv")
        let writer = try Self.writer(path)
        try writer.writeHeader(MP4WriterTests.format)
        try writer.finish(keepEmpty: false)
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}
