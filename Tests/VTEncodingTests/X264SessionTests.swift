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

    /// A session at `speed`, 25 fps, prepared, whose output goes nowhere.
    /// What the speed-step tests open x264 with: `speed`, 25 fps, no IDR after the first for
    /// 250 pictures (so every other IDR comes from a step), and what `change` adds.
    static func settings(speed: String, _ change: (inout EncoderSettings) -> Void = { _ in }) -> EncoderSettings {
        var s = EncoderSettings()
        s.speed = speed
        s.frameRate = FrameRate(numerator: 25, denominator: 1)!
        s.keyFrameInterval = .frames(250)
        change(&s)
        return s
    }

    static func prepared(speed: String) throws -> X264Session {
        var s = EncoderSettings()
        s.speed = speed
        s.frameRate = FrameRate(numerator: 25, denominator: 1)!
        let session = try X264Session(width: 160, height: 96, pixelFormat: .i420, settings: s) { _ in }
        try session.prepare()
        return session
    }

    /// What the faster presets' analysis looks like, as x264's own defaults give it.
    static func preset(_ name: String) -> x264_param_t {
        var p = x264_param_t()
        _ = x264_param_default_preset(&p, name, nil)
        return p
    }

    @Test func eachStepHoldsOnTheRunningEncoderAndTheStreamStaysOne() throws {
        let s = Self.settings(speed: "veryslow")
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
        // The steps the opened encoder codes (the fastest open another: see below).
        let light = try #require(session.newEncoderFromSpeedStep)
        #expect(session.speedSteps[light...] == ["veryfast", "superfast"])
        for (step, name) in session.speedSteps[..<light].enumerated().reversed() + [(0, "veryslow")] {
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
        // And the stream decodes, with those parameter sets, to the pictures that went in.
        try Self.expectDecodesToTheMovingPicture(frames, format: format, count: n)
    }
}

extension X264SpeedStepTests {
    /// With a VBV buffer (here CBR, whose HRD buffering periods describe it) every step changes
    /// the running encoder: a new encoder would start the buffer model again mid-stream. The
    /// fastest step holds on the opened encoder, with its lookahead, and no IDR comes of it.
    @Test(arguments: [EncoderSettings.RateControl.cbr, .vbr])
    func withABufferModelEveryStepChangesTheRunningEncoder(_ mode: EncoderSettings.RateControl) throws {
        let s = Self.settings(speed: "medium") {
            $0.rateControl = mode
            $0.bitRate = 400_000
            if mode == .vbr { $0.maxBitRate = 600_000 }
        }
        var frames: [EncodedFrame] = []
        let session = try X264Session(width: 160, height: 96, pixelFormat: .i420, settings: s) { frames.append($0) }
        try session.prepare()
        let opened = session.currentParameters
        #expect(opened.rc.i_vbv_buffer_size > 0)
        #expect(session.newEncoderFromSpeedStep == nil)
        #expect(session.speedSteps.last == "superfast")
        try Self.feed(session, frames: 0..<10)
        try session.setSpeedStep(session.speedSteps.count - 1)
        try Self.feed(session, frames: 10..<60)
        let now = session.currentParameters
        #expect(now.rc.i_lookahead == opened.rc.i_lookahead, "the opened encoder, with its lookahead")
        #expect(now.analyse.i_subpel_refine == Self.preset("superfast").analyse.i_subpel_refine)
        try session.completeFrames()
        #expect(frames.count == 60)
        #expect(frames.filter(\.isKeyFrame).count == 1, "no IDR from the step")
        try Self.expectDecodesToTheMovingPicture(frames, format: session.formatDescription, count: 60)
    }
}

extension X264SpeedStepTests {
    /// x264 cannot go back to an exhaustive motion search once it left it: `--speed placebo`'s
    /// first step then searches with umh, the rest of its analysis as placebo's; an encoder
    /// opened again after the fastest steps searches with tesa again.
    @Test func placebosFirstStepIsReachableAgainWithUMH() throws {
        let session = try Self.prepared(speed: "placebo")
        let opened = session.currentParameters
        #expect(opened.analyse.i_me_method == X264_ME_TESA)
        let light = try #require(session.newEncoderFromSpeedStep)
        var n = 0
        // veryslow searches with umh, veryfast with hex. (x264 applies a change when its next
        // picture starts encoding: placebo holds 60 pictures of lookahead and 16 B-frames.)
        #expect(session.speedSteps[1] == "veryslow" && session.speedSteps[light] == "veryfast")
        for (step, search) in [(1, X264_ME_UMH), (0, X264_ME_UMH), (light, X264_ME_HEX), (0, X264_ME_TESA)] {
            try session.setSpeedStep(step)
            try Self.feed(session, frames: n..<(n + 120))
            n += 120
            let now = session.currentParameters
            #expect(now.analyse.i_me_method == search, "step \(step)")
            if step == 0 {
                #expect(now.analyse.i_subpel_refine == opened.analyse.i_subpel_refine && now.analyse.i_trellis == opened.analyse.i_trellis)
                #expect(now.i_frame_reference == opened.i_frame_reference && now.analyse.i_me_range == opened.analyse.i_me_range)
            }
        }
        try session.completeFrames()
    }

