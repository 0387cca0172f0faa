import Foundation
import Hummingbird
import NIOCore
import Testing
@testable import VTLiveServer

/// The HLS window as players fetch it: `LiveStream` fed as `LiveFeed` feeds it, read through
/// the routes.
@Suite struct HLSRoutesTests {
    /// Part durations of every segment: four parts, the last a picture longer (2.1 s in all).
    static let partDurations = [0.5, 0.5, 0.5, 0.6]

    /// The bytes of part `index` of segment `sequence`: made-up, but each part's its own.
    static func partBytes(_ sequence: Int, _ index: Int) -> String { "[moof \(sequence).\(index)][mdat]" }

    /// Publishes parts `parts` of segment `sequence`, closing it with its last part.
    static func publish(_ stream: LiveStream, segment sequence: Int, parts: Range<Int> = 0 ..< 4) {
        for index in parts {
            stream.publishPart(ByteBuffer(string: partBytes(sequence, index)), duration: partDurations[index],
                               independent: index == 0, endsSegment: index == partDurations.count - 1)
        }
    }

    /// A stream with segments 0 and 1 complete and two parts of segment 2.
    static func startedStream(_ server: LiveServer) {
        server.stream.start(initSegment: ByteBuffer(string: "[ftyp][moov]"), codec: "avc1.64001f")
        publish(server.stream, segment: 0)
        publish(server.stream, segment: 1)
        publish(server.stream, segment: 2, parts: 0 ..< 2)
    }

    static func partLines(_ sequence: Int, parts: Int) -> String {
        (0 ..< parts).map { index in
            "#EXT-X-PART:DURATION=\(String(format: "%.3f", partDurations[index])),URI=\"live/\(sequence).\(index).m4s\""
                + (index == 0 ? ",INDEPENDENT=YES\n" : "\n")
        }.joined()
    }

    @Test func thePlaylistListsSegmentsPartsAndTheNextPart() async throws {
        let server = TestServer.make()
        Self.startedStream(server)
        try await TestServer.test(server, .router) { client in
            let response = try await client.execute(uri: "/live.m3u8", method: .get)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/vnd.apple.mpegurl")
            // 2.1 s rounds to 2 (RFC 8216bis 4.4.3.1); the longest part, 0.6 s, is the part target.
            let expected = """
                #EXTM3U
                #EXT-X-VERSION:9
                #EXT-X-TARGETDURATION:2
                #EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.800
                #EXT-X-PART-INF:PART-TARGET=0.600
                #EXT-X-MEDIA-SEQUENCE:0
                #EXT-X-MAP:URI="live/init.mp4"

                """
                + Self.partLines(0, parts: 4) + "#EXTINF:2.100,\nlive/0.m4s\n"
                + Self.partLines(1, parts: 4) + "#EXTINF:2.100,\nlive/1.m4s\n"
                + Self.partLines(2, parts: 2)
                + "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"live/2.2.m4s\"\n"
            #expect(response.text == expected)
        }
    }

