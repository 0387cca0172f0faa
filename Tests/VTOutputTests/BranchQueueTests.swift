import Testing
import VTCore
@testable import VTOutput

/// What a branch lets go of when it cannot keep up: whole GOPs that have not started, and the
/// rest of the one in progress, never a picture whose GOP's start was dropped.
@Suite struct BranchQueueTests {
    static let format = VideoFormatDescription(width: 16, height: 16, sequenceParameterSets: [[0x67]],
                                               pictureParameterSets: [[0x68]])

    static func frame(_ n: Int, key: Bool, bytes: Int = 100) -> BranchPacket {
        let time = MediaTime(value: Int64(n), timescale: 30)
        return .frame(EncodedFrame(data: [UInt8](repeating: 0, count: bytes), pts: time, dts: time, isKeyFrame: key,
                                   token: FrameToken(UInt64(n))), format)
    }

    static func numbers(of waiting: BranchQueue) -> [Int] {
        var queue = waiting
        var taken: [Int] = []
        while let packet = queue.take() {
            if case .frame(let frame, _, _, _) = packet { taken.append(Int(frame.token.rawValue)) }
        }
        return taken
    }

    @Test func aFullQueueDropsTheOldestWholeGOPs() {
        var queue = BranchQueue(limits: .init(bytes: 1_000, seconds: 10))
        func offer(_ packet: BranchPacket) -> BranchQueue.Outcome { queue.offer(packet) }
        // GOPs of 4: 0-3, 4-7; room for 10 pictures of 100 bytes.
        for n in 0..<10 { #expect(offer(Self.frame(n, key: n % 4 == 0)) == .taken) }
        // 10 does not fit: the oldest GOP (0-3) goes.
        #expect(offer(Self.frame(10, key: false)) == .overflowed)
        #expect(offer(Self.frame(11, key: false)) == .taken)
        #expect(offer(Self.frame(12, key: true)) == .taken)
        #expect(Self.numbers(of: queue) == Array(4...12))
        #expect(queue.dropped == .init(packets: 4, gops: 1))
    }

    @Test func theGOPStillArrivingGoesWhenItAloneDoesNotFit() {
        var queue = BranchQueue(limits: .init(bytes: 500, seconds: 10))
        func offer(_ packet: BranchPacket) -> BranchQueue.Outcome { queue.offer(packet) }
        // The tail of a GOP being sent (no keyframe waits), then a new GOP from 3.
        for n in 1..<6 { #expect(offer(Self.frame(n, key: n == 3)) == .taken) }
        // 6 does not fit and only its own GOP could go: it goes, and 7 waits for a keyframe.
        #expect(offer(Self.frame(6, key: false)) == .overflowed)
        #expect(offer(Self.frame(7, key: false)) == .skipped)
        #expect(offer(Self.frame(8, key: true)) == .taken)
        #expect(Self.numbers(of: queue) == [1, 2, 8])
        #expect(queue.dropped == .init(packets: 5, gops: 1))
    }

    @Test func theTimeBoundCountsFromTheOldestWaitingPicture() {
        var queue = BranchQueue(limits: .init(bytes: 1_000_000, seconds: 1))
        func offer(_ packet: BranchPacket) -> BranchQueue.Outcome { queue.offer(packet) }
        for n in 0...30 { #expect(offer(Self.frame(n, key: n % 15 == 0)) == .taken) }
        // 31 is more than a second after 0: the oldest GOP goes.
        #expect(offer(Self.frame(31, key: false)) == .overflowed)
        #expect(Self.numbers(of: queue) == Array(15...31))
        #expect(queue.dropped == .init(packets: 15, gops: 1))
    }

    @Test func aStreamOpenedAgainStartsAtAKeyframe() {
        var queue = BranchQueue(limits: .init())
        func offer(_ packet: BranchPacket) -> BranchQueue.Outcome { queue.offer(packet) }
        for n in 2..<6 { _ = offer(Self.frame(n, key: n == 4)) }
        let starts = queue.startAtKeyFrame()
        #expect(starts)
        #expect(Self.numbers(of: queue) == [4, 5])
        _ = offer(Self.frame(6, key: false))
        queue.dropAll()
        let startsAgain = queue.startAtKeyFrame()
        #expect(!startsAgain)
        #expect(offer(Self.frame(7, key: false)) == .skipped)
        #expect(offer(Self.frame(8, key: true)) == .taken)
    }
}
