import Foundation
import Testing
import VTCore
@testable import VTCapture

/// Y4M files as ffmpeg writes them, read back and compared with ffmpeg's own decoding of the
/// same file.
struct Y4MSourceFFmpegTests {
    /// Makes `frames` frames of ffmpeg's testsrc2 as a Y4M file.
    private func makeY4M(_ dir: TemporaryDirectory, width: Int, height: Int, rate: String = "30",
                         frames: Int, pixelFormat: String = "yuv420p", extra: [String] = []) throws -> String {
        let path = dir.path("input-\(width)x\(height)-\(pixelFormat).y4m")
        // testsrc2 only makes even sizes; scaling gives the odd ones (and tags them with a
        // sample aspect and a colour range).
        let source = "testsrc2=size=\(width + width % 2)x\(height + height % 2):rate=\(rate)"
        let scale = width % 2 == 0 && height % 2 == 0 ? [] : ["-vf", "scale=\(width):\(height)"]
        try ffmpeg(["-f", "lavfi", "-i", source] + scale
                   + ["-frames:v", "\(frames)", "-pix_fmt", pixelFormat] + extra
                   + ["-f", "yuv4mpegpipe", "-y", path])
        return path
    }

    private func readAll(_ source: Y4MSource) throws -> [[UInt8]] {
        var pictures: [[UInt8]] = []
        while let frame = try source.nextFrame() {
            #expect(frame.sequence == UInt64(pictures.count))
            pictures.append(pictureBytes(frame.buffer!))
            _ = consume frame
        }
        return pictures
    }

    @Test(arguments: [(176, 144), (1366, 768), (33, 17), (64, 2)])
    func framesMatchFFmpegByteForByte(width: Int, height: Int) throws {
        let dir = try TemporaryDirectory()
        let path = try makeY4M(dir, width: width, height: height, frames: 5)
        // ffmpeg writes yuv420p as C420jpeg, with no colour range tag.
        let header = try String(contentsOfFile: path, encoding: .isoLatin1).prefix(while: { $0 != "\n" })
        #expect(header.contains(" C420jpeg"))

        let source = try Y4MSource(path: path)
        if width % 2 == 0 && height % 2 == 0 {
            #expect(source.format == CaptureFormat(pixelFormat: .i420, width: width, height: height,
                                                   frameRate: FrameRate(numerator: 30, denominator: 1)!,
                                                   sampleAspectRatio: SampleAspectRatio(width: 1, height: 1), fullRange: nil, isLive: false))
        } else {
            #expect(header.contains(" XCOLORRANGE=LIMITED"))
            #expect(source.format.fullRange == false)
            #expect(source.format.width == width && source.format.height == height)
        }
        let ours = try readAll(source)
        let size = PixelFormat.i420.imageSize(width: width, height: height)
        let theirs = try ffmpeg(["-i", path, "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"]).pictures(ofSize: size)
        #expect(ours.count == 5)
        #expect(ours == theirs)
        #expect(source.statistics == CaptureStatistics())
    }

    @Test func ntscRateGivesExactTimestamps() throws {
        let dir = try TemporaryDirectory()
        let path = try makeY4M(dir, width: 64, height: 48, rate: "30000/1001", frames: 4)
        let source = try Y4MSource(path: path)
        #expect(source.format.frameRate == FrameRate(numerator: 30000, denominator: 1001))
        var times: [MediaTime] = []
        while let frame = try source.nextFrame() {
            times.append(frame.pts)
            _ = consume frame
        }
        #expect(times == (0..<4).map { MediaTime(value: Int64($0) * 1001, timescale: 30000) })
        #expect(times[3].seconds == 3003.0 / 30000.0)
    }

    @Test func monoBecomesI420WithNeutralChroma() throws {
        let dir = try TemporaryDirectory()
        let path = try makeY4M(dir, width: 96, height: 64, frames: 3, pixelFormat: "gray")
        let source = try Y4MSource(path: path)
        // ffmpeg marks gray as full range.
        #expect(source.format.fullRange == true)
        #expect(source.format.pixelFormat == .i420)
        let luma = try ffmpeg(["-i", path, "-f", "rawvideo", "-pix_fmt", "gray", "-"]).pictures(ofSize: 96 * 64)
        var count = 0
        while let frame = try source.nextFrame() {
            let bytes = pictureBytes(frame.buffer!)
            #expect(Array(bytes[..<(96 * 64)]) == luma[count])
            #expect(bytes[(96 * 64)...].allSatisfy { $0 == 128 })
            _ = consume frame
            count += 1
        }
        #expect(count == 3)
    }

    @Test(arguments: [
        ("yuv422p", [String](), "C422 is not supported: convert to 4:2:0 (ffmpeg -pix_fmt yuv420p)"),
        ("yuv444p", [], "C444 is not supported: convert to 4:2:0 (ffmpeg -pix_fmt yuv420p)"),
        ("yuv420p10le", ["-strict", "-1"],
         "C420p10 (10-bit) is not supported: convert to 8-bit 4:2:0 (ffmpeg -pix_fmt yuv420p)"),
        ("gray16le", ["-strict", "-1"],
         "Cmono16 (16-bit) is not supported: convert to 8-bit 4:2:0 (ffmpeg -pix_fmt yuv420p)"),
    ])
    func refusesOtherColourSpaces(pixelFormat: String, extra: [String], message: String) throws {
        let dir = try TemporaryDirectory()
        let path = try makeY4M(dir, width: 64, height: 48, frames: 1, pixelFormat: pixelFormat, extra: extra)
        let error = #expect(throws: CaptureError.self) { try Y4MSource(path: path) }
        #expect(error?.description == "\(path): Y4M colour space \(message)")
        #expect(error?.exitStatus == .usage)
    }
}

