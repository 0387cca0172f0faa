import Foundation
import Testing
import VTCore
import VTEncoding
import VTH264
import VTOutput
import VTTestSupport

#if canImport(Glibc)
import Glibc
#endif

@Suite struct MP4WriterTests {
    /// Real parameter sets (the writer reads the SPS for the avcC record).
    static let format = try! VideoFormatDescription(h264ParameterSets: [
        SequenceParameterSet(profileIdc: 100, levelIdc: 30, width: 320, height: 240).nalUnit(),
        PictureParameterSet(entropyCoding: .cabac).nalUnit(),
    ])
    static let rate = FrameRate(numerator: 30, denominator: 1)!

    /// `count` frames at 30 fps coded as x264 codes them with one B-frame between references
    /// (display order 0, 2, 1, 4, 3 …), a keyframe every `keyInterval`, each frame's slice
    /// holding its display number so samples can be told apart.
    static func frames(_ count: Int, keyInterval: Int = 12, bFrames: Bool = true) -> [EncodedFrame] {
        var order: [Int] = []
        for start in stride(from: 0, to: count, by: keyInterval) {
            let end = min(start + keyInterval, count)
            order.append(start)
            guard bFrames else {
                order += (start + 1)..<end
                continue
            }
            for b in stride(from: start + 1, to: end, by: 2) {
                order += b + 1 < end ? [b + 1, b] : [b]
            }
        }
        var times = DecodeTimes(delay: bFrames ? 1 : 0, frameDuration: rate.frameDuration)
        for n in 0..<count { times.arrived(MediaTime(value: Int64(n), timescale: 30)) }
        return order.map { n in
            let slice: [UInt8] = [n % keyInterval == 0 ? 0x65 : 0x41, 0x88, UInt8(n & 0xFF), UInt8(n >> 8)]
            return EncodedFrame(data: AnnexBWriterTests.avcc([slice]), pts: MediaTime(value: Int64(n), timescale: 30),
                                dts: times.next(), isKeyFrame: n % keyInterval == 0, token: FrameToken(UInt64(n)))
        }
    }

    static func writer(_ path: String, fragmentDuration: Double = 1, keepFragmented: Bool = false) throws -> MP4Writer {
        try MP4Writer(path: path, overwrite: false,
                      options: .init(frameRate: rate, timescale: MP4Writer.Options.timescale(for: rate, sourceTimes: false),
                                     fragmentDuration: fragmentDuration, keepFragmented: keepFragmented,
                                     metadata: ContainerMetadata(encoder: "vtrecord test", source: "unit")))
    }

    /// A writer for `path` that has taken the header and `frames`, not yet finished.
    static func written(_ frames: [EncodedFrame], to path: String, fragmentDuration: Double = 1,
                        keepFragmented: Bool = false) throws -> MP4Writer {
        let writer = try Self.writer(path, fragmentDuration: fragmentDuration, keepFragmented: keepFragmented)
        try writer.writeHeader(Self.format)
        for frame in frames { try writer.write(frame) }
        return writer
    }

    static func boxes(_ path: String) throws -> (bytes: [UInt8], top: [Box]) {
        let bytes = try AnnexBWriterTests.contents(path)
        return (bytes, Box.read(bytes[...]))
    }

    @Test func finishedFileIsAPlainMP4ListingEverySample() throws {
        let path = AnnexBWriterTests.temporaryPath("plain.mp4")
        defer { unlink(path) }
        let frames = Self.frames(40)
        let writer = try Self.written(frames, to: path)
        try writer.finish(keepEmpty: false)
        #expect(writer.isFinalized)

        let (bytes, top) = try Self.boxes(path)
        #expect(top.map(\.type) == ["ftyp", "mdat", "moov"])
        let movie = try #require(top.last)
        #expect(movie.find("mvex") == nil, "a finished file announces no fragments")
        let tables = try SampleTables(movie: movie)
        #expect(tables.timescale == 90_000)
        #expect(tables.sizes == frames.map { UInt32($0.data.count) })
        // Keyframes at display 0, 12, 24, 36: their positions in decode order, 1-based.
        let keyPositions = frames.indices.filter { frames[$0].isKeyFrame }.map { UInt32($0 + 1) }
        #expect(tables.sync == keyPositions)
        // Every sample's bytes are where the tables say, inside the one mdat.
        for (frame, offset) in zip(frames, tables.sampleOffsets) {
            #expect(Array(bytes[Int(offset)..<(Int(offset) + frame.data.count)]) == frame.data)
        }
        #expect(tables.sampleOffsets.count == frames.count)
        // Times: decode times one frame (3000 ticks) apart, composition offsets pts − dts, the
        // edit skipping the one-frame decode lead, and 40 frames of presentation.
        let dts = tables.durations.reduce(into: [UInt64(0)]) { $0.append($0.last! + UInt64($1)) }.dropLast()
        for (index, frame) in frames.enumerated() {
            let pts = UInt64(dts[dts.startIndex + index]) + UInt64(tables.offsets[index])
            #expect(pts == UInt64(frame.pts.value * 3000 + 3000), "sample \(index)")
        }
        #expect(tables.editMediaTime == 3000)
        let mvhd = try #require(movie.find("mvhd"))
        #expect(mvhd.field(3) == 40 * 3000, "the movie lasts 40 frames")
    }

