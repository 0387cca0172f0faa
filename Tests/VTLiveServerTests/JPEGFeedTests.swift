import NIOCore
import Testing
@testable import VTLiveServer

/// A viewer of /stream.mjpeg held back for a moment takes up where it left off; one held back
/// longer than the feed keeps skips to the oldest it still has, never growing a backlog.
@Suite struct JPEGFeedTests {
    static func publish(_ feed: JPEGFeed, _ numbers: ClosedRange<UInt8>) {
        for number in numbers { feed.publish(bytes: [number]) }
    }

    @Test func aClientHeldBackBrieflyMissesNothing() async {
        let feed = JPEGFeed(fromCamera: true)
        Self.publish(feed, 1...3)
        var taken: [UInt8] = []
        var sequence: UInt64 = 1
        while let (buffer, next) = await feed.next(after: sequence, timeout: .milliseconds(10)) {
            taken.append(buffer.getInteger(at: 0, as: UInt8.self)!)
            sequence = next
        }
        #expect(taken == [2, 3])
    }

    @Test func aClientHeldBackLongerSkipsToTheOldestKept() async throws {
        let feed = JPEGFeed(fromCamera: true)
        Self.publish(feed, 1...UInt8(2 + JPEGFeed.kept))
        let (buffer, sequence) = try #require(await feed.next(after: 1, timeout: .milliseconds(10)))
        #expect(buffer.getInteger(at: 0, as: UInt8.self) == 3)
        #expect(sequence == 3)
        feed.end()
        #expect(await feed.next(after: sequence, timeout: nil) == nil)
    }
}
