import Foundation
import Testing
import VTTestSupport

/// The fake camera's fault knobs proved against clients written by other people (v4l2-ctl,
/// ffmpeg) where they can show the fault, so a vtrecord test that uses a knob tests against
/// what a real client would see: timestamps that go back or jump, a rate that changes part-way,
/// a stream that breaks with EIO, a pause inside one call, the exit report of a process that
/// leaves without destructors, and the scene knobs motion detection is tested with (a still
/// scene, a mover, a change of light).
@Suite("Fake V4L2 camera faults against v4l2-ctl and ffmpeg")
struct FakeV4L2FaultKnobTests {
    /// v4l2-ctl's `delta:` (ms between timestamps) for each frame after the first, and the
    /// sequence numbers it printed.
    static func stream(_ camera: FakeCamera, frames: Int) throws -> (deltas: [Double], sequences: [Int], report: FakeCamera.Report) {
        let result = try camera.v4l2ctl(["--stream-mmap=16", "--stream-count=\(frames)", "--verbose"])
        try #require(result.status == 0, "\(result.transcript)")
        let text = result.standardOutputText + result.standardError
        return (V4L2CtlText.numbers(after: "delta:", in: text), V4L2CtlText.numbers(after: "seq:", in: text).map { Int($0) },
                try camera.report())
    }

    @Test func everyFourthTimestampGoesBack() throws {
        let camera = try FakeCamera(knobs: [.timestampBackEvery(4, milliseconds: 50)])
        let (deltas, sequences, _) = try Self.stream(camera, frames: 9)
        #expect(sequences == Array(0..<9), "the frames themselves come in order")
        // Sequence 3 and 7 are stamped 50 ms early: 16.7 ms before the frame ahead of them.
        let expected = [33.333, 33.333, -16.667, 83.333, 33.333, 33.333, -16.667, 83.333]
        #expect(deltas.count == expected.count)
        #expect(zip(deltas, expected).allSatisfy { abs($0 - $1) < 0.01 }, "\(deltas)")
    }

    @Test func everySixthTimestampJumpsAheadAndStays() throws {
        let camera = try FakeCamera(knobs: [.timestampJumpEvery(6, milliseconds: 500)])
        let (deltas, sequences, _) = try Self.stream(camera, frames: 13)
        #expect(sequences == Array(0..<13))
        let expected = (1..<13).map { $0 % 6 == 5 ? 533.333 : 33.333 }
        #expect(deltas.count == expected.count)
        #expect(zip(deltas, expected).allSatisfy { abs($0 - $1) < 0.01 }, "\(deltas)")
    }

    /// v4l2-ctl does not handle SIGUSR1, so the signal ends it: as it takes frame 5, after
    /// printing frames 0 to 4 and before printing 5.
    @Test func theNamedFrameSendsSIGUSR1() throws {
        let camera = try FakeCamera(knobs: [.signalAt([5])])
        // With the test thread's blocked signals passed on, v4l2-ctl would never see it.
        let result = try ChildProcess(["v4l2-ctl", "-d", camera.path, "--stream-mmap=4", "--stream-count=20", "--verbose"],
                                      environment: camera.environment(), signalsUnblocked: true).wait(timeout: .seconds(30))
        #expect(result.signal == SIGUSR1, "\(result.transcript)")
        let text = result.standardOutputText + result.standardError
        #expect(V4L2CtlText.numbers(after: "seq:", in: text).map { Int($0) } == Array(0..<5), "\(text)")
    }

    @Test func theRateHalvesFromTheGivenFrame() throws {
        let camera = try FakeCamera(knobs: [.rateChange(frame: 4, framesPerSecond: 15)])
        let (deltas, sequences, _) = try Self.stream(camera, frames: 9)
        #expect(sequences == Array(0..<9))
        let expected = (1..<9).map { $0 < 4 ? 33.333 : 66.667 }
        #expect(zip(deltas, expected).allSatisfy { abs($0 - $1) < 0.01 }, "\(deltas)")
        let parm = try camera.v4l2ctl(["--get-parm"])
        #expect(parm.standardOutputText.contains("Frames per second: 30.000 (30/1)"), "the driver still claims 30")
    }

