import Testing
import VTCapture
import VTCore
import VTRecorder
@testable import vtrecord

/// The plan a command line makes, checked without opening anything: every choice the options
/// settle, and the checks of options that must go together.
@Suite struct RecordingPlanTests {
    static func plan(_ arguments: [String]) throws -> RecordingPlan {
        try Record.parse(arguments).plan()
    }

    @Test func theContainerAndTimingFollowTheOutput() throws {
        let raw = try Self.plan(["--test-pattern", "-o", "x.h264"])
        #expect(raw.container == .h264 && raw.timing == .cfr && raw.depth.holdsGridFrame)
        let mkv = try Self.plan(["--test-pattern", "-o", "x.mkv"])
        #expect(mkv.container == .mkv && mkv.timing == .passthrough && !mkv.depth.holdsGridFrame)
        #expect(try Self.plan(["--test-pattern", "-o", "x.mkv", "--timing", "cfr"]).timing == .cfr)
        #expect(try Self.plan(["--test-pattern", "-o", "x", "--container", "ts"]).container == .ts)
        #expect(mkv.template?.text == "x.mkv" && mkv.destination == nil && mkv.branches.isEmpty)
    }

    @Test func eventsAloneKeepOnlyTheClips() throws {
        let plan = try Self.plan(["--test-pattern", "--events", "clip-{n}.mp4"])
        #expect(plan.eventsAlone && plan.container == .mp4 && plan.clipContainer == .mp4 && plan.template == nil)
        let beside = try Self.plan(["--test-pattern", "-o", "all.h264", "--events", "clip-{n}.mkv"])
        #expect(!beside.eventsAlone && beside.container == .h264 && beside.clipContainer == .mkv)
        #expect(throws: (any Error).self) { try Self.plan(["--test-pattern", "--events", "clip-{n}.mp4", "--segment-time", "1m"]) }
    }

    @Test func aURLIsPublishedAndTheOtherOutputsAreBranches() throws {
        let plan = try Self.plan(["--test-pattern", "-o", "srt://127.0.0.1:9000", "-o", "copy.mkv", "-o", "udp://127.0.0.1:9001"])
        #expect(plan.destination != nil && plan.template == nil)
        #expect(plan.branches.count == 2)
    }

    @Test func theRealTimeModeAndTheQueueFollowTheSource() throws {
        let camera = try Self.plan(["--device", "/dev/video7", "-o", "x.mp4"])
        #expect(camera.source == .camera(path: "/dev/video7") && camera.deviceName == "video7")
        #expect(camera.realTime == .adaptive && camera.depth.queue == PipelineDepth.adaptiveQueue)
        let pattern = try Self.plan(["--test-pattern", "-o", "x.mp4"])
        #expect(pattern.realTime == .off && pattern.depth.queue == PipelineDepth.defaultQueue && pattern.deviceName == "test-pattern")
        #expect(try Self.plan(["--test-pattern", "-o", "x.mp4", "--realtime", "drop"]).realTime == .drop)
        let file = try Self.plan(["--input", "night.y4m", "-o", "x.mp4"])
        #expect(file.source == .file(path: "night.y4m") && file.deviceName == "night" && file.realTime == .off)
        // Stills and the server each hold a frame the depth counts.
        let held = try Self.plan(["--test-pattern", "-o", "x.mp4", "--control-socket", "c.sock", "--http", "127.0.0.1:0"])
        #expect(held.takesStills && held.serves && held.depth.holdsStill && held.depth.holdsLiveStill)
        #expect(!pattern.depth.holdsStill && !pattern.depth.holdsLiveStill)
    }

    @Test func copyingStoresTheCamerasFramesAndDropsRatherThanAdapts() throws {
        let mjpeg = try Self.plan(["--device", "/dev/video7", "--encoder", "copy", "--format", "mjpeg", "-o", "x.mkv"])
        #expect(mjpeg.copying && mjpeg.realTime == .drop && mjpeg.depth.queue == PipelineDepth.copyQueue)
        let h264 = try Self.plan(["--device", "/dev/video7", "--encoder", "copy", "--format", "h264", "-o", "x.h264"])
        #expect(h264.copying && h264.timing == .passthrough, "a camera's H.264 is never put on a grid")
        // --prefer-copy asks the camera, unless the options already stand in the way.
        let prefer = try Self.plan(["--device", "/dev/video7", "--prefer-copy", "-o", "x.mkv"])
        #expect(prefer.copy == .ifCameraOffers(.mjpeg) && !prefer.copying)
        let offered = prefer.settlingCopy(offered: true, camera: "/dev/video7")
        #expect(offered.copying && offered.realTime == .drop && offered.notices.isEmpty)
        let refused = prefer.settlingCopy(offered: false, camera: "/dev/video7")
        #expect(refused.copy == .encode && refused.realTime == .adaptive && refused.notices.count == 1)
        let blocked = try Self.plan(["--device", "/dev/video7", "--prefer-copy", "-o", "x.h264"])
        #expect(blocked.copy == .encode && blocked.notices.first?.contains("x.h264") == true, "\(blocked.notices)")
    }

    @Test func soundGetsACodecEveryOutputCarries() throws {
        let plan = try Self.plan(["--test-pattern", "--audio", "test", "-o", "x.mp4"])
        #expect(plan.soundCodec == .aac)
        #expect(try Self.plan(["--test-pattern", "-o", "x.mp4"]).soundCodec == nil)
    }

    @Test(arguments: [
        ["--test-pattern", "-o", "-", "--json-summary", "-"],
        ["--test-pattern", "--input", "x.y4m"],
        ["--input", "x.y4m", "--size", "640x480"],
        ["--test-pattern", "--control", "brightness=1"],
        ["--test-pattern", "--buffers", "2"],
        ["--test-pattern", "--encoder", "x264", "--va-device", "/dev/dri/renderD128"],
        ["--test-pattern", "--encoder", "copy"],
        ["--test-pattern", "--frames", "0"],
    ])
    func optionsThatDoNotGoTogetherAreRefused(arguments: [String]) {
        #expect(throws: (any Error).self) { try Self.plan(arguments) }
    }
}
