import CX264
import Foundation
import Testing
import VTCore
import VTH264
import VTTestSupport
@testable import VTEncoding

@Suite struct X264SessionTests {
    /// A small moving picture: a bright square that walks across a grey background.
    static func fill(_ buffer: PixelBuffer, frame: Int) {
        let y = buffer.planes[0]
        for row in 0..<y.rows {
            let line = y.baseAddress + row * y.bytesPerRow
            for col in 0..<y.rowBytes {
                let inSquare = (col - frame * 3) & 63 < 16 && (row + frame) & 31 < 16
                line[col] = inSquare ? 220 : UInt8(truncatingIfNeeded: 60 + (col ^ row) & 31)
            }
        }
        for p in 1..<buffer.planes.count {
            let plane = buffer.planes[p]
            for row in 0..<plane.rows { (plane.baseAddress + row * plane.bytesPerRow).update(repeating: 128, count: plane.rowBytes) }
        }
    }

    /// Splits an AVCC access unit into NAL types, failing on any malformed length.
    static func nalTypes(_ data: [UInt8]) -> [UInt8]? {
        var types: [UInt8] = []
        var i = 0
        while i < data.count {
            guard i + 4 <= data.count else { return nil }
            let length = Int(data[i]) << 24 | Int(data[i + 1]) << 16 | Int(data[i + 2]) << 8 | Int(data[i + 3])
            guard length > 0, i + 4 + length <= data.count else { return nil }
            types.append(data[i + 4] & 0x1F)
            i += 4 + length
        }
        return types
    }

    final class Collector {
        var frames: [EncodedFrame] = []
    }

    func encode(_ settings: EncoderSettings, count: Int, format: PixelFormat = .i420,
                forceKeyFrameAt: Set<Int> = []) throws -> (X264Session, [EncodedFrame]) {
        let collector = Collector()
        let session = try X264Session(width: 160, height: 96, pixelFormat: format, settings: settings) {
            collector.frames.append($0)
        }
        try session.prepare()
        let buffer = PixelBuffer(format: format, width: 160, height: 96)
        for n in 0..<count {
            Self.fill(buffer, frame: n)
            try session.encode(buffer, pts: MediaTime(value: Int64(n), timescale: 25),
                               forceKeyFrame: forceKeyFrameAt.contains(n), token: FrameToken(UInt64(1000 + n)))
        }
        try session.completeFrames()
        return (session, collector.frames)
    }