    @Test func whileRecordingTheFileIsFragmentedAndPlaysToItsLastFragment() throws {
        let path = AnnexBWriterTests.temporaryPath("fragments.mp4")
        defer { unlink(path) }
        let frames = Self.frames(40)
        let writer = try Self.written(frames, to: path)
        // Not finished: what a crash leaves. Three GOPs are written; the fourth waits.
        let (_, top) = try Self.boxes(path)
        #expect(top.map(\.type) == ["ftyp", "moov", "moof", "mdat", "moof", "mdat", "moof", "mdat"])
        #expect(top[1].find("mvex", "trex") != nil)
        let runs = top.filter { $0.type == "moof" }.compactMap { $0.find("traf", "trun") }
        #expect(runs.map { $0.field(0) } == [12, 12, 12])
        let decodeTimes = top.filter { $0.type == "moof" }.compactMap { $0.find("traf", "tfdt") }
            .map { Box.u64($0.bytes, $0.offset + $0.headerSize + 4) }
        #expect(decodeTimes == [0, 36_000, 72_000])
        writer.abandon()
        let (_, after) = try Self.boxes(path)
        #expect(after.filter { $0.type == "moof" }.count == 4, "abandon writes the waiting frames as a last fragment")
        #expect(!writer.isFinalized)
    }

    @Test func finalizingWritesOnlyTheMovieAndOneBoxHeader() throws {
        let path = AnnexBWriterTests.temporaryPath("inplace.mp4")
        defer { unlink(path) }
        // The last keyframe pushes the third GOP out; the fourth (one frame) waits.
        let writer = try Self.written(Array(Self.frames(48).prefix(37)), to: path)
        let before = try AnnexBWriterTests.contents(path)
        let (_, top) = try Self.boxes(path)
        let moovOffset = try #require(top.first { $0.type == "moov" }).offset
        try writer.finish(keepEmpty: false)
        let after = try AnnexBWriterTests.contents(path)
        #expect(after.count > before.count)
        var changed = (0..<before.count).filter { before[$0] != after[$0] }
        changed = changed.filter { !(moovOffset..<(moovOffset + 16)).contains($0) }
        #expect(changed.isEmpty, "bytes written over outside the first moov's header: \(changed.prefix(8))")
        // What was appended: the last fragment and the movie, nothing else.
        let appended = Box.read(after[before.count...])
        #expect(appended.map(\.type) == ["moof", "mdat", "moov"])
    }

    @Test func aFragmentLastsNoLongerThanAskedWithoutAKeyframe() throws {
        let path = AnnexBWriterTests.temporaryPath("short.mp4")
        defer { unlink(path) }
        let writer = try Self.written(Self.frames(60, keyInterval: 60, bFrames: false), to: path,
                                      fragmentDuration: 0.5, keepFragmented: true)
        try writer.finish(keepEmpty: false)
        #expect(!writer.isFinalized, "kept fragmented")
        let (_, top) = try Self.boxes(path)
        let runs = top.filter { $0.type == "moof" }.compactMap { $0.find("traf", "trun") }
        #expect(runs.map { $0.field(0) } == [15, 15, 15, 15])
        // Only the first sample of the file is a sync sample.
        let flags = runs.map { Box.u32($0.bytes, $0.offset + $0.headerSize + 12 + 8) }
        #expect(flags == [0x0200_0000, 0x0101_0000, 0x0101_0000, 0x0101_0000])
    }

    @Test func anEmptyRecordingLeavesNoFile() throws {
        let path = AnnexBWriterTests.temporaryPath("empty.mp4")
        let writer = try Self.writer(path)
        try writer.writeHeader(Self.format)
        try writer.finish(keepEmpty: false)
        #expect(access(path, F_OK) != 0)
    }

    @Test func timescaleIsExactForTheRate() {
        let timescale = { (n: Int, d: Int) in
            MP4Writer.Options.timescale(for: FrameRate(numerator: n, denominator: d)!, sourceTimes: false)
        }
        #expect(timescale(30, 1) == 90_000)
        #expect(timescale(30000, 1001) == 90_000)
        #expect(timescale(24000, 1001) == 24_000)
        #expect(timescale(7, 1) == 7)
        #expect(MP4Writer.Options.timescale(for: FrameRate(numerator: 24000, denominator: 1001)!, sourceTimes: true) == 90_000)
    }

    @Test func containerIsChosenByExtensionOrOption() throws {
        #expect(try Container.choose(explicit: nil, path: "a.mp4") == .mp4)
        #expect(try Container.choose(explicit: nil, path: "dir.v1/A.M4V") == .mp4)
        #expect(try Container.choose(explicit: nil, path: "a.264") == .h264)
        #expect(try Container.choose(explicit: nil, path: "-") == .h264)
        #expect(try Container.choose(explicit: nil, path: "dir.v1/noext") == .h264)
        #expect(try Container.choose(explicit: .mp4, path: "-") == .mp4)
        #expect(throws: UsageError.self) { try Container.choose(explicit: nil, path: "x.avi") }
    }
}
