/// A reference picture as the decoder's picture buffer holds it.
struct ReferencePicture: Sendable, Equatable {
    /// The reconstructed-surface slot the picture was written to.
    var slot: Int
    var frameNum: Int
    var pictureOrderCount: Int
}

/// One picture to code, in decode order, with everything its parameter buffers and slice
/// header need.
struct PlannedPicture: Sendable, Equatable {
    enum Kind: Sendable { case idr, p, b }

    var kind: Kind
    /// Position of the source frame in arrival (display) order, counted from the first frame.
    var displayIndex: Int
    var frameNum: Int
    /// TopFieldOrderCnt = BottomFieldOrderCnt: 2 × frames since the last IDR in display order.
    var pictureOrderCount: Int
    /// idr_pic_id of an IDR picture (0 otherwise).
    var idrPicId: Int
    /// B-pictures are not references (nal_ref_idc 0); everything else is.
    var isReference: Bool
    /// The reconstructed-surface slot this picture is written to.
    var slot: Int
    /// The decoded picture buffer before this picture: every short-term reference.
    var references: [ReferencePicture]
    /// The active entries of the default reference lists (clause 8.2.4.2).
    var list0: [ReferencePicture]
    var list1: [ReferencePicture]

    /// The picture writes or reads the reconstructed surface `slot`.
    func touches(slot other: Int) -> Bool {
        slot == other || references.contains { $0.slot == other }
    }
}

/// Decides picture types, coding order and reference bookkeeping for an encoder that is
/// handed every decision (VA-API): IDR every `keyInterval` frames or on demand, runs of up to
/// `bFrames` B-pictures between P anchors, frame_num modulo MaxFrameNum (reset at IDR), POC
/// type 0, sliding-window reference marking, idr_pic_id alternating between consecutive IDRs.
///
/// Frames go in in display order; pictures come out in decode order when they can be coded:
/// a B-candidate waits for the next anchor. A run cut short by an IDR or by the end of the
/// stream ends with a P, so no picture references one that never comes.
struct H264ReferencePlanner: Sendable {
    let keyInterval: Int
    let bFrames: Int
    let log2MaxFrameNum: Int
    /// max_num_ref_frames: the previous anchor, plus the next one when B-pictures sit between.
    let maxReferences: Int
    /// Reconstructed surfaces: every reference, the picture being coded, and spares so that
    /// pictures still being coded keep theirs.
    let slotCount: Int

    private var nextDisplayIndex = 0
    private var lastIDRDisplayIndex = 0
    private var idrCount = 0
    private var prevRefFrameNum = 0
    private var pendingB: [Int] = []
    private var dpb: [ReferencePicture] = []
    /// When each slot was last written (in pictures coded), for least-recently-used reuse.
    private var lastWritten: [Int]
    private var picturesCoded = 0

    /// `extraSlots`: surfaces beyond the references and the current picture, one for each
    /// picture that may still be in the encoder's hands.
    init(keyInterval: Int, bFrames: Int, log2MaxFrameNum: Int = 4, extraSlots: Int = 0) {
        precondition(keyInterval >= 1 && bFrames >= 0 && (4...16).contains(log2MaxFrameNum) && extraSlots >= 0)
        self.keyInterval = keyInterval
        self.bFrames = bFrames
        self.log2MaxFrameNum = log2MaxFrameNum
        self.maxReferences = bFrames > 0 ? 2 : 1
        self.slotCount = maxReferences + 1 + extraSlots
        self.lastWritten = Array(repeating: -1, count: slotCount)
    }

    /// Takes the next frame; returns the pictures that can be coded now, in decode order.
    mutating func push(forceKeyFrame: Bool = false) -> [PlannedPicture] {
        let index = nextDisplayIndex
        nextDisplayIndex += 1
        if index == 0 || forceKeyFrame || index - lastIDRDisplayIndex >= keyInterval {
            var pictures = flush()
            pictures.append(code(index, as: .idr))
            return pictures
        }
        if pendingB.count < bFrames {
            pendingB.append(index)
            return []
        }
        var pictures = [code(index, as: .p)]
        for b in pendingB { pictures.append(code(b, as: .b)) }
        pendingB.removeAll()
        return pictures
    }

    /// Codes every waiting frame: the last becomes a P anchor for the others.
    mutating func flush() -> [PlannedPicture] {
        guard let anchor = pendingB.popLast() else { return [] }
        var pictures = [code(anchor, as: .p)]
        for b in pendingB { pictures.append(code(b, as: .b)) }
        pendingB.removeAll()
        return pictures
    }

    private mutating func code(_ displayIndex: Int, as kind: PlannedPicture.Kind) -> PlannedPicture {
        let maxFrameNum = 1 << log2MaxFrameNum
        var idrPicId = 0
        let frameNum: Int
        if kind == .idr {
            dpb.removeAll()
            lastIDRDisplayIndex = displayIndex
            idrPicId = idrCount % 2
            idrCount += 1
            frameNum = 0
        } else {
            frameNum = (prevRefFrameNum + 1) % maxFrameNum
        }
        let isReference = kind != .b
        let poc = 2 * (displayIndex - lastIDRDisplayIndex)
        let used = Set(dpb.map(\.slot))
        let slot = (0..<slotCount).filter { !used.contains($0) }.min { lastWritten[$0] < lastWritten[$1] }!
        lastWritten[slot] = picturesCoded
        picturesCoded += 1

        // FrameNumWrap (8.2.4.1): references coded before a frame_num wrap count as negative.
        func wrapped(_ ref: ReferencePicture) -> Int {
            ref.frameNum > frameNum ? ref.frameNum - maxFrameNum : ref.frameNum
        }
        var list0: [ReferencePicture] = []
        var list1: [ReferencePicture] = []
        switch kind {
        case .idr:
            break
        case .p:
            list0 = dpb.sorted { wrapped($0) > wrapped($1) }
        case .b:
            let before = dpb.filter { $0.pictureOrderCount < poc }.sorted { $0.pictureOrderCount > $1.pictureOrderCount }
            let after = dpb.filter { $0.pictureOrderCount > poc }.sorted { $0.pictureOrderCount < $1.pictureOrderCount }
            list0 = before + after
            list1 = after + before
            if list1.count > 1 && list1 == list0 { list1.swapAt(0, 1) }
        }
        let picture = PlannedPicture(
            kind: kind, displayIndex: displayIndex, frameNum: frameNum, pictureOrderCount: poc,
            idrPicId: idrPicId, isReference: isReference, slot: slot, references: dpb,
            list0: Array(list0.prefix(1)), list1: Array(list1.prefix(1)))

        if isReference {
            prevRefFrameNum = frameNum
            // Sliding window (8.2.5.3): the reference with the smallest FrameNumWrap goes.
            if dpb.count == maxReferences, let oldest = dpb.indices.min(by: { wrapped(dpb[$0]) < wrapped(dpb[$1]) }) {
                dpb.remove(at: oldest)
            }
            dpb.append(ReferencePicture(slot: slot, frameNum: frameNum, pictureOrderCount: poc))
        }
        return picture
    }
}