    /// A player opening the stream is answered once the playlist lists the three complete
    /// segments it starts on (Chromium's own player refuses fewer), not before.
    @Test func theFirstPlaylistWaitsForTheSegmentsAPlayerStartsOn() async throws {
        let server = TestServer.make()
        server.stream.start(initSegment: ByteBuffer(string: "[ftyp][moov]"), codec: "avc1.64001f")
        Self.publish(server.stream, segment: 0)
        try await TestServer.test(server, .router) { client in
            let opening = Task { try await client.execute(uri: "/live.m3u8", method: .get) }
            for sequence in 1 ... 2 {
                try await Task.sleep(for: .milliseconds(300))
                Self.publish(server.stream, segment: sequence)
            }
            let playlist = try await opening.value.text
            #expect(playlist.contains("live/0.m4s") && playlist.contains("live/1.m4s") && playlist.contains("live/2.m4s"),
                    "\(playlist)")
        }
    }

    @Test func theFilesAreTheBytesPublished() async throws {
        let server = TestServer.make()
        try await TestServer.test(server, .router) { client in
            let early = try await client.execute(uri: "/live/init.mp4", method: .get)
            #expect(early.status == .notFound)
            Self.startedStream(server)

            let initSegment = try await client.execute(uri: "/live/init.mp4", method: .get)
            #expect(initSegment.status == .ok && initSegment.headers[.contentType] == "video/mp4")
            #expect(initSegment.text == "[ftyp][moov]")
            let segment = try await client.execute(uri: "/live/1.m4s", method: .get)
            #expect(segment.status == .ok)
            #expect(segment.text == (0 ..< 4).map { Self.partBytes(1, $0) }.joined())
            let part = try await client.execute(uri: "/live/2.1.m4s", method: .get)
            #expect(part.status == .ok && part.text == Self.partBytes(2, 1))

            // The segment being made is not whole yet; a part two ahead is not worth waiting for.
            for name in ["2.m4s", "2.3.m4s", "4.0.m4s", "9.m4s", "x.m4s", "1.2.3.m4s", "-1.m4s", "1..m4s", "1.m4", "init.mp4x"] {
                let response = try await client.execute(uri: "/live/\(name)", method: .get)
                #expect(response.status == .notFound, "\(name)")
            }
        }
    }

    @Test func oldSegmentsFallOutOfTheWindow() async throws {
        let server = TestServer.make()
        server.stream.start(initSegment: ByteBuffer(string: "[ftyp][moov]"), codec: nil)
        for sequence in 0 ..< 9 { Self.publish(server.stream, segment: sequence) }
        Self.publish(server.stream, segment: 9, parts: 0 ..< 1)
        try await TestServer.test(server, .router) { client in
            // The kept whole segments (3 to 8) and the one being made (9).
            let first = 9 - HLSWindow.keptSegments
            let playlist = try await client.execute(uri: "/live.m3u8", method: .get).text
            #expect(playlist.contains("#EXT-X-MEDIA-SEQUENCE:\(first)\n"))
            #expect(playlist.components(separatedBy: "#EXTINF:").count - 1 == HLSWindow.keptSegments)
            #expect(!playlist.contains("live/\(first - 1).m4s") && playlist.contains("live/\(first).m4s"))
            #expect(playlist.contains("live/8.m4s"))
            // Parts are listed for the last three segments only: 7, 8 and 9.
            #expect(!playlist.contains("live/6.3.m4s") && playlist.contains("live/7.0.m4s") && playlist.contains("live/9.0.m4s"))
            #expect(playlist.hasSuffix("#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"live/9.1.m4s\"\n"))

            for gone in ["0.m4s", "\(first - 1).m4s", "\(first - 1).0.m4s", "\(first - 1).3.m4s"] {
                #expect(try await client.execute(uri: "/live/\(gone)", method: .get).status == .notFound, "\(gone)")
            }
            let kept = try await client.execute(uri: "/live/\(first).m4s", method: .get)
            #expect(kept.status == .ok && kept.text == (0 ..< 4).map { Self.partBytes(first, $0) }.joined())
            #expect(try await client.execute(uri: "/live/\(first).0.m4s", method: .get).text == Self.partBytes(first, 0))
        }
    }

    @Test func aNewTimeLineStartsOverWithTheNextSequenceNumber() async throws {
        let server = TestServer.make()
        Self.startedStream(server)
        server.stream.start(initSegment: ByteBuffer(string: "[ftyp][moov 2]"), codec: nil)
        Self.publish(server.stream, segment: 3)
        try await TestServer.test(server, .router) { client in
            #expect(try await client.execute(uri: "/live/init.mp4", method: .get).text == "[ftyp][moov 2]")
            let playlist = try await client.execute(uri: "/live.m3u8", method: .get).text
            #expect(playlist.contains("#EXT-X-MEDIA-SEQUENCE:3\n") && playlist.contains("live/3.m4s"))
            #expect(try await client.execute(uri: "/live/1.m4s", method: .get).status == .notFound)
            #expect(try await client.execute(uri: "/live/3.m4s", method: .get).status == .ok)
        }
    }

    @Test func aBlockingReloadTooFarAheadOrNotANumberIsABadRequest() async throws {
        let server = TestServer.make()
        Self.startedStream(server)
        try await TestServer.test(server, .router) { client in
            for (query, error) in [("_HLS_msn=4", "_HLS_msn is too far ahead"), ("_HLS_msn=99", "_HLS_msn is too far ahead"),
                                   ("_HLS_msn=two", "_HLS_msn must be a number"), ("_HLS_msn=-1", "_HLS_msn must be a number"),
                                   ("_HLS_msn=2&_HLS_part=x", "_HLS_part must be a number"),
                                   ("_HLS_msn=2&_HLS_part=-1", "_HLS_part must be a number")] {
                let response = try await client.execute(uri: "/live.m3u8?\(query)", method: .get)
                #expect(response.status == .badRequest, "\(query)")
                #expect(response.text == #"{"ok":false,"error":"\#(error)"}"#, "\(query)")
            }
            // What exists is answered at once.
            for query in ["_HLS_msn=0", "_HLS_msn=1", "_HLS_msn=2&_HLS_part=1"] {
                let response = try await client.execute(uri: "/live.m3u8?\(query)", method: .get)
                #expect(response.status == .ok && response.text.hasPrefix("#EXTM3U\n"), "\(query)")
            }
        }
    }

    // Whether the part comes before or after the request waits for it, the answer is the same.
    @Test func aBlockingReloadAndTheNextPartAreAnsweredWhenThePartComes() async throws {
        let server = TestServer.make()
        Self.startedStream(server)
        try await TestServer.test(server, .router) { client in
            let reload = Task { try await client.execute(uri: "/live.m3u8?_HLS_msn=2&_HLS_part=2", method: .get) }
            let next = Task { try await client.execute(uri: "/live/2.2.m4s", method: .get) }
            Self.publish(server.stream, segment: 2, parts: 2 ..< 3)
            let playlist = try await reload.value
            #expect(playlist.status == .ok && playlist.text.contains("URI=\"live/2.2.m4s\"\n"))
            #expect(playlist.text.hasSuffix("#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"live/2.3.m4s\"\n"))
            let part = try await next.value
            #expect(part.status == .ok && part.text == Self.partBytes(2, 2))
        }
    }
}

