import Testing
import VTCore
@testable import VTEncoding

/// Picture types, decode order and reference bookkeeping for the VA-API session, checked
/// against the rules of clause 8.2 worked out by hand.
@Suite struct H264ReferencePlannerTests {
    /// Codes `count` frames (forcing keyframes at `forced`) and flushes.
    private func plan(_ planner: inout H264ReferencePlanner, frames count: Int, forced: Set<Int> = []) -> [PlannedPicture] {
        var pictures: [PlannedPicture] = []
        for index in 0..<count { pictures += planner.push(forceKeyFrame: forced.contains(index)) }
        return pictures + planner.flush()
    }

    @Test func ipppRestartsFrameNumAtEachIDRAndWrapsIt() {
        var planner = H264ReferencePlanner(keyInterval: 20, bFrames: 0, log2MaxFrameNum: 4)
        let pictures = plan(&planner, frames: 45)
        #expect(pictures.map(\.displayIndex) == Array(0..<45))
        #expect(pictures.map(\.kind) == (0..<45).map { $0 % 20 == 0 ? .idr : .p })
        // frame_num counts references since the IDR, modulo MaxFrameNum (16).
        #expect(pictures.map(\.frameNum) == (0..<45).map { ($0 % 20) % 16 })
        #expect(pictures.map(\.pictureOrderCount) == (0..<45).map { 2 * ($0 % 20) })
        // Consecutive IDRs never share idr_pic_id.
        let idrIds = pictures.filter { $0.kind == .idr }.map(\.idrPicId)
        #expect(idrIds == [0, 1, 0])
        // One reference: the previous picture; none across an IDR.
        for (index, picture) in pictures.enumerated() where picture.kind == .p {
            #expect(picture.references.count == 1)
            #expect(picture.list0 == picture.references)
            #expect(picture.list0[0].frameNum == pictures[index - 1].frameNum)
            #expect(picture.list0[0].slot == pictures[index - 1].slot)
            #expect(picture.slot != pictures[index - 1].slot)
        }
        #expect(pictures.filter { $0.kind == .idr }.allSatisfy { $0.references.isEmpty && $0.list0.isEmpty })
    }

    @Test func bPicturesWaitForTheirAnchorAndShareItsFrameNum() {
        var planner = H264ReferencePlanner(keyInterval: 30, bFrames: 2)
        let pictures = plan(&planner, frames: 7)
        // Display 0 1 2 3 4 5 6 → decode I0 P3 B1 B2 P6 B4 B5.
        #expect(pictures.map(\.displayIndex) == [0, 3, 1, 2, 6, 4, 5])
        #expect(pictures.map(\.kind) == [.idr, .p, .b, .b, .p, .b, .b])
        // B-pictures are not references: the next reference has the same frame_num.
        #expect(pictures.map(\.frameNum) == [0, 1, 2, 2, 2, 3, 3])
        #expect(pictures.map(\.isReference) == [true, true, false, false, true, false, false])
        #expect(pictures.map(\.pictureOrderCount) == [0, 6, 2, 4, 12, 8, 10])
        // B4: L0 is the earlier anchor (P3), L1 the later (P6).
        let b4 = pictures[5]
        #expect(b4.list0.map(\.pictureOrderCount) == [6])
        #expect(b4.list1.map(\.pictureOrderCount) == [12])
        #expect(Set(b4.references.map(\.pictureOrderCount)) == [6, 12])
        // P6 refers to P3, the most recent reference, with I0 still in the window.
        #expect(pictures[4].list0.map(\.pictureOrderCount) == [6])
        #expect(Set(pictures[4].references.map(\.pictureOrderCount)) == [0, 6])
        // A B-picture is written to a surface no reference occupies.
        for picture in pictures {
            #expect(!picture.references.map(\.slot).contains(picture.slot))
        }
    }

    @Test func aRunCutByAnIDROrTheEndFinishesWithAP() {
        var planner = H264ReferencePlanner(keyInterval: 4, bFrames: 3)
        let pictures = plan(&planner, frames: 7)
        // IDR at 0 and 4: frames 1–3 end with P3; 5–6 at the end with P6.
        #expect(pictures.map(\.displayIndex) == [0, 3, 1, 2, 4, 6, 5])
        #expect(pictures.map(\.kind) == [.idr, .p, .b, .b, .idr, .p, .b])
        #expect(pictures[4].references.isEmpty)
        // B5: L0 is IDR4 (POC 0 of its period), L1 is P6 (POC 4).
        #expect(pictures[6].list0.map(\.pictureOrderCount) == [0])
        #expect(pictures[6].list1.map(\.pictureOrderCount) == [4])
    }