    /// A ring of 4 noisy pictures, through ffmpeg: frame codes 0…3 over and over, and a picture
    /// that comes round again is the same picture, noise and all (MJPEG: the same JPEG decoded).
    @Test(arguments: [("yuyv422", "YUYV"), ("mjpeg", "MJPG")])
    func aPictureRingRepeatsItsPicturesInTurn(inputFormat: String, fourcc: String) throws {
        let camera = try FakeCamera(knobs: [.formats("\(fourcc):640x480@30"), .noise(amplitude: 8), .pictureRing(4)])
        let output = camera.file("recording.gray")
        let result = try camera.ffmpegGray(inputFormat: inputFormat, size: "640x480", frames: 10, output: output)
        try #require(result.status == 0, "\(result.transcript)")
        let data = try Data(contentsOf: URL(fileURLWithPath: output))
        #expect(frameNumbers(in: data, layout: .gray, width: 640, height: 480) == [0, 1, 2, 3, 0, 1, 2, 3, 0, 1])
        let picture = 640 * 480
        let frames = (0..<10).map { data.subdata(in: $0 * picture..<($0 + 1) * picture) }
        #expect(frames[4] == frames[0] && frames[9] == frames[5] && frames[6] == frames[2])
        #expect(frames[1] != frames[0], "the pictures of the ring differ")
        #expect(try camera.report().releasedEverything)
    }

