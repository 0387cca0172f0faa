import Foundation
import Testing
import VTCore
import VTDecoding
import VTH264
import VTOutput
import VTReading
import VTTestSupport

/// The software `DecompressionSession` against FFmpeg's own decoding of the same files: every
/// picture the same bytes (cropped, per plane), in the same order, at the same time, for streams
/// from the x264 CLI, FFmpeg's libx264 and vtrecord's VA-API encoder on the test driver.
@Suite struct DecompressionSessionTests {
    enum Encoder: Sendable { case x264CLI, ffmpeg, vaapi }

    struct Stream: CustomTestStringConvertible, Sendable {
        let what: String
        let encoder: Encoder
        let width: Int
        let height: Int
        let frames: Int
        /// The encoder's own options.
        let options: [String]
        var testDescription: String { what }
    }

    static let streams = [
        Stream(what: "x264 baseline CAVLC 200x120", encoder: .x264CLI, width: 200, height: 120, frames: 24,
               options: ["--profile", "baseline", "--keyint", "10"]),
        Stream(what: "x264 main CABAC B-frames 1366x768", encoder: .x264CLI, width: 1366, height: 768, frames: 10,
               options: ["--profile", "main", "--bframes", "2", "--b-pyramid", "none", "--keyint", "6", "--preset", "veryfast"]),
        Stream(what: "x264 high CABAC B-pyramid 320x240", encoder: .x264CLI, width: 320, height: 240, frames: 30,
               options: ["--profile", "high", "--bframes", "3", "--b-pyramid", "normal", "--keyint", "12"]),
        Stream(what: "x264 high CAVLC B-frames 200x120", encoder: .x264CLI, width: 200, height: 120, frames: 20,
               options: ["--profile", "high", "--no-cabac", "--bframes", "2", "--keyint", "8"]),
        Stream(what: "FFmpeg libx264 main B-frames 200x120", encoder: .ffmpeg, width: 200, height: 120, frames: 24,
               options: ["-profile:v", "main", "-bf", "2", "-g", "10"]),
        Stream(what: "vtrecord VA-API high 320x240", encoder: .vaapi, width: 320, height: 240, frames: 24,
               options: ["--profile", "high", "--keyint", "10"]),
        Stream(what: "vtrecord VA-API baseline 200x120", encoder: .vaapi, width: 200, height: 120, frames: 16,
               options: ["--profile", "baseline", "--keyint", "5"]),
    ]