/// Hand-written streams: header variants, damage, and the end of the input.
struct Y4MSourceStreamTests {
    /// A picture whose every byte depends on the frame and the position, so a shift by one
    /// byte anywhere shows.
    static func picture(_ frame: Int, size: Int) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 251 &+ frame &* 13) }
    }

    static func stream(header: String, size: Int, frames: Int) -> Data {
        var data = Data("\(header)\n".utf8)
        for n in 0..<frames {
            data.append(contentsOf: Array("FRAME\n".utf8))
            data.append(contentsOf: picture(n, size: size))
        }
        return data
    }

    private func write(_ data: Data, _ dir: TemporaryDirectory) throws -> String {
        let path = dir.path("input.y4m")
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test(arguments: [
        "YUV4MPEG2 W33 H17 F25:1 Ip A0:0 C420jpeg",
        "YUV4MPEG2 W33 H17 F25:1 C420paldv",
        "YUV4MPEG2 W33 H17 F25:1 C420mpeg2 XYSCSS=420MPEG2",
        "YUV4MPEG2 W33 H17 F25:1 C420",
        "YUV4MPEG2 W33 H17 F25:1",
        "YUV4MPEG2 H17 W33 I? F25:1 Zfuture-tag",
    ])
    func acceptsEveryName420GoesBy(header: String) throws {
        let dir = try TemporaryDirectory()
        let size = 33 * 17 + 2 * 17 * 9
        let path = try write(Self.stream(header: header, size: size, frames: 3), dir)
        let source = try Y4MSource(path: path)
        #expect(source.format.width == 33 && source.format.height == 17)
        #expect(source.format.sampleAspectRatio == nil)
        #expect(source.format.fullRange == nil)
        for n in 0..<3 {
            let frame = try requireFrame(try source.nextFrame())
            #expect(pictureBytes(frame.buffer!) == Self.picture(n, size: size))
            #expect(frame.buffer!.planes.map(\.rowBytes) == [33, 17, 17])
            #expect(frame.buffer!.planes.map(\.rows) == [17, 9, 9])
            _ = consume frame
        }
        #expect(try noFrame { try source.nextFrame() })
    }

    @Test func readsAspectColourRangeAndFrameParameters() throws {
        let dir = try TemporaryDirectory()
        var data = Data("YUV4MPEG2 W16 H16 F50:1 A16:11 XCOLORRANGE=LIMITED\n".utf8)
        data.append(contentsOf: Array("FRAME Ixyz XFOO=1\n".utf8))
        data.append(contentsOf: Self.picture(0, size: 384))
        let source = try Y4MSource(path: try write(data, dir))
        #expect(source.format.sampleAspectRatio?.width == 16)
        #expect(source.format.sampleAspectRatio?.height == 11)
        #expect(source.format.fullRange == false)
        let frame = try requireFrame(try source.nextFrame())
        #expect(pictureBytes(frame.buffer!) == Self.picture(0, size: 384))
        _ = consume frame
    }

    @Test func warnsAboutInterlacingAndAMissingRate() throws {
        let dir = try TemporaryDirectory()
        let path = try write(Self.stream(header: "YUV4MPEG2 W16 H16 It", size: 384, frames: 1), dir)
        let (logger, messages) = RecordingLogHandler.logger()
        let source = try Y4MSource(path: path, logger: logger)
        #expect(source.format.frameRate == FrameRate(numerator: 25, denominator: 1))
        #expect(messages.all == [
            "warning: \(path): the Y4M header marks the video as interlaced: it is encoded as progressive frames",
            "warning: \(path): the Y4M header gives no frame rate: assuming 25 fps",
        ])
    }

    @Test func truncatedLastFrameIsCountedAndReported() throws {
        let dir = try TemporaryDirectory()
        let size = 64 * 48 * 3 / 2
        var data = Self.stream(header: "YUV4MPEG2 W64 H48 F30:1", size: size, frames: 4)
        data.removeLast(100)
        let (logger, messages) = RecordingLogHandler.logger()
        let path = try write(data, dir)
        let source = try Y4MSource(path: path, logger: logger)
        var count = 0
        while let frame = try source.nextFrame() {
            #expect(pictureBytes(frame.buffer!) == Self.picture(count, size: size))
            _ = consume frame
            count += 1
        }
        #expect(count == 3)
        #expect(source.statistics.truncatedFrames == 1)
        #expect(messages.all == ["warning: \(path): last frame is truncated (\(size - 100) of \(size) bytes): it is not encoded"])
        #expect(try noFrame { try source.nextFrame() })
    }

    @Test(arguments: ["FRA", "FRAME", "FRAME Ip"])
    func streamCutInsideAFrameMarkerIsTruncated(tail: String) throws {
        let dir = try TemporaryDirectory()
        var data = Self.stream(header: "YUV4MPEG2 W16 H16 F30:1", size: 384, frames: 2)
        data.append(contentsOf: Array(tail.utf8))
        let source = try Y4MSource(path: try write(data, dir), logger: RecordingLogHandler.logger().0)
        for _ in 0..<2 { _ = try requireFrame(try source.nextFrame()) }
        #expect(try noFrame { try source.nextFrame() })
        #expect(source.statistics.truncatedFrames == 1)
    }

    @Test func damagedFrameMarkerNamesTheFrame() throws {
        let dir = try TemporaryDirectory()
        let header = "YUV4MPEG2 W16 H16 F30:1"
        var data = Self.stream(header: header, size: 384, frames: 2)
        data.append(contentsOf: Array("FRAMX\n".utf8))
        data.append(contentsOf: Self.picture(2, size: 384))
        let path = try write(data, dir)
        let source = try Y4MSource(path: path)
        for _ in 0..<2 { _ = try requireFrame(try source.nextFrame()) }
        let offset = Int64(header.utf8.count + 1 + 2 * (6 + 384))
        let error = #expect(throws: CaptureError.self) { _ = try source.nextFrame() }
        #expect(error == .malformedFrameMarker(path: path, frame: 2, offset: offset))
        #expect(error?.description == "\(path): frame 2 (byte \(offset)) does not start with a FRAME marker: the stream is damaged or its header gives the wrong size")
    }

    @Test func sizeInTheHeaderLargerThanTheFramesIsCaught() throws {
        let dir = try TemporaryDirectory()
        // Frames written for 16x16 but announced as 16x8: the second marker lands mid-picture.
        let header = "YUV4MPEG2 W16 H8 F30:1"
        let path = try write(Self.stream(header: header, size: 384, frames: 3), dir)
        let source = try Y4MSource(path: path)
        _ = try requireFrame(try source.nextFrame())
        let offset = Int64(header.utf8.count + 1 + 6 + 192)
        #expect(throws: CaptureError.malformedFrameMarker(path: path, frame: 1, offset: offset)) {
            _ = try source.nextFrame()
        }
    }

    @Test(arguments: [
        ("", "malformed Y4M header: the input is empty"),
        ("YUV4MPEG2 W16 H16", "malformed Y4M header: the input ends inside the header line"),
        ("YUV4MPEG2 H16 F30:1\n", "malformed Y4M header: no W (width) tag"),
        ("YUV4MPEG2 W16 F30:1\n", "malformed Y4M header: no H (height) tag"),
        ("YUV4MPEG2 W-4 H16\n", "malformed Y4M header: width \"W-4\" is not a positive number"),
        ("YUV4MPEG2 W16 H99999\n", "malformed Y4M header: height \"H99999\" is larger than 16384"),
        ("YUV4MPEG2 W16 H16 F30\n", "malformed Y4M header: frame rate \"F30\" is not of the form F30:1"),
        ("YUV4MPEG2 W16 H16 F0:1\n", "malformed Y4M header: frame rate \"F0:1\" is out of range"),
        ("YUV4MPEG2 W16 H16 A1:0\n", "malformed Y4M header: sample aspect \"A1:0\" is not positive"),
        ("YUV4MPEG2 W16 H16 Ix\n", "malformed Y4M header: interlacing \"Ix\" is not one of Ip, It, Ib, Im"),
        ("YUV4MPEG2W16 H16\n", "malformed Y4M header: \"YUV4MPEG2\" must be followed by a space"),
    ])
    func damagedHeadersSayWhatIsWrong(text: String, message: String) throws {
        let dir = try TemporaryDirectory()
        let path = try write(Data(text.utf8), dir)
        let error = #expect(throws: CaptureError.self) { try Y4MSource(path: path) }
        #expect(error?.description == "\(path): \(message)")
        #expect(error?.exitStatus == .usage)
    }

    @Test func endlessHeaderLineIsRefused() throws {
        let dir = try TemporaryDirectory()
        let path = try write(Data(("YUV4MPEG2 W16 H16 " + String(repeating: "X", count: 5000) + "\n").utf8), dir)
        let error = #expect(throws: CaptureError.self) { try Y4MSource(path: path) }
        #expect(error?.description == "\(path): malformed Y4M header: the header line has no end within 4096 bytes")
    }

    @Test func somethingElseEntirelyIsNotY4M() throws {
        let dir = try TemporaryDirectory()
        let path = try write(Data([0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70, 0x6d, 0x70, 0x34, 0x32]), dir)
        #expect(throws: CaptureError.notY4M(path: path)) { try Y4MSource(path: path) }
        #expect(CaptureError.notY4M(path: path).description == "\(path) is not a Y4M stream (it does not start with \"YUV4MPEG2\"): convert it with ffmpeg -i \(path) -pix_fmt yuv420p -f yuv4mpegpipe out.y4m")
    }

    @Test func missingFileNamesItAndTheReason() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("absent.y4m")
        let error = #expect(throws: CaptureError.self) { try Y4MSource(path: path) }
        #expect(error == .cannotOpen(path: path, errno: ENOENT))
        #expect(error?.description == "cannot open \(path): No such file or directory")
        #expect(error?.exitStatus == .usage)
    }

    @Test func directoryIsAReadError() throws {
        let dir = try TemporaryDirectory()
        #expect(throws: CaptureError.readFailed(path: dir.url.path, errno: EISDIR)) {
            try Y4MSource(path: dir.url.path)
        }
    }

    @Test func stopEndsTheStream() throws {
        let dir = try TemporaryDirectory()
        let source = try Y4MSource(path: try write(Self.stream(header: "YUV4MPEG2 W16 H16 F30:1", size: 384, frames: 5), dir))
        _ = try requireFrame(try source.nextFrame())
        source.stop()
        #expect(try noFrame { try source.nextFrame() })
        #expect(try noFrame { try source.nextFrame() })
    }
}

/// Reading a Y4M file when the system refuses, reached through the system-call seam.
@Suite struct Y4MReadFaultTests {
    @Test func aFailedReadIsReportedWithThePathAndReason() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("faulty.y4m")
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=30", "-frames:v", "3",
                    "-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", "-y", path])
        // The header comes with the first read; a regular file's pictures are mapped, so the
        // mapping fails too, and the source falls back on neither.
        let faults = SystemCallFaults([.init(call: "read", errno: EIO, after: 1), .init(call: "mmap", errno: EIO)])
        let error = faults.during { () -> CaptureError? in
            do throws(CaptureError) {
                let source = try Y4MSource(path: path)
                while let frame = try source.nextFrame() { _ = consume frame }
                return nil
            } catch {
                return error
            }
        }
        #expect(error == .readFailed(path: path, errno: EIO))
        #expect(error?.description == "cannot read \(path): Input/output error")
    }
}