    @Test func aBrokenStreamFailsDQBUFWithEIO() throws {
        let camera = try FakeCamera(knobs: [.eioAfter(frames: 5)])
        let output = camera.file("recording.gray")
        let result = try camera.ffmpegGray(inputFormat: "yuyv422", size: "640x480", frames: 30, output: output,
                                           logLevel: "error")
        #expect(result.standardError.contains("ioctl(VIDIOC_DQBUF): Input/output error"), "\(result.transcript)")
        let codes = try frameNumbers(in: Data(contentsOf: URL(fileURLWithPath: output)), layout: .gray,
                                     width: 640, height: 480)
        // The stream breaks when frame 5 comes due, and from then on DQBUF fails even for a
        // buffer already filled (as vb2 does once a queue has an error): an ffmpeg held back
        // by the machine's load gets fewer than 5, but always the first ones, in order, and
        // exactly those the camera says it delivered.
        let report = try camera.report()
        #expect(codes.count <= 5 && codes == Array(0..<codes.count), "\(codes)")
        #expect(codes.count == report.framesDelivered, "\(codes) against \(report)")
        #expect(report.failed && !report.unplugged, "\(report)")
        #expect(report.releasedEverything, "\(report)")

        // The device is still there: v4l2-ctl reaches it, and its DQBUF fails the same way.
        let again = try camera.v4l2ctl(["--stream-mmap=16", "--stream-count=20"])
        #expect((again.standardOutputText + again.standardError).contains("VIDIOC_DQBUF: failed: Input/output error"),
                "\(again.transcript)")
    }

    @Test(arguments: ["s_fmt", "dqbuf:3"])
    func aPauseHoldsTheCallAndSaysSo(phase: String) throws {
        let camera = try FakeCamera(knobs: [.pause(at: phase, milliseconds: 600)])
        let started = ContinuousClock.now
        let result = try camera.v4l2ctl(["--set-fmt-video=width=640,height=480", "--stream-mmap=16", "--stream-count=6",
                                         "--verbose"])
        let elapsed = started.duration(to: .now)
        try #require(result.status == 0, "\(result.transcript)")
        #expect(elapsed >= .milliseconds(600))
        let lines = result.standardError.split(separator: "\n").filter { $0.hasPrefix("fake-v4l2:") }
        // v4l2-ctl unmaps its buffers and closes the device at its end: the camera says it was
        // given back, once, after the pause.
        #expect(lines == ["fake-v4l2: paused at \(phase) for 600 ms", "fake-v4l2: resumed after \(phase)",
                          "fake-v4l2: released the camera"])
        let text = result.standardOutputText + result.standardError
        #expect(V4L2CtlText.numbers(after: "seq:", in: text).map { Int($0) } == Array(0..<6),
                "sixteen buffers hold what comes during the pause")
        #expect(try camera.report().pauseReached == phase.split(separator: ":")[0].description)
    }

    @Test(arguments: ["_exit", "exit"])
    func aProcessLeavingWithoutGivingBackIsReportedEitherWay(how: String) throws {
        let camera = try FakeCamera()
        let client = try FakeV4L2Library.client("abandon_stream")
        let result = try ChildProcess.run([client, camera.path, how], environment: camera.environment(), timeout: .seconds(30))
        try #require(result.status == 0, "\(result.transcript)")
        let report = try camera.report()
        #expect(report.exitPath == how)
        #expect(report.openHandles == 1 && report.mappedBuffers == 4 && report.streaming && report.buffersQueued == 4,
                "\(report)")
        #expect(!report.releasedEverything)
    }

    /// Where two 640x480 luma planes differ below the frame code's band (its top 16 rows).
    struct Region: Equatable {
        var x: ClosedRange<Int>
        var y: ClosedRange<Int>
    }

    static func difference(_ a: [UInt8], _ b: [UInt8], width: Int = 640, height: Int = 480) -> Region? {
        var region: Region?
        for y in 16..<height {
            for x in 0..<width where a[y * width + x] != b[y * width + x] {
                region = Region(x: min(region?.x.lowerBound ?? x, x)...max(region?.x.upperBound ?? x, x),
                                y: min(region?.y.lowerBound ?? y, y)...max(region?.y.upperBound ?? y, y))
            }
        }
        return region
    }

    static func meanBelowTheCode(_ luma: [UInt8], width: Int = 640) -> Double {
        Double(luma[(16 * width)...].reduce(0) { $0 + Int($1) }) / Double(luma.count - 16 * width)
    }

    @Test func aStillSceneChangesOnlyInTheFrameCode() throws {
        let planes = try FakeCamera(knobs: [.still]).lumaPlanes(frames: 8)
        try #require(planes.keys.sorted() == Array(0..<8))
        for n in 1..<8 {
            #expect(Self.difference(planes[n - 1]!, planes[n]!) == nil, "frame \(n)")
            #expect(planes[n - 1]! != planes[n]!, "the frame code of frame \(n) counts on")
        }
        let panning = try FakeCamera().lumaPlanes(frames: 2)
        #expect(Self.difference(panning[0]!, panning[1]!) != nil, "without the knob the background pans")
    }

    /// The square (80 pixels on a side at 640x480, rows 200…279) appears at the left edge in
    /// frame 5, moves 4 pixels a frame, and is gone in frame 15: between one frame and the next
    /// only the strips it uncovers and covers change.
    @Test func theMoverChangesOnlyASquareSizedRegionInItsWindow() throws {
        let planes = try FakeCamera(knobs: [.still, .mover(from: 5, to: 15)]).lumaPlanes(frames: 20)
        try #require(planes.keys.sorted() == Array(0..<20))
        let rows = 200...279
        for n in 1..<20 {
            let expected: Region? = switch n {
            case 5: Region(x: 0...79, y: rows)
            case 6..<15: Region(x: 4 * (n - 6)...(4 * (n - 5) + 79), y: rows)
            case 15: Region(x: 36...115, y: rows)
            default: nil
            }
            #expect(Self.difference(planes[n - 1]!, planes[n]!) == expected, "frame \(n)")
        }
        #expect(planes[10]![240 * 640 + 20 + 40] == 235, "the square is white")
    }

    /// The lamp (80 pixels on a side at 640x480, columns 480…559, rows 80…159) is lit in frames
    /// 0…4 and 10…14 of a period of 10 with 5 on: the picture changes there, and only there,
    /// as it goes on and off.
    @Test func theLampChangesOnlyItsSquareAsItBlinks() throws {
        let planes = try FakeCamera(knobs: [.still, .blink(period: 10, on: 5)]).lumaPlanes(frames: 20)
        try #require(planes.keys.sorted() == Array(0..<20))
        for n in 1..<20 {
            let expected: Region? = n % 5 == 0 ? Region(x: 480...559, y: 80...159) : nil
            #expect(Self.difference(planes[n - 1]!, planes[n]!) == expected, "frame \(n)")
        }
        #expect(planes[12]![120 * 640 + 500] == 235 && planes[7]![120 * 640 + 500] != 235, "lit in 12, dark in 7")
    }

    /// From frame 5 to frame 20 the scene's luma rises (or falls) linearly by DELTA, clipped to
    /// video range, and stays; the frame code is untouched, so every frame's number still reads.
    @Test(arguments: [40, -40])
    func theLightRampShiftsTheSceneByDelta(delta: Int) throws {
        let planes = try FakeCamera(knobs: [.still, .lightRamp(from: 5, to: 20, delta: delta)]).lumaPlanes(frames: 24)
        try #require(planes.keys.sorted() == Array(0..<24))
        let means = (0..<24).map { Self.meanBelowTheCode(planes[$0]!) }
        #expect(Set(means[0...5]).count == 1 && Set(means[20...]).count == 1, "\(means)")
        let change = means[20] - means[0]
        // Clipping takes a little off at the ends of the range.
        let expected = Double(delta)
        #expect(abs(change) > 0.9 * abs(expected) && abs(change) <= abs(expected) && change * expected > 0, "\(change)")
        let steps = zip(means[5...20], means[6...20]).map { $1 - $0 }
        #expect(steps.allSatisfy { $0 * Double(delta) > 0 }, "every frame of the ramp moves the same way: \(steps)")
        #expect(abs((means[12] - means[0]) - change * 7 / 15) < 1.5, "half way, half the change")
    }
}
