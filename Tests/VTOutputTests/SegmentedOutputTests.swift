import Foundation
import Synchronization
import Testing
import VTCore
import VTOutput

#if canImport(Glibc)
import Glibc
#endif

/// The run of files behind segmenting: names, totals, the ring of --max-files, refusals.
@Suite struct SegmentedOutputTests {
    static let format = AnnexBWriterTests.format

    static func key(_ index: Int64) -> EncodedFrame {
        AnnexBWriterTests.frame([AnnexBWriterTests.idrSlice], key: true, index: index)
    }

    static func delta(_ index: Int64) -> EncodedFrame {
        AnnexBWriterTests.frame([AnnexBWriterTests.pSlice], key: false, index: index)
    }

    /// Raw streams in each file, as the recorder makes them.
    static func segmented(template: OutputTemplate, device: String, preset: String? = nil, overwrite: Bool,
                          maxFiles: Int? = nil, now: @escaping () -> Date = Date.init,
                          warn: @escaping @Sendable (String) -> Void = { _ in }) throws(OutputError) -> SegmentedOutput {
        try SegmentedOutput(template: template, policy: nil, device: device, preset: preset, maxFiles: maxFiles,
                            now: now, warn: warn) { path throws(OutputError) in
            try AnnexBWriter(path: path, overwrite: overwrite)
        }
    }

    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("vtoutput-segments-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func names(_ dir: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
    }

    @Test func eachSegmentIsAFileOfItsOwnStartingWithParameterSets() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let writer = try Self.segmented(template: OutputTemplate(dir.path + "/s-{n:02}.h264"), device: "video0", overwrite: false)
        try writer.write(Self.key(0), format: Self.format)
        try writer.write(Self.delta(1), format: Self.format)
        try writer.startNextSegment()
        try writer.write(Self.key(2), format: Self.format)
        try writer.finish(keepEmpty: true)

