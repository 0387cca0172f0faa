import Foundation
import Testing
import VTH264
import VTTestSupport

/// The fake camera's H264 format proved against clients written by other people: v4l2-ctl,
/// ffmpeg's v4l2 input and GStreamer's v4l2src each record its access units as a UVC H.264
/// camera's, and ffmpeg decodes what they stored back to the frame codes, in order.
@Suite("Fake V4L2 camera's H264 against v4l2-ctl, ffmpeg and GStreamer")
struct FakeV4L2H264ProofTests {
    static let formats = "H264:320x240@30,640x480@30/15"
    static let frames = 30

    @Test func v4l2ctlListsH264WithItsSizes() throws {
        let camera = try FakeCamera(knobs: [.formats(Self.formats)])
        let result = try camera.v4l2ctl(["--list-formats-ext"])
        try #require(result.status == 0, "\(result.transcript)")
        #expect(V4L2CtlText.formatTable(result.standardOutputText) == ["H264 320x240 30", "H264 640x480 30,15"])
        #expect(result.standardOutputText.contains("'H264' (H.264, compressed)"))
        let controls = try camera.v4l2ctl(["--list-ctrls"])
        try #require(controls.status == 0, "\(controls.transcript)")
        #expect(controls.standardOutputText.contains("h264_i_frame_period 0x00990a66 (int)    : min=1 max=600 step=1 default=30"))
    }

    @Test func v4l2ctlStoresAnAnnexBStream() throws {
        let camera = try FakeCamera(knobs: [.formats(Self.formats)])
        let output = camera.file("capture.h264")
        let result = try camera.v4l2ctl(["--set-fmt-video=width=320,height=240,pixelformat=H264",
                                         "--stream-mmap=16", "--stream-count=\(Self.frames)",
                                         "--stream-to=\(output)"])
        try #require(result.status == 0, "\(result.transcript)")
        try checkStream(output, camera: camera)
        let report = try camera.report()
        #expect(report.releasedEverything, "\(report)")
        #expect(report.lastSequence == Self.frames - 1)
    }

    /// An IDR every 30 pictures and only there, as a camera's fixed I period, or as often as
    /// the H.264 I period control says.
    @Test(arguments: [(nil, [0, 30, 60]), (10, [0, 10, 20, 30, 40, 50, 60])])
    func keyframesComeEveryIPeriod(period: Int?, keyframes: [Int]) throws {
        let camera = try FakeCamera(knobs: [.formats(Self.formats)])
        let output = camera.file("keyframes.h264")
        let control = period.map { ["--set-ctrl=h264_i_frame_period=\($0)"] } ?? []
        // 32 buffers, a second of pictures: a client the loaded suite holds back for longer than
        // 16 buffers last (half a second) would have the camera drop pictures, as a real one does.
        let result = try camera.v4l2ctl(control + ["--set-fmt-video=width=320,height=240,pixelformat=H264",
                                                   "--stream-mmap=32", "--stream-count=61", "--stream-to=\(output)"])
        try #require(result.status == 0, "\(result.transcript)")
        let probe = try ChildProcess.run(["ffprobe", "-v", "error", "-show_entries", "frame=key_frame", "-of", "csv=p=0",
                                          output], environment: ProcessInfo.processInfo.environment,
                                         timeout: .seconds(30))
        try #require(probe.status == 0, "\(probe.transcript)")
        let flags = probe.standardOutputText.split(separator: "\n").map { $0.hasPrefix("1") }
        let report = try camera.report()
        #expect(flags.count == 61, "\(report)")
        #expect(flags.indices.filter { flags[$0] } == keyframes, "\(report)")
    }

