import Foundation
import Testing
import VTCore
import VTH264
import VTOutput

#if canImport(Glibc)
import Glibc
#endif

/// The writer on its own: byte layout, refusals, and what a failed write leaves behind.
@Suite struct AnnexBWriterTests {
    // Made-up NAL units: only their headers and framing matter to the writer.
    static let sps: [UInt8] = [0x67, 0x64, 0x00, 0x1F, 0xAC]
    static let pps: [UInt8] = [0x68, 0xEE, 0x3C, 0x80]
    static let format = VideoFormatDescription(width: 64, height: 64, sequenceParameterSets: [sps],
                                               pictureParameterSets: [pps])
    static let idrSlice: [UInt8] = [0x65, 0x88, 0x84, 0x00, 0x33]
    static let sei: [UInt8] = [0x06, 0x05, 0x01, 0xAA, 0x80]
    static let pSlice: [UInt8] = [0x41, 0x9A, 0x02]
    static let startCode: [UInt8] = [0, 0, 0, 1]

    static func avcc(_ units: [[UInt8]], lengthSize: Int = 4) -> [UInt8] {
        units.flatMap { unit -> [UInt8] in
            let length = (0..<lengthSize).reversed().map { UInt8(truncatingIfNeeded: unit.count >> ($0 * 8)) }
            return length + unit
        }
    }

    static func frame(_ units: [[UInt8]], key: Bool, index: Int64 = 0) -> EncodedFrame {
        let time = MediaTime(value: index, timescale: 30)
        return EncodedFrame(data: avcc(units), pts: time, dts: time, isKeyFrame: key, token: FrameToken(UInt64(index)))
    }

    static func temporaryPath(_ name: String) -> String {
        FileManager.default.temporaryDirectory
            .appendingPathComponent("vtoutput-\(UUID().uuidString)-\(name)").path
    }

    static func contents(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    static func nalUnits(_ bytes: [UInt8]) -> [[UInt8]] {
        AnnexB.nalUnitRanges(in: bytes).map { Array(bytes[$0]) }
    }

    @Test func keyframesCarryParameterSetsAndEveryNALGetsAStartCode() throws {
        let path = Self.temporaryPath("layout.h264")
        defer { unlink(path) }
        let writer = try AnnexBWriter(path: path, overwrite: false)
        try writer.write(Self.frame([Self.sei, Self.idrSlice], key: true, index: 0), format: Self.format)
        try writer.write(Self.frame([Self.pSlice], key: false, index: 1), format: Self.format)
        try writer.write(Self.frame([Self.idrSlice], key: true, index: 2), format: Self.format)
        try writer.finish(keepEmpty: true)

        let expected = [Self.sps, Self.pps, Self.sei, Self.idrSlice, Self.pSlice, Self.sps, Self.pps, Self.idrSlice]
            .flatMap { Self.startCode + $0 }
        let bytes = try Self.contents(path)
        #expect(bytes == expected)
        #expect(writer.statistics.bytes == Int64(expected.count))
        #expect(writer.statistics.frames == 3)
        #expect(writer.statistics.keyFrames == 2)
    }

    @Test func newParameterSetsAreWrittenFromTheNextKeyframe() throws {
        let path = Self.temporaryPath("change.h264")
        defer { unlink(path) }
        let changedSPS: [UInt8] = [0x67, 0x4D, 0x00, 0x28, 0xE9]
        var changed = Self.format
        changed.sequenceParameterSets = [changedSPS]
        let writer = try AnnexBWriter(path: path, overwrite: false)
        try writer.write(Self.frame([Self.idrSlice], key: true, index: 0), format: Self.format)
        try writer.write(Self.frame([Self.idrSlice], key: true, index: 1), format: changed)
        try writer.finish(keepEmpty: true)
        #expect(Self.nalUnits(try Self.contents(path))
            == [Self.sps, Self.pps, Self.idrSlice, changedSPS, Self.pps, Self.idrSlice])
    }

    @Test func twoByteLengthPrefixesAreHonoured() throws {
        let path = Self.temporaryPath("short.h264")
        defer { unlink(path) }
        var format = Self.format
        format.nalUnitLengthSize = 2
        let writer = try AnnexBWriter(path: path, overwrite: false)
        let frame = EncodedFrame(data: Self.avcc([Self.idrSlice], lengthSize: 2), pts: .zero, dts: .zero,
                                 isKeyFrame: true, token: FrameToken(0))
        try writer.write(frame, format: format)
        try writer.finish(keepEmpty: true)
        #expect(Self.nalUnits(try Self.contents(path)) == [Self.sps, Self.pps, Self.idrSlice])
    }

    @Test func aMalformedAccessUnitIsRefusedAndNothingIsWritten() throws {
        let path = Self.temporaryPath("bad.h264")
        defer { unlink(path) }
        let writer = try AnnexBWriter(path: path, overwrite: false)
        // The length prefix runs past the end of the data.
        let bad = EncodedFrame(data: [0, 0, 0, 9, 0x65, 0x88], pts: .zero, dts: .zero, isKeyFrame: true, token: FrameToken(0))
        #expect(throws: OutputError.self) { try writer.write(bad, format: Self.format) }
        try writer.finish(keepEmpty: true)
        #expect(try Self.contents(path).isEmpty)
        #expect(writer.statistics.frames == 0)
    }

