import CVAAPI
import Testing
import VTCore
import VTH264
@testable import VTVAAPI
@testable import VTEncoding

/// How the VA-API session's choices follow from a device's capabilities and the settings.
@Suite struct VAAPIPlanTests {
    private func entry(_ kind: VAAPICapabilities.EntrypointKind = .encSlice,
                       modes: Int32 = VA_RC_CQP | VA_RC_CBR | VA_RC_VBR,
                       packed: Int32 = VA_ENC_PACKED_HEADER_SEQUENCE | VA_ENC_PACKED_HEADER_SLICE | VA_ENC_PACKED_HEADER_RAW_DATA,
                       l1: Int = 1, quality: Int = 7) -> VAAPICapabilities.Entrypoint {
        VAAPICapabilities.Entrypoint(kind: kind, yuv420: true, rateControl: UInt32(modes), packedHeaders: UInt32(packed),
                                     maxReferencesL0: 4, maxReferencesL1: l1, maxSlices: 1, qualityLevels: quality)
    }

    private func device(_ profiles: [H264Profile: [VAAPICapabilities.Entrypoint]]) -> VAAPICapabilities {
        VAAPICapabilities(device: "/dev/dri/renderD128", vendor: "test", apiVersion: "1.17",
                          profiles: H264Profile.allCases.compactMap { name in
                              profiles[name].map { VAAPICapabilities.Profile(name: name, entrypoints: $0) }
                          })
    }

    private var everything: VAAPICapabilities {
        device([.baseline: [entry()], .main: [entry()], .high: [entry(), entry(.encSliceLP)]])
    }

    @Test func defaultsAreHighProfileCQPWithTwoBFramesAndOurOwnHeaders() throws {
        let plan = try VAAPIPlan(capabilities: everything, settings: EncoderSettings())
        #expect(plan.profile == .high)
        #expect(plan.entrypoint == .encSlice)
        #expect(plan.rateControl == .cqp)
        #expect(plan.qp == VAAPIPlan.defaultQP)
        #expect(plan.bFrames == 2)
        #expect(plan.entropy == .cabac)
        #expect(plan.packedHeaders == UInt32(VA_ENC_PACKED_HEADER_SEQUENCE | VA_ENC_PACKED_HEADER_SLICE))
        // medium sits in the middle of seven quality levels.
        #expect(plan.qualityLevel == 4)
        #expect(plan.notices.isEmpty)
    }

    @Test func theLowPowerEntrypointServesWhenItIsTheOnlyOne() throws {
        let plan = try VAAPIPlan(capabilities: device([.high: [entry(.encSliceLP)]]), settings: EncoderSettings())
        #expect(plan.entrypoint == .encSliceLP)
    }

    @Test func rateControlOptionsMapToVAModes() throws {
        var settings = EncoderSettings()
        settings.bitRate = 2_000_000
        settings.rateControl = .cbr
        #expect(try VAAPIPlan(capabilities: everything, settings: settings).rateControl == .cbr)
        settings.rateControl = nil
        #expect(try VAAPIPlan(capabilities: everything, settings: settings).rateControl == .vbr)  // abr
        settings.maxBitRate = 4_000_000
        #expect(try VAAPIPlan(capabilities: everything, settings: settings).rateControl == .vbr)
        var crf = EncoderSettings()
        crf.crf = 20
        let icq = device([.high: [entry(modes: VA_RC_CQP | VA_RC_ICQ)]])
        let plan = try VAAPIPlan(capabilities: icq, settings: crf)
        #expect(plan.rateControl == .icq)
        #expect(plan.quality == 20)
    }

    @Test func aModeTheDriverLacksIsRefusedNamingTheOffer() {
        var settings = EncoderSettings()
        settings.rateControl = .crf
        let cqpOnly = device([.high: [entry(modes: VA_RC_CQP)]])
        #expect(throws: VAAPIUnusable.self) { try VAAPIPlan(capabilities: cqpOnly, settings: settings) }
        do {
            _ = try VAAPIPlan(capabilities: cqpOnly, settings: settings)
        } catch {
            #expect(error.description.contains("--rate-control crf is not offered"))
            #expect(error.description.hasSuffix("it offers cqp"))
        }
    }