    /// A Y4M clip of moving test pictures.
    static func clip(_ dir: TemporaryDirectory, width: Int, height: Int, frames: Int) throws -> String {
        let path = dir.path("clip-\(width)x\(height).y4m")
        let r = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i",
                                         "testsrc2=size=\(width)x\(height):rate=30", "-frames:v", "\(frames)",
                                         "-pix_fmt", "yuv420p", "-y", path])
        guard r.status == 0 else { throw DecodeTestFailure("ffmpeg made no clip: \(r.stderr)") }
        return path
    }

    /// The stream in a container that keeps its times (Matroska from the x264 CLI, MP4 otherwise).
    static func encode(_ stream: Stream, in dir: TemporaryDirectory) throws -> String {
        let clip = try clip(dir, width: stream.width, height: stream.height, frames: stream.frames)
        let r: ProcessResult
        let out: String
        switch stream.encoder {
        case .x264CLI:
            out = dir.path("x264.mkv")
            r = try Tools.run("x264", ["--quiet", "-o", out] + stream.options + [clip])
        case .ffmpeg:
            out = dir.path("ffmpeg.mp4")
            r = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-i", clip, "-c:v", "libx264"] + stream.options + ["-y", out])
        case .vaapi:
            out = dir.path("vaapi.mp4")
            let va = try FakeVADevice()
            r = try Tools.run(Tools.vtrecord, ["--input", clip, "--encoder", "vaapi", "--va-device", va.devicePath,
                                               "--quiet", "-o", out] + stream.options,
                              environment: try va.environment())
        }
        guard r.status == 0 else { throw DecodeTestFailure("the encoder failed: \(r.stderr)") }
        return out
    }

    /// What the session gave: each picture packed as I420 rows, its time and token.
    struct Decoded {
        var width = 0
        var height = 0
        var pictures: [[UInt8]] = []
        var times: [MediaTime] = []
        var tokens: [FrameToken] = []
        var damaged = 0
    }

    static func packed(_ buffer: PixelBuffer) -> [UInt8] {
        var bytes: [UInt8] = []
        for plane in buffer.planes {
            for row in 0..<plane.rows {
                bytes.append(contentsOf: UnsafeBufferPointer(start: plane.baseAddress + row * plane.bytesPerRow,
                                                             count: plane.rowBytes))
            }
        }
        return bytes
    }

    static func decode(_ frames: [(EncodedFrame, VideoFormatDescription)], threads: Int = 0) throws -> Decoded {
        var decoded = Decoded()
        let session = try LibavcodecDecompressionSession(format: frames[0].1, threads: threads) { frame in
            decoded.width = frame.pixelBuffer.width
            decoded.height = frame.pixelBuffer.height
            decoded.pictures.append(packed(frame.pixelBuffer))
            decoded.times.append(frame.pts)
            decoded.tokens.append(frame.token)
            if frame.isDamaged { decoded.damaged += 1 }
        }
        defer { session.invalidate() }
        for (frame, format) in frames { try session.decode(frame, format: format) }
        try session.finishDelayedFrames()
        // Every picture handed out went back to the decoder when its frame was let go.
        #expect(session.picturesHeld == 0)
        return decoded
    }

    /// FFmpeg's pictures of `path`, in its decoder's own pixel format, one after another.
    static func reference(_ path: String) throws -> Data {
        let r = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:v:0", "-fps_mode", "passthrough",
                                         "-f", "rawvideo", "-"])
        guard r.status == 0 else { throw DecodeTestFailure("ffmpeg could not decode \(path): \(r.stderr)") }
        return r.stdout
    }

    /// FFmpeg's presentation times of `path`'s pictures, in seconds.
    static func referenceTimes(_ path: String) throws -> [Double] {
        let r = try Tools.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts_time",
                                          "-of", "csv=p=0", path])
        guard r.status == 0 else { throw DecodeTestFailure("ffprobe could not read \(path): \(r.stderr)") }
        // A line may end in a comma where the frame has side data.
        return r.stdoutText.split(separator: "\n").compactMap { line in
            line.split(separator: ",").first.flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        }
    }

    /// The first picture that differs, or nil when all are equal and as many.
    static func firstDifference(_ decoded: Decoded, _ reference: Data) -> String? {
        let size = decoded.pictures.first?.count ?? 0
        guard size > 0, reference.count % size == 0 else {
            return "FFmpeg gave \(reference.count) bytes, not a whole number of \(size)-byte pictures"
        }
        let count = reference.count / size
        guard count == decoded.pictures.count else { return "\(decoded.pictures.count) pictures, FFmpeg \(count)" }
        for (index, picture) in decoded.pictures.enumerated() where picture != Array(reference[index * size..<(index + 1) * size]) {
            return "picture \(index) differs"
        }
        return nil
    }

    @Test(arguments: streams)
    func picturesAndTimesAreFFmpegs(_ stream: Stream) throws {
        let dir = try TemporaryDirectory()
        let path = try Self.encode(stream, in: dir)
        let reader = try AssetReader(path: path)
        var frames: [(EncodedFrame, VideoFormatDescription)] = []
        while var frame = try reader.nextFrame() {
            frame.token = FrameToken(UInt64(frames.count))
            frames.append((frame, try #require(reader.format)))
        }
        #expect(frames.count == stream.frames)
        let decoded = try Self.decode(frames)
        #expect(decoded.width == stream.width && decoded.height == stream.height)
        #expect(decoded.damaged == 0)
        let difference = Self.firstDifference(decoded, try Self.reference(path))
        #expect(difference == nil, "\(difference ?? "")")
        // The same times as FFmpeg's, in presentation order, each the time of the unit its token names.
        let times = try Self.referenceTimes(path)
        #expect(times.count == decoded.times.count)
        for (ours, theirs) in zip(decoded.times, times) {
            #expect(abs(ours.seconds - theirs) < 0.000_01, "\(ours.seconds) s, FFmpeg \(theirs) s")
        }
        #expect(decoded.times == decoded.times.sorted())
        for (token, time) in zip(decoded.tokens, decoded.times) {
            #expect(frames[Int(token.rawValue)].0.pts == time, "token \(token) came back with another picture's time")
        }
        #expect(Set(decoded.tokens).count == frames.count)
    }

    /// A raw stream whose size changes at an IDR: the session finishes the first size's
    /// pictures and follows the new parameter sets, as FFmpeg decodes each part.
    @Test func aNewSizeMidStreamIsFollowed() throws {
        let dir = try TemporaryDirectory()
        var parts: [String] = []
        for (width, height, frames) in [(200, 120, 12), (320, 240, 10)] {
            let clip = try Self.clip(dir, width: width, height: height, frames: frames)
            let out = dir.path("part-\(width).h264")
            let r = try Tools.run("x264", ["--quiet", "--bframes", "2", "--keyint", "5", "-o", out, clip])
            #expect(r.status == 0, "\(r.stderr)")
            parts.append(out)
        }
        var stream = Data()
        for part in parts { stream += try Data(contentsOf: URL(fileURLWithPath: part)) }
        var frames: [(EncodedFrame, VideoFormatDescription)] = []
        try stream.withUnsafeBytes { bytes in
            var reader = AccessUnitReader(annexB: bytes)
            while let unit = try reader.nextUnit() {
                let pts = MediaTime(value: Int64(unit.displayIndex), timescale: 30)
                frames.append((EncodedFrame(data: unit.data, pts: pts, dts: pts, isKeyFrame: unit.isKeyFrame,
                                            token: FrameToken(UInt64(frames.count))), unit.format))
            }
        }
        #expect(frames.count == 22)
        var sizes: [String] = []
        var pictures: [[UInt8]] = []
        let session = try LibavcodecDecompressionSession(format: frames[0].1) { frame in
            sizes.append("\(frame.pixelBuffer.width)x\(frame.pixelBuffer.height)")
            pictures.append(Self.packed(frame.pixelBuffer))
        }
        for (frame, format) in frames { try session.decode(frame, format: format) }
        try session.finishDelayedFrames()
        session.invalidate()
        #expect(sizes == Array(repeating: "200x120", count: 12) + Array(repeating: "320x240", count: 10))
        let reference = try Self.reference(parts[0]) + Self.reference(parts[1])
        #expect(Data(pictures.joined()) == reference)
        #expect(session.formatDescription.width == 320)
    }

    /// A unit that cannot be decoded: a one-thread session names it as it is given; with frame
    /// threads libavcodec reports it some units later, and it is the one token that never
    /// comes back on a picture. Either way the session goes on with the next unit.
    @Test(arguments: [1, 0])
    func aUnitThatCannotBeDecodedIsNamedAndTheSessionGoesOn(threads: Int) throws {
        var (frames, format) = try Self.firstStreamsUnits()
        // A unit whose NAL length runs past its end.
        frames[3].data = [0, 0, 0x10, 0] + Array(frames[3].data.dropFirst(4).prefix(8))
        var tokens: [FrameToken] = []
        let session = try LibavcodecDecompressionSession(format: format, threads: threads) { frame in
            tokens.append(frame.token)
        }
        var errors: [DecoderError] = []
        for frame in frames {
            do { try session.decode(frame) } catch let error as DecoderError { errors.append(error) }
        }
        try session.finishDelayedFrames()
        session.invalidate()
        #expect(errors.count == 1, "\(errors)")
        if threads == 1 {
            if case .damaged(let token, _)? = errors.first { #expect(token == FrameToken(3)) } else { Issue.record("\(errors)") }
        }
        #expect(tokens == frames.indices.filter { $0 != 3 }.map { FrameToken(UInt64($0)) })
    }
}

extension DecompressionSessionTests {
    /// The access units of the first stream, each with its index as its token, and its format.
    static func firstStreamsUnits() throws -> ([EncodedFrame], VideoFormatDescription) {
        let dir = try TemporaryDirectory()
        let reader = try AssetReader(path: try encode(streams[0], in: dir))
        var frames: [EncodedFrame] = []
        while var frame = try reader.nextFrame() {
            frame.token = FrameToken(UInt64(frames.count))
            frames.append(frame)
        }
        return (frames, try #require(reader.format))
    }

    /// Where a receiver keeps one picture.
    final class KeptPicture {
        var frame: DecodedFrame?
    }

    /// Decoded pictures are the decoder's memory, lent out: each goes back when the receiver
    /// lets go of its frame, whether it keeps the frame for a while, lets it go at once, or
    /// throws while it holds it; and none is left held once the session is invalidated.
    @Test(arguments: [1, 0])
    func everyPictureGoesBackToTheDecoderWhenItsFrameIsLetGo(threads: Int) throws {
        struct Refused: Error {}
        let (frames, format) = try Self.firstStreamsUnits()
        let kept = KeptPicture()
        var delivered = 0
        let session = try LibavcodecDecompressionSession(format: format, threads: threads) { frame in
            delivered += 1
            if delivered == 2 {
                kept.frame = consume frame
                return
            }
            if delivered == 4 { throw Refused() }
        }
        var refused = false
        for frame in frames where !refused {
            do { try session.decode(frame) } catch is Refused { refused = true }
        }
        #expect(refused, "the receiver threw while it held a picture")
        #expect(session.picturesHeld == 1, "only the kept picture is still held")
        kept.frame = nil
        #expect(session.picturesHeld == 0)
        try session.finishDelayedFrames()
        session.invalidate()
        #expect(delivered >= 4 && session.picturesHeld == 0)
    }
}

struct DecodeTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
