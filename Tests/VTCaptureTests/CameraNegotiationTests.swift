import Testing
import VTCapture
import VTCore

private func rate(_ n: Int, _ d: Int = 1) -> FrameRate { FrameRate(numerator: n, denominator: d)! }

/// Choosing what to ask a camera for, from what it offers.
@Suite struct CameraNegotiationTests {
    static func format(_ fourCC: FourCC, emulated: Bool = false, _ sizes: [(Int, Int, [FrameRate])]) -> CameraFormatOffer {
        CameraFormatOffer(fourCC: fourCC, name: "\(fourCC)", isEmulated: emulated,
                                sizes: sizes.map { CameraFrameSize(size: FrameSize(width: $0.0, height: $0.1), frameRates: $0.2) })
    }

    /// A USB 2 webcam: YUYV at 1080p only at 5 fps, MJPEG at 30 everywhere.
    static let webcam = [
        format(.yuyv, [(640, 480, [rate(30), rate(15)]), (1280, 720, [rate(10), rate(5)]), (1920, 1080, [rate(5)])]),
        format(.mjpeg, [(640, 480, [rate(30)]), (1280, 720, [rate(30)]), (1920, 1080, [rate(30), rate(15)])]),
    ]

    @Test func mjpegWhenNoRawFormatReachesTheRate() throws {
        let choice = try #require(CameraNegotiation.choose(
            from: Self.webcam, request: CameraRequest(size: FrameSize(width: 1920, height: 1080), frameRate: rate(30))))
        #expect(choice.format.pixelFormat == .mjpeg)
        #expect(choice.size == FrameSize(width: 1920, height: 1080))
        #expect(choice.frameRate == rate(30))
    }

    @Test func rawWhenItReachesTheRate() throws {
        let choice = try #require(CameraNegotiation.choose(
            from: Self.webcam, request: CameraRequest(size: FrameSize(width: 640, height: 480), frameRate: rate(30))))
        #expect(choice.format.pixelFormat == .yuyv)
    }

    @Test func raw420BeforeYUYV() throws {
        let offers = Self.webcam + [Self.format(.nv12, [(1280, 720, [rate(30)])])]
        let choice = try #require(CameraNegotiation.choose(from: offers, request: CameraRequest()))
        #expect(choice.format.pixelFormat == .nv12)
        #expect(choice.size == CameraRequest.defaultSize)
    }

    @Test func anExplicitFormatIsKeptEvenWhenSlower() throws {
        let choice = try #require(CameraNegotiation.choose(
            from: Self.webcam, request: CameraRequest(format: .yuyv, size: FrameSize(width: 1920, height: 1080), frameRate: rate(30))))
        #expect(choice.format.pixelFormat == .yuyv)
        #expect(choice.frameRate == rate(5))
    }

    @Test func aFormatTheCameraLacksFallsBackToTheBestItHas() throws {
        let choice = try #require(CameraNegotiation.choose(
            from: Self.webcam, request: CameraRequest(format: .nv12, size: FrameSize(width: 1280, height: 720), frameRate: rate(30))))
        #expect(choice.format.pixelFormat == .mjpeg)
    }

    @Test func theNearestSizeWhenTheAskedOneIsMissing() throws {
        let choice = try #require(CameraNegotiation.choose(
            from: Self.webcam, request: CameraRequest(size: FrameSize(width: 1280, height: 800))))
        #expect(choice.size == FrameSize(width: 1280, height: 720))
    }

    @Test func ntscRatesReachWholeRates() throws {
        let offers = [Self.format(.yuyv, [(640, 480, [rate(30000, 1001)])]), Self.format(.mjpeg, [(640, 480, [rate(30)])])]
        let choice = try #require(CameraNegotiation.choose(
            from: offers, request: CameraRequest(size: FrameSize(width: 640, height: 480), frameRate: rate(30))))
        #expect(choice.format.pixelFormat == .yuyv)
        #expect(choice.frameRate == rate(30000, 1001))
    }

    @Test func emulatedFormatsComeAfterNativeOnes() throws {
        let offers = [Self.format(.mjpeg, [(640, 480, [rate(30)])]),
                      Self.format(.yu12, emulated: true, [(640, 480, [rate(30)])])]
        let choice = try #require(CameraNegotiation.choose(
            from: offers, request: CameraRequest(size: FrameSize(width: 640, height: 480))))
        #expect(choice.format.pixelFormat == .mjpeg)
    }

    @Test func nothingUsableGivesNothing() {
        let bayer = Self.format(FourCC("BA81"), [(640, 480, [rate(30)])])
        #expect(CameraNegotiation.choose(from: [bayer], request: CameraRequest()) == nil)
        #expect(FourCC("BA81").description == "BA81")
    }

    @Test func theReportNamesWhatTheDriverChanged() {
        var report = CameraNegotiationReport(
            requested: CameraRequest(format: .yuyv, size: FrameSize(width: 1920, height: 1080), frameRate: rate(30)),
            format: .yuyv, width: 1920, height: 1080, frameRate: rate(5))
        #expect(report.difference == "asked for 30 fps, the camera gives 5 fps")
        report.frameRate = rate(30)
        #expect(report.difference == nil)
        report.requested = CameraRequest()
        report.format = .mjpeg
        #expect(report.difference == nil)
    }
}