    /// Each frame comes back with the token its picture went in with, whatever order x264
    /// hands frames out in (B-frames reorder them) — token 0 included.
    @Test func everyFrameCarriesItsPicturesToken() throws {
        let (_, frames) = try encode(settings { $0.bFrames = 3; $0.speed = "medium" }, count: 40)
        #expect(frames.count == 40)
        #expect(frames.map(\.token.rawValue).sorted() == (0..<40).map { UInt64(1000 + $0) })
        for frame in frames { #expect(frame.token.rawValue == UInt64(1000) + UInt64(frame.pts.value)) }
        #expect(frames.map(\.token) != frames.map(\.token).sorted { $0.rawValue < $1.rawValue }, "B-frames reorder")
    }

    func settings(_ change: (inout EncoderSettings) -> Void = { _ in }) -> EncoderSettings {
        var s = EncoderSettings()
        s.frameRate = FrameRate(numerator: 25, denominator: 1)!
        s.speed = "ultrafast"
        change(&s)
        return s
    }

    @Test func handsOutAVCCAndParameterSets() throws {
        let (session, frames) = try encode(settings { $0.keyFrameInterval = .frames(10) }, count: 30)
        #expect(frames.count == 30)
        let format = session.formatDescription
        #expect(format.sequenceParameterSets.first?.first.map { $0 & 0x1F } == 7)
        #expect(format.pictureParameterSets.first?.first.map { $0 & 0x1F } == 8)
        for frame in frames {
            let types = try #require(Self.nalTypes(frame.data), "malformed AVCC")
            #expect(!types.contains(7) && !types.contains(8), "parameter sets belong in the format description")
            #expect(types.contains(frame.isKeyFrame ? 5 : 1))
        }
        #expect(frames.filter(\.isKeyFrame).count == 3)
        #expect(frames.first?.isKeyFrame == true)
    }

    @Test func completeFramesDrainsEveryDelayedFrame() throws {
        let (_, frames) = try encode(settings { $0.speed = "medium"; $0.bFrames = 3 }, count: 17)
        #expect(frames.count == 17)
        let ptsValues = frames.map { $0.pts.converted(to: 25).value }.sorted()
        #expect(ptsValues == Array(0..<17))
        // Decode order: dts never goes backwards, and never passes pts.
        for (a, b) in zip(frames, frames.dropFirst()) { #expect(a.dts <= b.dts) }
        for f in frames { #expect(f.dts <= f.pts) }
    }

    @Test func forcedKeyFrameBecomesIDR() throws {
        let (_, frames) = try encode(settings { $0.keyFrameInterval = .frames(250); $0.bFrames = 0 },
                                     count: 12, forceKeyFrameAt: [7])
        let keyPTS = frames.filter(\.isKeyFrame).map { $0.pts.converted(to: 25).value }
        #expect(keyPTS == [0, 7])
    }

    @Test func acceptsNV12() throws {
        let (_, frames) = try encode(settings(), count: 5, format: .nv12)
        #expect(frames.count == 5)
    }

    @Test func refusesPackedYUYV() throws {
        let session = try X264Session(width: 64, height: 64, pixelFormat: .yuyv, settings: settings()) { _ in }
        #expect(throws: EncoderError.self) { try session.prepare() }
    }

    /// An odd size (a Y4M header may give one) is bad input, refused before x264 opens and
    /// logs a complaint of its own.
    @Test(arguments: [(48, 1), (33, 17), (64, 63)])
    func refusesOddSizes(width: Int, height: Int) {
        let error = #expect(throws: UsageError.self) {
            try X264Session(width: width, height: height, pixelFormat: .i420, settings: settings()) { _ in }
        }
        #expect(error?.description == "x264 encodes 4:2:0 pictures of even size, not \(width)x\(height)")
    }

    @Test func resolvedSettingsReportWhatX264Chose() throws {
        let (session, _) = try encode(settings { $0.speed = "veryfast"; $0.tune = "zerolatency" }, count: 1)
        #expect(session.resolvedSettings.bFrames == 0)
        #expect(session.resolvedSettings.rateControl == .crf)
        #expect(session.resolvedSettings.crf == 23)
        #expect(session.resolvedSettings.keyFrameInterval == .frames(50))
    }
}

/// `--realtime adaptive`: x264's analysis settings change on the running encoder, one step per
/// faster preset, and back, without a new keyframe or new parameter sets.
@Suite struct X264SpeedStepTests {
    @Test func theStepsAreSpeedThenEveryFasterPreset() throws {
        var s = EncoderSettings()
        s.speed = "slow"
        let session = try X264Session(width: 160, height: 96, pixelFormat: .i420, settings: s) { _ in }
        try session.prepare()
        // Not ultrafast: x264 advises against switching between it and the other presets.
        #expect(session.speedSteps == ["slow", "medium", "fast", "faster", "veryfast", "superfast"])
    }

    /// Encodes the moving picture's frames `frames` (160x96 at 25 fps), each at its own time.
    static func feed(_ session: X264Session, frames: Range<Int>) throws {
        let buffer = PixelBuffer(format: .i420, width: 160, height: 96)
        for n in frames {
            X264SessionTests.fill(buffer, frame: n)
            try session.encode(buffer, pts: MediaTime(value: Int64(n), timescale: 25), forceKeyFrame: false,
                               token: FrameToken(UInt64(n)))
        }
    }

    /// What the faster presets' analysis looks like, as x264's own defaults give it.
    static func preset(_ name: String) -> x264_param_t {
        var p = x264_param_t()
        _ = x264_param_default_preset(&p, name, nil)
        return p
    }

    @Test func eachStepHoldsOnTheRunningEncoderAndTheStreamStaysOne() throws {
        var s = EncoderSettings()
        s.speed = "veryslow"
        s.frameRate = FrameRate(numerator: 25, denominator: 1)!
        s.keyFrameInterval = .frames(250)
        var frames: [EncodedFrame] = []
        let session = try X264Session(width: 160, height: 96, pixelFormat: .i420, settings: s) { frames.append($0) }
        try session.prepare()
        let opened = session.currentParameters
        let format = session.formatDescription
        var n = 0
        func encode(_ count: Int) throws {
            try Self.feed(session, frames: n..<(n + count))
            n += count
        }
        try encode(10)
        for (step, name) in session.speedSteps.enumerated().reversed() + [(0, "veryslow")] {
            try session.setSpeedStep(step)
            // x264 applies a change when its next picture starts encoding.
            try encode(80)
            let now = session.currentParameters
            let want = step == 0 ? opened : Self.preset(name)
            #expect(now.analyse.i_subpel_refine == max(1, want.analyse.i_subpel_refine), "\(name): subme")
            #expect(now.analyse.i_me_method == want.analyse.i_me_method, "\(name): me")
            #expect(now.analyse.i_trellis == want.analyse.i_trellis, "\(name): trellis")
            #expect(now.i_frame_reference == min(want.i_frame_reference, opened.i_frame_reference), "\(name): refs")
            #expect(now.analyse.inter == want.analyse.inter, "\(name): partitions")
            // What the open fixed stays: B-frames, lookahead, scene-cut detection, CABAC; and
            // deblocking, which ultrafast would turn off.
            #expect(now.b_deblocking_filter == opened.b_deblocking_filter, "\(name): deblocking")
            #expect(now.i_bframe == opened.i_bframe && now.rc.i_lookahead == opened.rc.i_lookahead)
            #expect(now.i_scenecut_threshold == opened.i_scenecut_threshold && now.b_cabac == opened.b_cabac)
        }
        // What x264 would write now for its parameter sets is what it wrote when it opened
        // (asked once it is idle: x264_encoder_headers writes into the buffers its frame
        // threads use).
        try session.completeFrames()
        let now = try session.headersNow()
        #expect(now.sps == format.sequenceParameterSets && now.pps == format.pictureParameterSets,
                "the parameter sets did not change")
        #expect(frames.count == n)
        // x264 opens a scene-cut IDR where the picture changes; a change of speed opens none.
        let keyFrames = frames.filter(\.isKeyFrame).map(\.pts.value)
        let control = try X264SessionTests().encode(s, count: n).1.filter(\.isKeyFrame).map(\.pts.value)
        #expect(keyFrames == control, "IDRs where the same encoder without changes puts them")
        // And the stream decodes, with those parameter sets, to as many pictures as went in.
        var annexB = AnnexB.startCode + format.sequenceParameterSets[0] + AnnexB.startCode + format.pictureParameterSets[0]
        for frame in frames {
            for range in try AVCC.nalUnitRanges(in: frame.data, lengthSize: 4) {
                annexB += AnnexB.startCode + frame.data[range]
            }
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("steps-\(UUID().uuidString).h264").path
        defer { try? FileManager.default.copyItem(atPath: path, toPath: "/tmp/steps-debug-\(UUID().uuidString).h264"); try? FileManager.default.removeItem(atPath: path) }
        try Data(annexB).write(to: URL(fileURLWithPath: path))
        let probe = try ChildProcess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0",
                                          "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", path],
                                         environment: ProcessInfo.processInfo.environment, timeout: .seconds(60))
        #expect(probe.status == 0, "\(probe.standardError)")
        #expect(Int(probe.standardOutputText.trimmingCharacters(in: .whitespacesAndNewlines)) == n)
    }
}