    /// A step set before the first picture (where `--realtime adaptive` starts) holds too.
    @Test func aStepSetBeforeTheFirstPictureHolds() throws {
        let session = try Self.prepared(speed: "medium")
        let opened = session.currentParameters
        try session.setSpeedStep(session.speedSteps.count - 1)
        try Self.feed(session, frames: 0..<80)
        let now = session.currentParameters
        let want = Self.preset("superfast")
        // The light encoder (no lookahead), at superfast's analysis with the references the
        // parameter sets declare.
        #expect(now.rc.i_lookahead == 0)
        #expect(now.analyse.i_me_method == want.analyse.i_me_method && now.analyse.i_trellis == want.analyse.i_trellis
                && now.analyse.i_subpel_refine == 1 && now.i_frame_reference == opened.i_frame_reference)
        try session.completeFrames()
    }
}

extension X264SpeedStepTests {
    /// The fastest steps run on another encoder, opened without a lookahead (x264 cannot
    /// change it on a running one): the change starts with an IDR, the parameter sets stay
    /// byte for byte, the pictures still in the encoder left are coded and come out before the
    /// new encoder's, and leaving those steps opens the `--speed` encoder again.
    @Test func theFastestStepsChangeEncoderAndTheStreamStaysOne() throws {
        let s = Self.settings(speed: "medium")
        let collector = X264SessionTests.Collector()
        let session = try X264Session(width: 160, height: 96, pixelFormat: .i420, settings: s) {
            collector.frames.append($0)
        }
        try session.prepare()
        let opened = session.currentParameters
        let format = session.formatDescription
        let light = try #require(session.newEncoderFromSpeedStep)
        #expect(session.speedSteps[light...] == ["veryfast", "superfast"])
        // (step, pictures at it): into the light encoder and on within it, back to the opened
        // one, and out again before that one gave out anything (its lookahead is emptied on
        // its own thread), and back again.
        let plan = [(0, 30), (light + 1, 30), (light, 30), (light - 1, 10), (light + 1, 30), (0, 30), (light, 20)]
        var n = 0
        var changedEncoderAt: [Int64] = []
        var previousLight = false
        for (step, count) in plan {
            try session.setSpeedStep(step)
            let isLight = step >= light
            if isLight != previousLight {
                changedEncoderAt.append(Int64(n))
                #expect(session.speedChangePending, "a new encoder's cost shows once it codes")
            }
            previousLight = isLight
            try Self.feed(session, frames: n..<(n + count))
            n += count
            // (x264 applies a change when its next picture starts encoding.)
            let now = session.currentParameters
            if isLight {
                #expect(now.rc.i_lookahead == 0 && now.rc.b_mb_tree == 0, "step \(step): no lookahead")
                #expect(now.analyse.i_subpel_refine == Self.preset(session.speedSteps[step]).analyse.i_subpel_refine)
                #expect(now.i_frame_reference == opened.i_frame_reference, "the references the SPS declares")
            } else {
                #expect(now.rc.i_lookahead == opened.rc.i_lookahead && now.rc.b_mb_tree == opened.rc.b_mb_tree)
            }
            #expect(now.i_bframe == opened.i_bframe && now.i_bframe_pyramid == opened.i_bframe_pyramid)
        }
        try session.completeFrames()
        #expect(!session.speedChangePending)
        let frames = collector.frames
        let headers = try session.headersNow()
        #expect(headers.sps == format.sequenceParameterSets && headers.pps == format.pictureParameterSets)
        #expect(format == session.formatDescription)
        #expect(frames.count == n)
        #expect(frames.map(\.token.rawValue).sorted() == (0..<n).map { UInt64($0) }, "every picture once")
        // Each encoder's pictures come out together, in its decode order: a picture never
        // comes out after one that shows later than the next change of encoder.
        let keyFrames = frames.filter(\.isKeyFrame).map(\.pts.value)
        #expect(keyFrames == [0] + changedEncoderAt.dropFirst(changedEncoderAt.first == 0 ? 1 : 0), "an IDR at each change of encoder")
        let encoderOf = frames.map { frame in changedEncoderAt.lastIndex { $0 <= frame.pts.value } ?? -1 }
        #expect(encoderOf == encoderOf.sorted(), "each encoder's pictures come out before the next one's")
        // The stream decodes to the pictures that went in, in order.
        try Self.expectDecodesToTheMovingPicture(frames, format: format, count: n)
    }

    /// `frames` as one Annex B stream at `path`, the parameter sets first.
    static func writeAnnexB(_ frames: [EncodedFrame], format: VideoFormatDescription, to path: String) throws {
        var annexB = AnnexB.startCode + format.sequenceParameterSets[0] + AnnexB.startCode + format.pictureParameterSets[0]
        for frame in frames {
            for range in try AVCC.nalUnitRanges(in: frame.data, lengthSize: 4) { annexB += AnnexB.startCode + frame.data[range] }
        }
        try Data(annexB).write(to: URL(fileURLWithPath: path))
    }