    @Test func aMissingProfileIsRefused() {
        var settings = EncoderSettings()
        settings.profile = .baseline
        #expect(throws: VAAPIUnusable.self) {
            try VAAPIPlan(capabilities: device([.high: [entry()]]), settings: settings)
        }
        #expect(throws: VAAPIUnusable.self) { try VAAPIPlan(capabilities: device([:]), settings: EncoderSettings()) }
    }

    @Test func withoutBackwardReferencesThereAreNoBFramesAndAskingSaysSo() throws {
        let noL1 = device([.high: [entry(l1: 0)]])
        let quiet = try VAAPIPlan(capabilities: noL1, settings: EncoderSettings())
        #expect(quiet.bFrames == 0)
        #expect(quiet.notices.isEmpty)
        var settings = EncoderSettings()
        settings.bFrames = 3
        let asked = try VAAPIPlan(capabilities: noL1, settings: settings)
        #expect(asked.bFrames == 0)
        #expect(asked.notices.count == 1)
    }

    @Test func packedHeadersFollowWhatTheDriverTakes() throws {
        let sequenceOnly = device([.high: [entry(packed: VA_ENC_PACKED_HEADER_SEQUENCE)]])
        #expect(try VAAPIPlan(capabilities: sequenceOnly, settings: EncoderSettings()).packedHeaders
                == UInt32(VA_ENC_PACKED_HEADER_SEQUENCE))
        let none = device([.high: [entry(packed: 0)]])
        #expect(try VAAPIPlan(capabilities: none, settings: EncoderSettings()).packedHeaders == 0)
    }

    @Test func baselineMeansCAVLCAndNoBFrames() throws {
        var settings = EncoderSettings()
        settings.profile = .baseline
        let plan = try VAAPIPlan(capabilities: everything, settings: settings)
        #expect(plan.entropy == .cavlc)
        #expect(plan.bFrames == 0)
    }

    @Test func levelsFollowTableA1() {
        let rate = FrameRate(numerator: 30, denominator: 1)!
        func level(_ w: Int, _ h: Int, refs: Int = 1, peak: Int64? = nil) -> String {
            H264Level.minimum(width: w, height: h, frameRate: rate, referenceFrames: refs, peakBitRate: peak,
                              highProfile: false).name
        }
        #expect(level(640, 480) == "3")
        #expect(level(1280, 720) == "3.1")
        #expect(level(1920, 1080) == "4")
        #expect(level(1920, 1080, peak: 30_000_000) == "4.1")
        #expect(level(3840, 2160) == "5.1")
        #expect(level(176, 144) == "1.1")
        // High allows 1.25 times the bit rate; the decoded picture buffer limits references.
        #expect(level(1920, 1080, peak: 25_000_000) == "4.1")
        #expect(H264Level.minimum(width: 1920, height: 1080, frameRate: rate, referenceFrames: 1, peakBitRate: 25_000_000,
                                  highProfile: true).name == "4")
        #expect(level(1920, 1080, refs: 5) == "5")
    }

    @Test func aBaselineOnlyDeviceCodesWithoutBFramesOrCABACAndSaysSo() throws {
        var settings = EncoderSettings()
        settings.bFrames = 2
        settings.entropy = .cabac
        let plan = try VAAPIPlan(capabilities: device([.baseline: [entry()]]), settings: settings)
        #expect(plan.profile == .baseline && plan.bFrames == 0 && plan.entropy == .cavlc)
        #expect(plan.notices.count == 1)
    }

    @Test func icqQualityStaysInTheRangeVAAllowsAndACapIsRefused() throws {
        let icq = device([.high: [entry(modes: VA_RC_CQP | VA_RC_ICQ)]])
        var settings = EncoderSettings()
        settings.crf = 0
        #expect(try VAAPIPlan(capabilities: icq, settings: settings).quality == 1)
        settings.crf = 20
        settings.maxBitRate = 4_000_000
        #expect(throws: VAAPIUnusable.self) { try VAAPIPlan(capabilities: icq, settings: settings) }
    }

    @Test func averageBitRateAloneIsVBRWithTwiceThePeakAsFFmpegSends() throws {
        var settings = EncoderSettings()
        settings.bitRate = 1_000_000
        let plan = try VAAPIPlan(capabilities: everything, settings: settings)
        #expect(plan.rateControl == .vbr)
        #expect(plan.peakBitRate == 2_000_000 && plan.targetBitRate == 1_000_000 && plan.bufferBits == 1_000_000)
        settings.rateControl = .cbr
        let cbr = try VAAPIPlan(capabilities: everything, settings: settings)
        #expect(cbr.peakBitRate == 1_000_000 && cbr.bufferBits == 1_000_000)
    }

    @Test func aPictureLargerThanTheDeviceEncodesIsRefused() {
        var big = entry()
        big.maxWidth = 4096
        big.maxHeight = 2304
        #expect(throws: VAAPIUnusable.self) {
            try VAAPIPlan(capabilities: device([.high: [big]]), settings: EncoderSettings(), width: 4160, height: 2160)
        }
        #expect(throws: Never.self) {
            try VAAPIPlan(capabilities: device([.high: [big]]), settings: EncoderSettings(), width: 3840, height: 2160)
        }
    }
}

/// What a VA-API session says when the device it was planned for fails it.
@Suite struct VAAPIFailureTests {
    /// A device gone between choosing it and opening the session is "unavailable", not an
    /// open failure folded into one string.
    @Test func aDeviceGoneByPrepareIsUnavailable() throws {
        let capabilities = VAAPICapabilities(
            device: "/nonexistent/renderD128", vendor: "test", apiVersion: "1.17",
            profiles: [VAAPICapabilities.Profile(name: .high, entrypoints: [
                VAAPICapabilities.Entrypoint(kind: .encSlice, yuv420: true, rateControl: UInt32(VA_RC_CQP),
                                             packedHeaders: UInt32(VA_ENC_PACKED_HEADER_SEQUENCE | VA_ENC_PACKED_HEADER_SLICE),
                                             maxReferencesL0: 4, maxReferencesL1: 1, maxSlices: 1, qualityLevels: 7)])])
        let plan = try VAAPIPlan(capabilities: capabilities, settings: EncoderSettings())
        let session = try VAAPISession(plan: plan, width: 64, height: 48, settings: EncoderSettings()) { _ in }
        #expect(throws: EncoderError.unavailable(encoder: "vaapi",
                                                 reason: "cannot open /nonexistent/renderD128: No such file or directory")) {
            try session.prepare()
        }
    }

    @Test func eachFailureSaysWhatFailed() {
        #expect(VAAPIFailure.call("vaEndPicture", status: VAStatus(VA_STATUS_ERROR_OPERATION_FAILED)).description
                == "vaEndPicture failed: operation failed")
        #expect(VAAPIFailure.noDriver(path: "/dev/dri/renderD128", status: VAStatus(VA_STATUS_ERROR_ALLOCATION_FAILED)).isDeviceUnusable)
        #expect(!VAAPIFailure.call("vaCreateConfig", status: VAStatus(VA_STATUS_ERROR_UNSUPPORTED_PROFILE)).isDeviceUnusable)
        #expect(VAAPIFailure.conversion(from: .yuyv).description == "libyuv could not convert a yuyv picture to NV12")
    }
}