extension X264SpeedStepTests {
    /// x264 cannot go back to an exhaustive motion search once it left it: `--speed placebo`'s
    /// first step searches with umh, the rest of its analysis as placebo's, and it is reached
    /// again after the fastest.
    @Test func placebosFirstStepIsReachableAgainWithUMH() throws {
        var s = EncoderSettings()
        s.speed = "placebo"
        s.frameRate = FrameRate(numerator: 25, denominator: 1)!
        let session = try X264Session(width: 160, height: 96, pixelFormat: .i420, settings: s) { _ in }
        try session.prepare()
        let opened = session.currentParameters
        #expect(opened.analyse.i_me_method == X264_ME_TESA)
        for (round, step) in [session.speedSteps.count - 1, 0].enumerated() {
            try session.setSpeedStep(step)
            try Self.feed(session, frames: (round * 80)..<(round * 80 + 80))
        }
        let now = session.currentParameters
        #expect(now.analyse.i_me_method == X264_ME_UMH)
        #expect(now.analyse.i_subpel_refine == opened.analyse.i_subpel_refine && now.analyse.i_trellis == opened.analyse.i_trellis)
        #expect(now.i_frame_reference == opened.i_frame_reference && now.analyse.i_me_range == opened.analyse.i_me_range)
        try session.completeFrames()
    }

    /// A step set before the first picture (where `--realtime adaptive` starts) holds too.
    @Test func aStepSetBeforeTheFirstPictureHolds() throws {
        var s = EncoderSettings()
        s.speed = "medium"
        s.frameRate = FrameRate(numerator: 25, denominator: 1)!
        let session = try X264Session(width: 160, height: 96, pixelFormat: .i420, settings: s) { _ in }
        try session.prepare()
        try session.setSpeedStep(session.speedSteps.count - 1)
        try Self.feed(session, frames: 0..<80)
        let now = session.currentParameters
        let want = Self.preset("superfast")
        #expect(now.analyse.i_me_method == want.analyse.i_me_method && now.analyse.i_trellis == want.analyse.i_trellis
                && now.analyse.i_subpel_refine == 1 && now.i_frame_reference == 1)
        try session.completeFrames()
    }
}