    /// A raw stream and MPEG-TS carry H.264 only: a Motion-JPEG track (`--encoder copy`) is
    /// refused at its header, before anything is written.
    @Test func aMotionJPEGTrackIsRefused() throws {
        let raw = Self.temporaryPath("jpeg.h264")
        let ts = Self.temporaryPath("jpeg.ts")
        defer { unlink(raw); unlink(ts) }
        let writers: [any MediaOutput] = [try AnnexBWriter(path: raw, overwrite: false),
                                          try TransportStreamWriter(path: ts, overwrite: false, options: .init(frameRate: .fps30, metadata: ContainerMetadata(encoder: "test")))]
        for writer in writers {
            #expect(throws: OutputError.self) { try writer.writeHeader(.mjpeg(width: 64, height: 64)) }
            writer.abandon()
        }
        #expect(!FileManager.default.fileExists(atPath: raw) && !FileManager.default.fileExists(atPath: ts))
    }

    @Test func anExistingFileIsKeptUnlessOverwriteIsAsked() throws {
        let path = Self.temporaryPath("exists.h264")
        defer { unlink(path) }
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: OutputError.exists(path: path)) { try AnnexBWriter(path: path, overwrite: false) }
        #expect(try Self.contents(path) == Array("keep me".utf8))

        let writer = try AnnexBWriter(path: path, overwrite: true)
        try writer.write(Self.frame([Self.idrSlice], key: true), format: Self.format)
        try writer.finish(keepEmpty: true)
        #expect(Self.nalUnits(try Self.contents(path)) == [Self.sps, Self.pps, Self.idrSlice])
    }

    @Test func directoriesAndMissingDirectoriesAreNamed() throws {
        let directory = FileManager.default.temporaryDirectory.path
        #expect(throws: OutputError.isDirectory(path: directory)) {
            try AnnexBWriter(path: directory, overwrite: true)
        }
        let missing = Self.temporaryPath("no-such-dir") + "/out.h264"
        do {
            _ = try AnnexBWriter(path: missing, overwrite: false)
            Issue.record("opened \(missing)")
        } catch {
            #expect(error == .cannotOpen(path: missing, errno: ENOENT))
            #expect(error.description.contains("directory does not exist"))
            #expect(error.exitStatus == .output)
        }
    }

    @Test func aFullDeviceIsReportedAsDiskFull() throws {
        let writer = try AnnexBWriter(path: "/dev/full", overwrite: false)
        #expect(throws: OutputError.diskFull(path: "/dev/full")) {
            try writer.write(Self.frame([Self.idrSlice], key: true), format: Self.format)
        }
        #expect(writer.statistics.frames == 0)
        #expect(writer.statistics.bytes == 0)
    }

    @Test func aNamedPipeIsWrittenAsItIs() async throws {
        let path = Self.temporaryPath("fifo")
        try #require(mkfifo(path, 0o600) == 0)
        defer { unlink(path) }
        let reader = Task.detached { () -> [UInt8] in
            guard let handle = FileHandle(forReadingAtPath: path) else { return [] }
            return [UInt8](handle.readDataToEndOfFile())
        }
        // Opening a FIFO for writing waits for a reader: the task above.
        let writer = try AnnexBWriter(path: path, overwrite: false)
        try writer.write(Self.frame([Self.idrSlice], key: true), format: Self.format)
        try writer.finish(keepEmpty: true)
        #expect(Self.nalUnits(await reader.value) == [Self.sps, Self.pps, Self.idrSlice])
    }

    @Test func aReaderThatWentAwayIsReportedInsteadOfKillingTheWriter() throws {
        signal(SIGPIPE, SIG_IGN)
        let path = Self.temporaryPath("fifo-closed")
        try #require(mkfifo(path, 0o600) == 0)
        defer { unlink(path) }
        // A non-blocking read end lets the writer's open return; closing it leaves no reader.
        let readEnd = open(path, O_RDONLY | O_NONBLOCK)
        try #require(readEnd >= 0)
        let writer = try AnnexBWriter(path: path, overwrite: false)
        close(readEnd)
        #expect(throws: OutputError.readerClosed(path: path)) {
            try writer.write(Self.frame([Self.idrSlice], key: true), format: Self.format)
        }
    }

    /// No frame, no file: only a file the writer made itself and left empty goes.
    @Test func anUnusedFileIsRemovedOnlyWhenTheWriterMadeIt() throws {
        let empty = Self.temporaryPath("unused.h264")
        let unused = try AnnexBWriter(path: empty, overwrite: false)
        unused.abandon()
        #expect(!FileManager.default.fileExists(atPath: empty))

        let written = Self.temporaryPath("written.h264")
        defer { unlink(written) }
        let writer = try AnnexBWriter(path: written, overwrite: false)
        try writer.write(Self.frame([Self.idrSlice], key: true), format: Self.format)
        try writer.finish(keepEmpty: false)
        #expect(try Self.contents(written).count > 0)

        // An existing file replaced with --overwrite was the user's: it stays, empty.
        let replaced = try AnnexBWriter(path: written, overwrite: true)
        try replaced.finish(keepEmpty: false)
        #expect(FileManager.default.fileExists(atPath: written))

        // Nor is a named pipe (or device) it was given. A pipe of the test's own, so a writer
        // that got this wrong could never delete anything but that.
        let fifo = Self.temporaryPath("fifo")
        try #require(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        let readEnd = open(fifo, O_RDONLY | O_NONBLOCK)
        try #require(readEnd >= 0)
        defer { close(readEnd) }
        (try AnnexBWriter(path: fifo, overwrite: false)).abandon()
        #expect(FileManager.default.fileExists(atPath: fifo))
    }
}

extension MediaOutput {
    /// As the recorder writes: the header whenever the parameter sets may have changed, then
    /// the frame.
    func write(_ frame: EncodedFrame, format: VideoFormatDescription) throws(OutputError) {
        try writeHeader(format)
        try write(frame)
    }
}