        #expect(try Self.names(dir) == ["s-00.h264", "s-01.h264"])
        #expect(writer.paths == [dir.path + "/s-00.h264", dir.path + "/s-01.h264"])
        let second = try AnnexBWriterTests.contents(dir.path + "/s-01.h264")
        #expect(AnnexBWriterTests.nalUnits(second) == [AnnexBWriterTests.sps, AnnexBWriterTests.pps, AnnexBWriterTests.idrSlice])
        let first = try AnnexBWriterTests.contents(dir.path + "/s-00.h264")
        #expect(writer.statistics.frames == 3)
        #expect(writer.statistics.keyFrames == 2)
        #expect(writer.statistics.bytes == Int64(first.count + second.count))
        #expect(writer.segmentBytesWritten == Int64(second.count))
    }

    @Test func aSegmentWithoutFramesIsNotLeftBehind() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let template = try OutputTemplate(dir.path + "/s-{n}.h264")
        let unused = try Self.segmented(template: template, device: "video0", overwrite: false)
        unused.abandon()
        #expect(try Self.names(dir).isEmpty)
        #expect(unused.paths.isEmpty)

        let used = try Self.segmented(template: template, device: "video0", overwrite: false)
        try used.write(Self.key(0), format: Self.format)
        #expect(try Self.names(dir) == ["s-0.h264"])
        // A segment that never got its first frame (the disk filled up) goes; the one before stays.
        try used.startNextSegment()
        used.abandon()
        #expect(try Self.names(dir) == ["s-0.h264"])
        #expect(used.paths == [dir.path + "/s-0.h264"])
    }

    @Test func eachFileTakesTheTimeItStarts() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let times = [Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 61)]
        let clock = FixedTimes(times)
        let writer = try Self.segmented(template: OutputTemplate(dir.path + "/%H%M%S-{device}-{preset}-{n}.h264"),
                                       device: "cam", overwrite: false, now: clock.next)
        try writer.startNextSegment()
        try writer.finish(keepEmpty: true)
        let expected = try times.enumerated().map { n, date in
            try OutputTemplate("%H%M%S").expand(.init(date: date, device: "")) + "-cam-default-\(n).h264"
        }
        #expect(expected[0] != expected[1])
        #expect(try Self.names(dir) == expected.sorted())
    }

    @Test func maxFilesKeepsTheNewestAndNeverTheCurrent() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let writer = try Self.segmented(template: OutputTemplate(dir.path + "/{n}.h264"), device: "d", overwrite: false,
                                       maxFiles: 2)
        try writer.write(Self.key(0), format: Self.format)
        try writer.startNextSegment()
        try writer.waitForFinishedFiles()
        #expect(try Self.names(dir) == ["0.h264", "1.h264"])
        try writer.startNextSegment()
        try writer.waitForFinishedFiles()
        #expect(try Self.names(dir) == ["1.h264", "2.h264"])
        // Gone already: nothing to say about it.
        unlink(dir.path + "/2.h264")
        try writer.startNextSegment()
        try writer.startNextSegment()
        try writer.waitForFinishedFiles()
        #expect(try Self.names(dir) == ["3.h264", "4.h264"])
        #expect(writer.paths.count == 5)
        try writer.finish(keepEmpty: true)

        let one = try Self.segmented(template: OutputTemplate(dir.path + "/one-{n}.h264"), device: "d", overwrite: false,
                                    maxFiles: 1)
        try one.startNextSegment()
        try one.waitForFinishedFiles()
        #expect(try Self.names(dir).filter { $0.hasPrefix("one-") } == ["one-1.h264"])
    }

    @Test func aFileThatCannotBeDeletedIsAWarning() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let warnings = Warnings()
        let writer = try Self.segmented(template: OutputTemplate(dir.path + "/{n}.h264"), device: "d", overwrite: false,
                                       maxFiles: 1, warn: warnings.add)
        // unlink(2) refuses a directory (EISDIR), even to root.
        unlink(dir.path + "/0.h264")
        try FileManager.default.createDirectory(atPath: dir.path + "/0.h264/inside", withIntermediateDirectories: true)
        try writer.startNextSegment()
        try writer.write(Self.key(0), format: Self.format)
        try writer.finish(keepEmpty: true)
        #expect(warnings.lines.count == 1)
        #expect(warnings.lines.first?.contains(dir.path + "/0.h264") == true, "\(warnings.lines)")
        #expect(try Self.names(dir) == ["0.h264", "1.h264"])
    }

    @Test func anExistingSegmentIsRefusedUnlessOverwriting() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(FileManager.default.createFile(atPath: dir.path + "/1.h264", contents: Data("old".utf8)))
        let writer = try Self.segmented(template: OutputTemplate(dir.path + "/{n}.h264"), device: "d", overwrite: false)
        try writer.write(Self.key(0), format: Self.format)
        #expect(throws: OutputError.exists(path: dir.path + "/1.h264")) { try writer.startNextSegment() }
        // The refused change leaves the totals of what was written.
        #expect(writer.statistics.frames == 1)
        #expect(writer.paths == [dir.path + "/0.h264"])

        let replacing = try Self.segmented(template: OutputTemplate(dir.path + "/{n}.h264"), device: "d", overwrite: true)
        try replacing.startNextSegment()
        try replacing.finish(keepEmpty: true)
        #expect(try AnnexBWriterTests.contents(dir.path + "/1.h264").isEmpty)
    }
}

/// Gives out the given times, one per call.
private final class FixedTimes {
    private var times: [Date]
    init(_ times: [Date]) { self.times = times }
    func next() -> Date { times.removeFirst() }
}

/// Collects the writer's warnings, which come from the thread that deletes files.
private final class Warnings: Sendable {
    private let collected = Mutex<[String]>([])
    var lines: [String] { collected.withLock { $0 } }
    func add(_ line: String) { collected.withLock { $0.append(line) } }
}