    /// Writes `frames` as one Annex B stream, decodes it with FFmpeg, and checks each decoded
    /// picture is the moving picture's frame at its place (closer to it than to its neighbours).
    static func expectDecodesToTheMovingPicture(_ frames: [EncodedFrame], format: VideoFormatDescription, count: Int) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("steps-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("s.h264").path
        let raw = directory.appendingPathComponent("s.gray").path
        try writeAnnexB(frames, format: format, to: stream)
        let decode = try ChildProcess.run(["ffmpeg", "-v", "error", "-xerror", "-i", stream, "-f", "rawvideo", "-pix_fmt", "gray", raw],
                                          environment: ProcessInfo.processInfo.environment, timeout: .seconds(60))
        #expect(decode.status == 0, "\(decode.standardError)")
        let luma = try [UInt8](Data(contentsOf: URL(fileURLWithPath: raw)))
        let size = 160 * 96
        #expect(luma.count == count * size, "\(luma.count / size) pictures decoded of \(count)")
        let source = PixelBuffer(format: .i420, width: 160, height: 96)
        func difference(_ decoded: Int, _ frame: Int) -> Int {
            X264SessionTests.fill(source, frame: frame)
            let plane = source.planes[0]
            var total = 0
            for row in 0..<96 {
                for col in 0..<160 {
                    total += abs(Int(luma[decoded * size + row * 160 + col]) - Int(plane.baseAddress[row * plane.bytesPerRow + col]))
                }
            }
            return total
        }
        for k in 0..<min(count, luma.count / size) {
            let own = difference(k, k)
            let neighbours = [k - 1, k + 1].filter { (0..<count).contains($0) }.map { difference(k, $0) }
            #expect(neighbours.allSatisfy { own < $0 }, "decoded picture \(k) is frame \(k)")
        }
    }
}

extension X264SpeedStepTests {
    /// The idr_pic_id of each IDR slice of an Annex B stream, as FFmpeg's trace_headers reads it.
    static func idrPictureIDs(_ frames: [EncodedFrame], format: VideoFormatDescription) throws -> [Int] {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("idr-\(UUID().uuidString).h264").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try writeAnnexB(frames, format: format, to: path)
        let trace = try ChildProcess.run(["ffmpeg", "-hide_banner", "-v", "verbose", "-i", path, "-c", "copy", "-bsf:v", "trace_headers",
                                          "-f", "null", "-"], environment: ProcessInfo.processInfo.environment, timeout: .seconds(60))
        #expect(trace.status == 0, "\(trace.standardError)")
        return trace.standardError.split(separator: "\n").filter { $0.contains(" idr_pic_id ") }
            .compactMap { $0.split(separator: "=").last.flatMap { Int($0.trimmingCharacters(in: CharacterSet.whitespaces)) } }
    }

    /// Each encoder numbers its IDRs from idr_pic_id 0. When the encoder left ended on an IDR
    /// numbered 0, the next encoder's first IDR is renumbered 1: two IDR access units in a
    /// row with one id would be taken for one picture.
    @Test(arguments: [EncoderSettings.Entropy.cabac, .cavlc])
    func twoIDRsInARowAcrossAChangeOfEncoderDifferInID(entropy: EncoderSettings.Entropy) throws {
        let s = Self.settings(speed: "medium") { $0.entropy = entropy }
        let collector = X264SessionTests.Collector()
        let session = try X264Session(width: 160, height: 96, pixelFormat: .i420, settings: s) {
            collector.frames.append($0)
        }
        try session.prepare()
        let light = try #require(session.newEncoderFromSpeedStep)
        let buffer = PixelBuffer(format: .i420, width: 160, height: 96)
        // IDRs at 0 (id 0), 10 (id 1) and 19 (id 0), the last picture before the change: it is
        // coded last, since an IDR ends the pictures before it.
        for n in 0..<40 {
            if n == 20 { try session.setSpeedStep(light) }
            X264SessionTests.fill(buffer, frame: n)
            try session.encode(buffer, pts: MediaTime(value: Int64(n), timescale: 25), forceKeyFrame: [10, 19].contains(n),
                               token: FrameToken(UInt64(n)))
        }
        try session.completeFrames()
        let frames = collector.frames
        let keyFrames = frames.enumerated().filter(\.element.isKeyFrame)
        #expect(keyFrames.map(\.element.pts.value) == [0, 10, 19, 20])
        #expect(keyFrames.suffix(2).map(\.offset) == [19, 20], "the two IDRs follow each other")
        #expect(try Self.idrPictureIDs(frames, format: session.formatDescription) == [0, 1, 0, 1])
        try Self.expectDecodesToTheMovingPicture(frames, format: session.formatDescription, count: 40)
    }
}