    @Test func aForcedKeyFrameStartsANewPeriod() {
        var planner = H264ReferencePlanner(keyInterval: 10, bFrames: 0)
        let pictures = plan(&planner, frames: 15, forced: [3])
        #expect(pictures.filter { $0.kind == .idr }.map(\.displayIndex) == [0, 3, 13])
        #expect(pictures[4].pictureOrderCount == 2)
        #expect(pictures[4].frameNum == 1)
    }

    @Test func theSlidingWindowDropsTheOldestReferenceAcrossAFrameNumWrap() {
        var planner = H264ReferencePlanner(keyInterval: 100, bFrames: 1, log2MaxFrameNum: 4)
        let pictures = plan(&planner, frames: 41)
        for picture in pictures where picture.kind == .p {
            #expect(picture.references.count <= 2)
            // The most recent reference comes first in L0 even after frame_num wrapped.
            let newest = picture.references.max { $0.pictureOrderCount < $1.pictureOrderCount }
            #expect(picture.list0.first == newest)
        }
    }

    @Test func aKeyFrameForcedWhileBPicturesWaitEndsTheirRunWithAP() {
        var planner = H264ReferencePlanner(keyInterval: 100, bFrames: 2)
        let pictures = plan(&planner, frames: 8, forced: [5])
        // 0 IDR; 1 2 wait for 3 (P); 4 waits; 5 is forced: 4 becomes P, then IDR 5; 6 7 end with P7.
        #expect(pictures.map(\.displayIndex) == [0, 3, 1, 2, 4, 5, 7, 6])
        #expect(pictures.map(\.kind) == [.idr, .p, .b, .b, .p, .idr, .p, .b])
        #expect(pictures[5].references.isEmpty && pictures[5].frameNum == 0 && pictures[5].pictureOrderCount == 0)
        #expect(pictures[7].list0.map(\.pictureOrderCount) == [0] && pictures[7].list1.map(\.pictureOrderCount) == [4])
    }

    @Test func spareSlotsAreUsedLeastRecentlyWrittenFirst() {
        // One reference, one current, two spares: a surface comes back only after three others.
        var planner = H264ReferencePlanner(keyInterval: 100, bFrames: 0, extraSlots: 2)
        let pictures = plan(&planner, frames: 9)
        #expect(pictures.map(\.slot) == [0, 1, 2, 3, 0, 1, 2, 3, 0])
        // A picture never writes a surface that the previous two pictures wrote or read.
        for (index, picture) in pictures.enumerated() {
            for earlier in pictures[max(0, index - 2)..<index] {
                #expect(!earlier.touches(slot: picture.slot))
            }
        }
    }

    @Test func decodeTimesNeverPassPresentationTimes() {
        // Frames arriving unevenly (a gap after frame 1), coded I0 P2 B1 P3 with B-frames.
        let arrivals = [0, 33, 100, 133].map { MediaTime(value: Int64($0), timescale: 1000) }
        var times = DecodeTimes(delay: 1, frameDuration: MediaTime(value: 1, timescale: 30))
        for time in arrivals { times.arrived(time) }
        let decodeOrder = [0, 2, 1, 3]
        let dts = decodeOrder.map { _ in times.next() }
        for (position, display) in decodeOrder.enumerated() {
            #expect(dts[position] <= arrivals[display], "picture \(display): dts \(dts[position]) > pts \(arrivals[display])")
        }
        #expect(zip(dts, dts.dropFirst()).allSatisfy { $0 < $1 })
        // The same pictures arriving in decode order (read back from a file), with a B-pyramid's
        // depth: the same decode times as when they arrive in display order.
        let pyramid = [0, 3, 1, 2, 4]
        let shown = pyramid.map { MediaTime(value: Int64($0), timescale: 30) }
        var inDisplayOrder = DecodeTimes(delay: 2, frameDuration: MediaTime(value: 1, timescale: 30))
        for time in shown.sorted() { inDisplayOrder.arrived(time) }
        let expected = pyramid.map { _ in inDisplayOrder.next() }
        var inDecodeOrder = DecodeTimes(delay: 2, frameDuration: MediaTime(value: 1, timescale: 30))
        let streamed = shown.map { time -> MediaTime in
            inDecodeOrder.arrived(time)
            return inDecodeOrder.next()
        }
        #expect(streamed == expected)
        #expect(zip(streamed, shown).allSatisfy { $0 <= $1 })
        var plain = DecodeTimes(delay: 0, frameDuration: MediaTime(value: 1, timescale: 30))
        for time in arrivals { plain.arrived(time) }
        #expect(arrivals.map { _ in plain.next() } == arrivals)
    }
}

extension PlannedPicture.Kind: CustomTestStringConvertible {
    public var testDescription: String { "\(self)" }
}