/// The window alone.
@Suite struct HLSWindowTests {
    static func part(_ text: String, _ duration: Double = 0.5, independent: Bool = false) -> HLSWindow.Part {
        HLSWindow.Part(bytes: ByteBuffer(string: text), duration: duration, independent: independent)
    }

    @Test func partsBeforeTheFirstTimeLineAreDropped() {
        var window = HLSWindow(partTarget: 0.5)
        window.add(Self.part("lost"))
        #expect(window.isEmpty && window.segments.isEmpty)
        window.restart(initSegment: ByteBuffer(string: "init"))
        #expect(window.isEmpty && window.currentSequence == 0)
    }

    @Test func whatABlockingRequestMayWaitFor() {
        var window = HLSWindow(partTarget: 0.5)
        window.restart(initSegment: ByteBuffer(string: "init"))
        window.add(Self.part("0.0", independent: true))
        #expect(window.has(sequence: 0, part: 0) && !window.has(sequence: 0, part: 1) && !window.has(sequence: 0, part: nil))
        #expect(window.isNext(sequence: 0, part: 1) && window.isNext(sequence: 1, part: 0))
        #expect(!window.isNext(sequence: 0, part: 2) && !window.isNext(sequence: 1, part: 1))
        window.closeSegment()
        #expect(window.currentSequence == 1)
        #expect(window.has(sequence: 0, part: nil) && window.has(sequence: 0, part: 5) && !window.has(sequence: 1, part: 0))
        #expect(window.isNext(sequence: 1, part: 0) && !window.isNext(sequence: 0, part: 1))
        // Closing twice, or with no part, makes no empty segment.
        window.closeSegment()
        window.add(Self.part("1.0", independent: true))
        #expect(window.segments.map(\.sequence) == [0, 1])
        #expect(window.has(sequence: 0, part: nil))
        #expect(window.segmentBytes(0).map { String(buffer: $0) } == "0.0")
        #expect(window.segmentBytes(1) == nil)
    }

    @Test func aPartLongerThanTheTargetRaisesIt() {
        var window = HLSWindow(partTarget: 0.5)
        window.restart(initSegment: ByteBuffer(string: "init"))
        window.add(Self.part("a", 0.4))
        #expect(window.partTarget == 0.5)
        window.add(Self.part("b", 0.5334))
        #expect(window.partTarget == 0.534)
    }
}
