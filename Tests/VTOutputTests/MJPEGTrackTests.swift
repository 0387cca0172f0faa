import Foundation
import Testing
import VTCore
import VTOutput
import VTTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A Motion JPEG track (`VideoFormatDescription.mjpeg`), as a camera's own JPEGs are stored
/// without re-encoding: Matroska names it V_MJPEG, an MP4 `mp4v` with JPEG's object type.
/// ffprobe reads each as a 320x240 mjpeg track of every picture, ffmpeg decodes it without a
/// word, and `-c copy` gives back the JPEGs byte for byte.
@Suite struct MJPEGTrackTests {
    static let count = 12

    /// `count` JPEGs ffmpeg made of its test source, each one whole (SOI … EOI).
    static func jpegs() throws -> [[UInt8]] {
        let path = AnnexBWriterTests.temporaryPath("source.mjpeg")
        defer { unlink(path) }
        let made = try ChildProcess.run(["ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i",
                                         "testsrc=size=320x240:rate=30", "-frames:v", "\(count)", "-c:v", "mjpeg",
                                         "-f", "mjpeg", path], environment: ProcessInfo.processInfo.environment)
        try #require(made.status == 0, "\(made.transcript)")
        let bytes = try AnnexBWriterTests.contents(path)
        // ffmpeg's JPEGs hold no thumbnail: each SOI followed by a marker starts a picture.
        var starts: [Int] = []
        for i in 0..<(bytes.count - 2) where bytes[i] == 0xFF && bytes[i + 1] == 0xD8 && bytes[i + 2] == 0xFF {
            starts.append(i)
        }
        let pictures = zip(starts, starts.dropFirst() + [bytes.count]).map { Array(bytes[$0..<$1]) }
        try #require(pictures.count == count && pictures.allSatisfy { $0.suffix(2) == [0xFF, 0xD9] })
        return pictures
    }

    static func frames(_ jpegs: [[UInt8]]) -> [EncodedFrame] {
        jpegs.enumerated().map { n, jpeg in
            let time = MediaTime(value: Int64(n), timescale: 30)
            return EncodedFrame(data: jpeg, pts: time, dts: time, isKeyFrame: true, token: FrameToken(UInt64(n)))
        }
    }

    /// What ffprobe, ffmpeg's decoder and ffmpeg's `-c copy` make of a file.
    static func check(_ path: String, holds jpegs: [[UInt8]]) throws {
        let environment = ProcessInfo.processInfo.environment
        let probe = try ChildProcess.run(["ffprobe", "-v", "error", "-count_packets", "-select_streams", "v:0",
                                          "-show_entries", "stream=codec_name,width,height,nb_read_packets",
                                          "-of", "default=noprint_wrappers=1", path], environment: environment)
        #expect(probe.standardOutputText == "codec_name=mjpeg\nwidth=320\nheight=240\nnb_read_packets=\(count)\n",
                "\(probe.transcript)")
        let decode = try ChildProcess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-f", "null", "-"],
                                          environment: environment)
        #expect(decode.status == 0 && decode.standardError.isEmpty, "\(decode.transcript)")
        let copy = path + ".copy.mjpeg"
        defer { unlink(copy) }
        let copied = try ChildProcess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-map", "0:v", "-c", "copy",
                                           "-f", "mjpeg", copy], environment: environment)
        try #require(copied.status == 0, "\(copied.transcript)")
        #expect(try AnnexBWriterTests.contents(copy) == Array(jpegs.joined()), "the stored JPEGs differ from the camera's")
    }

    @Test func matroskaCarriesTheJPEGsAsVMJPEG() throws {
        let jpegs = try Self.jpegs()
        let path = AnnexBWriterTests.temporaryPath("mjpeg.mkv")
        defer { unlink(path) }
        let writer = try MatroskaWriterTests.writer(path)
        try writer.writeHeader(.mjpeg(width: 320, height: 240))
        for frame in Self.frames(jpegs) { try writer.write(frame) }
        try writer.finish(keepEmpty: false)
        let bytes = try AnnexBWriterTests.contents(path)
        #expect(bytes.indices.contains { bytes[$0...].starts(with: Array("V_MJPEG".utf8)) })
        try Self.check(path, holds: jpegs)
    }

    /// Finalized, and left fragmented as a crash leaves it.
    @Test(arguments: [false, true])
    func anMP4CarriesTheJPEGsAsMP4V(keepFragmented: Bool) throws {
        let jpegs = try Self.jpegs()
        let path = AnnexBWriterTests.temporaryPath("mjpeg.mp4")
        defer { unlink(path) }
        let writer = try MP4WriterTests.writer(path, fragmentDuration: 0.1, keepFragmented: keepFragmented)
        try writer.writeHeader(.mjpeg(width: 320, height: 240))
        for frame in Self.frames(jpegs) { try writer.write(frame) }
        try writer.finish(keepEmpty: false)
        #expect(writer.isFinalized == !keepFragmented)
        try Self.check(path, holds: jpegs)
    }

    /// A track is one codec to its end: H.264 parameter sets after JPEGs are refused.
    @Test func aTrackKeepsItsCodec() throws {
        let path = AnnexBWriterTests.temporaryPath("mixed.mkv")
        defer { unlink(path) }
        let writer = try MatroskaWriterTests.writer(path)
        try writer.writeHeader(.mjpeg(width: 320, height: 240))
        #expect(throws: OutputError.self) { try writer.writeHeader(MP4WriterTests.format) }
        writer.abandon()
    }
}
