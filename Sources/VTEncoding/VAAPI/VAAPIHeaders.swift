import VTCore
import VTH264

/// The SPS and PPS a VA-API session codes with. It writes them itself (packed headers) when the
/// driver takes them, and fills the parameter buffers from the same values either way, so the
/// headers and the buffers cannot disagree.
struct VAAPIHeaders: Sendable {
    var sps: SequenceParameterSet
    var pps: PictureParameterSet

    /// CQP: the quantiser of each picture type; nil in the other modes (the driver picks QPs).
    let fixedQP: (i: Int, p: Int, b: Int)?

    init(plan: VAAPIPlan, settings: EncoderSettings, width: Int, height: Int, planner: H264ReferencePlanner) {
        let profileIdc: Int
        let constraints: UInt8
        switch plan.profile {
        case .baseline: (profileIdc, constraints) = (66, 0xC0)  // constraint_set0 and 1: Constrained Baseline
        case .main: (profileIdc, constraints) = (77, 0x40)      // constraint_set1: also decodable as Main
        case .high: (profileIdc, constraints) = (100, 0)
        }
        let level: Int
        var constraintFlags = constraints
        if let name = settings.level, name != "auto", let idc = EncoderSettings.levelIDC(name) {
            // Level 1b: level_idc 9 in the High profiles, 11 with constraint_set3 below them.
            if idc == 9 && plan.profile != .high {
                level = 11
                constraintFlags |= 0x10
            } else {
                level = idc
            }
        } else {
            level = H264Level.minimum(width: width, height: height, frameRate: settings.frameRate,
                                      referenceFrames: planner.maxReferences,
                                      peakBitRate: plan.peakBitRate > 0 ? plan.peakBitRate : nil,
                                      highProfile: plan.profile == .high).idc
        }
        // POC steps by 2 a frame; the lsb must span more than twice the largest jump between
        // consecutive pictures in decode order (a P coded ahead of its B-pictures).
        var log2MaxPocLsb = 6
        while 1 << (log2MaxPocLsb - 1) <= 2 * (plan.bFrames + 2) { log2MaxPocLsb += 1 }
        var sps = SequenceParameterSet(profileIdc: profileIdc, constraintFlags: constraintFlags, levelIdc: level,
                                       width: width, height: height, maxNumRefFrames: planner.maxReferences,
                                       pictureOrderCount: .type0(log2MaxPicOrderCntLsb: log2MaxPocLsb),
                                       log2MaxFrameNum: planner.log2MaxFrameNum)
        var vui = VideoUsabilityInformation()
        if let sar = settings.sampleAspectRatio?.fittingH264, sar != SampleAspectRatio(width: 1, height: 1) {
            vui.sampleAspectRatio = sar
        }
        if let fullRange = settings.fullRange {
            vui.videoSignalType = VideoSignalType(fullRange: fullRange)
        }
        let rate = settings.frameRate
        vui.timing = TimingInfo(numUnitsInTick: UInt32(rate.denominator), timeScale: UInt32(rate.numerator) * 2,
                                fixedFrameRate: true)
        vui.bitstreamRestriction = BitstreamRestriction(maxNumReorderFrames: plan.bFrames > 0 ? 1 : 0,
                                                        maxDecFrameBuffering: planner.maxReferences)
        sps.vui = vui
        self.sps = sps

        var pps = PictureParameterSet(entropyCoding: plan.entropy == .cabac ? .cabac : .cavlc)
        if plan.profile == .high {
            pps.highProfileExtension = .init(transform8x8Mode: true, secondChromaQpIndexOffset: 0)
        }
        if plan.rateControl == .cqp {
            // x264's ratios for --qp: I-pictures 3 finer (ipratio 1.4), B 2 coarser (pbratio 1.3).
            let p = plan.qp
            fixedQP = (i: max(0, p - 3), p: p, b: min(51, p + 2))
            pps.picInitQp = p
        } else {
            fixedQP = nil
        }
        self.pps = pps
    }

    /// SliceQPY for a picture type in CQP mode, else the PPS's initial QP.
    func sliceQP(_ kind: PlannedPicture.Kind) -> Int {
        guard let fixedQP else { return pps.picInitQp }
        switch kind {
        case .idr: return fixedQP.i
        case .p: return fixedQP.p
        case .b: return fixedQP.b
        }
    }

    func sliceHeader(for picture: PlannedPicture) -> SliceHeader {
        guard case .type0(let log2MaxPocLsb) = sps.pictureOrderCount else { preconditionFailure() }
        let type: SliceHeader.SliceType = switch picture.kind {
        case .idr: .i
        case .p: .p
        case .b: .b
        }
        var header = SliceHeader(sliceType: type, frameNum: picture.frameNum,
                                 idrPicId: picture.kind == .idr ? picture.idrPicId : nil,
                                 picOrderCntLsb: picture.pictureOrderCount % (1 << log2MaxPocLsb),
                                 isReference: picture.isReference)
        header.sliceQpDelta = sliceQP(picture.kind) - pps.picInitQp
        return header
    }
}