    @Test func ffmpegCopiesTheCamerasH264() throws {
        let camera = try FakeCamera(knobs: [.formats(Self.formats)])
        let output = camera.file("recording.h264")
        let result = try ChildProcess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "warning",
                                           "-f", "v4l2", "-input_format", "h264", "-video_size", "320x240",
                                           "-framerate", "30", "-i", camera.path, "-frames:v", "\(Self.frames)",
                                           "-c", "copy", "-f", "h264", "-y", output],
                                          environment: camera.environment(), timeout: .seconds(30))
        try #require(result.status == 0, "\(result.transcript)")
        try checkStream(output, camera: camera)
        let report = try camera.report()
        #expect(report.releasedEverything, "\(report)")
    }

    @Test func gstreamerParsesTheCamerasH264() throws {
        let camera = try FakeCamera(knobs: [.formats(Self.formats)])
        let output = camera.file("gstreamer.h264")
        let result = try ChildProcess.run(["gst-launch-1.0", "-q", "v4l2src", "device=\(camera.path)",
                                           "num-buffers=\(Self.frames)", "!", "video/x-h264,width=320,height=240",
                                           "!", "h264parse", "!",
                                           "video/x-h264,stream-format=byte-stream,alignment=au",
                                           "!", "filesink", "location=\(output)"],
                                          environment: camera.environment(), timeout: .seconds(30))
        try #require(result.status == 0, "\(result.transcript)")
        // v4l2src queues only four buffers: on a busy machine the driver may drop frames while
        // they are all held, and the stream goes on without them (the encoder never saw them).
        let codes = try checkStream(output, camera: camera, inOrder: false)
        let numbers = codes.compactMap { $0 }
        #expect(numbers.first == 0 && zip(numbers, numbers.dropFirst()).allSatisfy { $0 < $1 }, "\(numbers)")
        // gst-launch leaves its buffer pool's dup of the descriptor for the kernel to close, so
        // one handle stays open at exit; the stream was stopped and every buffer given back.
        let report = try camera.report()
        #expect(report.openHandles <= 1 && report.mappedBuffers == 0 && !report.streaming
                && report.buffersQueued == 0, "\(report)")
        #expect(report.lastSequence == numbers.last ?? -1)
        #expect(report.framesDropped == report.lastSequence + 1 - Self.frames, "\(report)")
    }

    /// Every fourth access unit comes with the forbidden bit set in its slices' NAL headers and
    /// its parameter sets whole: v4l2-ctl stores the bytes as the camera gave them, the damage
    /// is found at pictures 3, 7, 11… and nowhere else, and ffmpeg's decoder refuses those
    /// slices.
    @Test func damagedAccessUnitsCarryTheForbiddenBit() throws {
        let camera = try FakeCamera(knobs: [.formats(Self.formats), .corruptH264Every(4)])
        let output = camera.file("damaged.h264")
        let result = try camera.v4l2ctl(["--set-fmt-video=width=320,height=240,pixelformat=H264",
                                         "--stream-mmap=16", "--stream-count=\(Self.frames)",
                                         "--stream-to=\(output)"])
        try #require(result.status == 0, "\(result.transcript)")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
        var picture = -1
        var damaged: Set<Int> = []
        var damagedParameterSets = 0
        for range in AnnexB.nalUnitRanges(in: bytes) {
            let header = bytes[range.lowerBound]
            let type = header & 0x1F
            if type == 7 || type == 8 { damagedParameterSets += Int(header >> 7) }
            guard type == 1 || type == 5, range.count > 1 else { continue }
            // first_mb_in_slice is ue(v): a first bit of 1 is 0, the picture's first slice.
            if bytes[range.lowerBound + 1] & 0x80 != 0 { picture += 1 }
            if header & 0x80 != 0 { damaged.insert(picture) }
        }
        #expect(picture == Self.frames - 1)
        #expect(damaged == Set(stride(from: 3, to: Self.frames, by: 4)), "\(damaged.sorted())")
        #expect(damagedParameterSets == 0)
        let decoded = try ChildProcess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "warning", "-i", output,
                                            "-f", "null", "-"], environment: ProcessInfo.processInfo.environment,
                                           timeout: .seconds(30))
        #expect(decoded.standardError.contains("Invalid NAL unit"), "\(decoded.transcript)")
    }

    /// A frame the driver drops (every 10th) was encoded all the same, as a camera's encoder
    /// does not know the driver had no buffer: ffmpeg's decoder finds the gap in frame_num
    /// where a unit is missing from what v4l2-ctl stores, and none in the camera's whole stream.
    @Test func aDroppedAccessUnitLeavesAGapTheDecoderSees() throws {
        for dropping in [false, true] {
            let camera = try FakeCamera(knobs: [.formats(Self.formats)] + (dropping ? [.dropEvery(10)] : []))
            let output = camera.file("dropped.h264")
            let result = try camera.v4l2ctl(["--set-fmt-video=width=320,height=240,pixelformat=H264",
                                             "--stream-mmap=16", "--stream-count=25", "--stream-to=\(output)"])
            try #require(result.status == 0, "\(result.transcript)")
            let decoded = try ChildProcess.run(["ffmpeg", "-nostdin", "-hide_banner", "-nostats", "-loglevel", "debug",
                                                "-threads", "1", "-i", output, "-f", "null", "-"],
                                               environment: ProcessInfo.processInfo.environment, timeout: .seconds(30))
            try #require(decoded.status == 0, "\(decoded.transcript)")
            let gaps = decoded.standardError.components(separatedBy: "Frame num gap").count - 1
            #expect(dropping ? gaps >= 1 : gaps == 0, "dropping \(dropping): \(gaps) gaps")
        }
    }

    /// Every fourth access unit loses the middle of its slice's data: v4l2-ctl stores units
    /// whose NAL headers are all clean, and ffmpeg's decoder conceals damage exactly when the
    /// stream it is given grows by one of those (pictures 3, 7, 11), not when it grows by
    /// another (one that refers to a damaged picture decodes without a word of its own).
    @Test func anAccessUnitWithAHoleKeepsItsStructureAndFailsToDecode() throws {
        let camera = try FakeCamera(knobs: [.formats(Self.formats), .h264HoleEvery(4)])
        let output = camera.file("holes.h264")
        let count = 12
        let result = try camera.v4l2ctl(["--set-fmt-video=width=320,height=240,pixelformat=H264",
                                         "--stream-mmap=16", "--stream-count=\(count)", "--stream-to=\(output)"])
        try #require(result.status == 0, "\(result.transcript)")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
        // One slice a picture: where each picture's slice ends.
        var ends: [Int] = []
        for range in AnnexB.nalUnitRanges(in: bytes) {
            #expect(bytes[range.lowerBound] & 0x80 == 0, "a forbidden bit at \(range.lowerBound)")
            let type = bytes[range.lowerBound] & 0x1F
            if type == 1 || type == 5 { ends.append(range.upperBound) }
        }
        try #require(ends.count == count)
        // The decoder says it concealed errors (at the info level: it decodes on, as a player
        // does) for each damaged picture it decodes, in its probe or its decode.
        var concealed = [0]
        for (picture, end) in ends.enumerated() {
            let prefix = camera.file("prefix-\(picture).h264")
            try Data(bytes[..<end]).write(to: URL(fileURLWithPath: prefix))
            let decoded = try ChildProcess.run(["ffmpeg", "-nostdin", "-hide_banner", "-nostats", "-loglevel", "info",
                                                "-threads", "1", "-i", prefix, "-f", "null", "-"],
                                               environment: ProcessInfo.processInfo.environment, timeout: .seconds(30))
            try #require(decoded.status == 0, "\(decoded.transcript)")
            concealed.append(decoded.standardError.components(separatedBy: "concealing").count - 1)
            let damaged = picture % 4 == 3
            #expect((concealed[picture + 1] > concealed[picture]) == damaged, "picture \(picture): \(concealed)")
        }
    }

    /// What every client stored: an H.264 stream at 320x240 that starts with SPS, PPS and an
    /// IDR (after h264parse's access unit delimiter, if any), and decodes to `frames` pictures
    /// whose frame codes all read, and with `inOrder` are 0…frames-1. Returns the codes.
    @discardableResult
    func checkStream(_ path: String, camera: FakeCamera, inOrder: Bool = true) throws -> [Int?] {
        let probe = try ChildProcess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                                          "stream=codec_name,width,height", "-of", "default=noprint_wrappers=1",
                                          path], environment: ProcessInfo.processInfo.environment,
                                         timeout: .seconds(30))
        try #require(probe.status == 0, "\(probe.transcript)")
        #expect(probe.standardOutputText == "codec_name=h264\nwidth=320\nheight=240\n")
        let stream = try Data(contentsOf: URL(fileURLWithPath: path))
        // SPS and PPS, then x264's SEI in the first, then the IDR slice.
        let types = Array(Self.firstAccessUnitTypes(stream).drop { $0 == 9 })
        #expect(types.prefix(2) == [7, 8] && types.last == 5, "\(types)")
        let gray = camera.file((path as NSString).lastPathComponent + ".gray")
        let decoded = try ChildProcess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-i", path,
                                            "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "gray",
                                            "-y", gray], environment: ProcessInfo.processInfo.environment,
                                           timeout: .seconds(30))
        try #require(decoded.status == 0, "\(decoded.transcript)")
        let codes = try frameNumbers(in: Data(contentsOf: URL(fileURLWithPath: gray)), layout: .gray,
                                     width: 320, height: 240)
        #expect(codes.count == Self.frames && !codes.contains(nil), "\(codes)")
        if inOrder { #expect(codes == Array(0..<Self.frames)) }
        return codes
    }

    /// The NAL unit types of an Annex B stream up to and including its first slice.
    static func firstAccessUnitTypes(_ stream: Data) -> [Int] {
        let bytes = [UInt8](stream)
        var types: [Int] = []
        for range in AnnexB.nalUnitRanges(in: bytes) {
            let type = NALUnitHeader(bytes[range.lowerBound]).type
            types.append(Int(type.rawValue))
            if type == .sliceIDR || type == .sliceNonIDR { break }
        }
        return types
    }
}
