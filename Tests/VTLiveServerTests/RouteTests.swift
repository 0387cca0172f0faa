import Foundation
import Hummingbird
import NIOCore
import Testing
@testable import VTLiveServer

/// The routes other than recordings and HLS: the page, the summary, the metrics, events, stop,
/// the live answers, and HEAD on all of them.
@Suite struct RouteTests {
    static let codec = "avc1.64001f"

    /// A server with a live stream begun and one 100-byte recording, `seg-0.mp4`.
    static func serverWithRecording(_ folder: TemporaryDirectory) throws -> LiveServer {
        try folder.write("seg-0.mp4", Data((0 ..< 100).map { UInt8($0) }))
        let library = RecordingLibrary(sources: [try .init(kind: "recording", directory: folder.path, pattern: #"seg-[0-9]+\.mp4"#)],
                                       thumbnailer: nil, isOpen: { _ in false })
        let server = TestServer.make(library: library)
        server.stream.start(initSegment: ByteBuffer(string: "init"), codec: codec)
        return server
    }

    // On the wire, so that a body sent after a HEAD answer would break the next answer on the
    // same connection.
    @Test func everyGetResourceAnswersHeadWithItsHeadAndNoBody() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let server = try Self.serverWithRecording(folder)
        try await TestServer.test(server, .live) { client in
            for path in ["/", "/live.js", "/style.css", "/status", "/metrics", "/recordings", "/recordings/recordings/seg-0.mp4",
                         "/no-such-page", "/recordings/recordings/seg-9.mp4"] {
                let get = try await client.execute(uri: path, method: .get)
                let head = try await client.execute(uri: path, method: .head)
                #expect(head.status == get.status, "\(path)")
                #expect(head.fieldsWithoutDate == get.fieldsWithoutDate, "\(path)")
                #expect(head.headers[.contentLength] == String(get.body.readableBytes), "\(path)")
                #expect(head.body.readableBytes == 0, "\(path)")
            }
            let file = try await client.execute(uri: "/recordings/recordings/seg-0.mp4", method: .head)
            #expect(file.status == .ok && file.headers[.contentLength] == "100")
            let part = try await client.execute(uri: "/recordings/recordings/seg-0.mp4", method: .head, headers: [.range: "bytes=10-29"])
            #expect(part.status == .partialContent)
            #expect(part.headers[.contentLength] == "20" && part.headers[.contentRange] == "bytes 10-29/100")
            #expect(part.body.readableBytes == 0)
            let missing = try await client.execute(uri: "/no-such-page", method: .head)
            #expect(missing.status == .notFound)
            // The connection is still in step: the next answer is the summary, whole.
            #expect(try await client.execute(uri: "/status", method: .get).bytes == TestServer.status)
        }
    }

    @Test func headOfTheLiveStreamsAddsNoViewer() async throws {
        let server = TestServer.make()
        server.stream.start(initSegment: ByteBuffer(string: "init"), codec: Self.codec)
        try await TestServer.test(server, .live) { client in
            let live = try await client.execute(uri: "/live.mp4", method: .head)
            #expect(live.status == .ok)
            #expect(live.headers[.contentType] == "video/mp4; codecs=\"\(Self.codec)\"")
            #expect(live.headers[.cacheControl] == "no-store")
            #expect(live.body.readableBytes == 0)
            let mjpeg = try await client.execute(uri: "/stream.mjpeg", method: .head)
            #expect(mjpeg.status == .ok)
            #expect(mjpeg.headers[.contentType] == "multipart/x-mixed-replace;boundary=vtrecordframe")
            #expect(mjpeg.body.readableBytes == 0)
            // The GETs send no Content-Length (their bodies have no end), so HEAD must not
            // either, or send the GET's (RFC 9110 8.6); 0 tells a client the stream is empty.
            #expect(live.headers[.contentLength] == nil)
            #expect(mjpeg.headers[.contentLength] == nil)
            // Still in step after both.
            #expect(try await client.execute(uri: "/status", method: .get).bytes == TestServer.status)
        }
        #expect(server.stream.figures.viewers == 0 && server.stream.figures.viewersServed == 0)
        #expect(server.jpegs.clients == 0)
    }

    @Test func aViewerOfLiveMP4StartsAtAKeyFrameAfterTheInitSegment() async throws {
        let server = TestServer.make()
        server.stream.start(initSegment: ByteBuffer(string: "[init]"), codec: Self.codec)
        try await TestServer.test(server, .router) { client in
            let answer = Task { try await client.execute(uri: "/live.mp4", method: .get) }
            let joined = await TestServer.eventually { server.stream.figures.viewers == 1 }
            if joined {
                server.stream.publish(ByteBuffer(string: "[delta before]"), keyFrame: false)
                server.stream.publish(ByteBuffer(string: "[key]"), keyFrame: true)
                server.stream.publish(ByteBuffer(string: "[delta]"), keyFrame: false)
            }
            // Ends the answer whatever happened, so the wait for it is bounded.
            server.stream.end()
            let response = try await answer.value
            #expect(joined)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "video/mp4; codecs=\"\(Self.codec)\"")
            #expect(response.text == "[init][key][delta]")
        }
        #expect(server.stream.figures.viewers == 0 && server.stream.figures.viewersServed == 1)
    }

    @Test func withoutH264OrJPEGsTheLiveRoutesSayWhy() async throws {
        let server = TestServer.make {
            $0.liveVideoAbsent = "the camera sends no H.264"
            $0.jpegsAbsent = "no JPEGs"
        }
        try await TestServer.test(server, .router) { client in
            for path in ["/live.mp4", "/live.m3u8", "/live/init.mp4"] {
                let response = try await client.execute(uri: path, method: .get)
                #expect(response.status == .notFound, "\(path)")
                #expect(response.text == #"{"ok":false,"error":"the camera sends no H.264"}"#, "\(path)")
            }
            for path in ["/snapshot.jpg", "/stream.mjpeg"] {
                let response = try await client.execute(uri: path, method: .get)
                #expect(response.status == .notFound && response.text == #"{"ok":false,"error":"no JPEGs"}"#, "\(path)")
            }
        }
    }

    @Test func statusIsTheHooksBytes() async throws {
        try await TestServer.test(TestServer.make(), .router) { client in
            let response = try await client.execute(uri: "/status", method: .get)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/json")
            #expect(response.headers[.cacheControl] == "no-store")
            #expect(response.bytes == TestServer.status)
        }
    }

    @Test func snapshotIsTheHooksJPEG() async throws {
        try await TestServer.test(TestServer.make(), .router) { client in
            let response = try await client.execute(uri: "/snapshot.jpg", method: .get)
            #expect(response.status == .ok && response.headers[.contentType] == "image/jpeg")
            #expect(response.bytes == TestServer.snapshot)
        }
    }

    @Test func metricsExposeTheHooksFiguresInPrometheusText() async throws {
        let log = HookLog()
        let server = TestServer.make(log: log)
        try await TestServer.test(server, .router) { client in
            let first = try await client.execute(uri: "/metrics", method: .get)
            #expect(first.status == .ok)
            #expect(first.headers[.contentType] == "text/plain; version=0.0.4; charset=utf-8")
            let lines = first.text.split(separator: "\n").map(String.init)
            #expect(lines.contains("# HELP vtrecord_frames_captured_total Pictures captured."))
            #expect(lines.contains("# TYPE vtrecord_frames_captured_total counter"))
            #expect(lines.contains("vtrecord_frames_captured_total 42.0"))
            // The server's own figures come with them.
            #expect(lines.contains("# TYPE vtrecord_http_live_viewers gauge"))
            #expect(lines.contains("vtrecord_http_auth_failures_total 0"))

            // A counter follows the figure at each scrape.
            log.framesCaptured.store(50, ordering: .relaxed)
            let second = try await client.execute(uri: "/metrics", method: .get)
            let after = second.text.split(separator: "\n").map(String.init)
            #expect(after.contains("vtrecord_frames_captured_total 50.0"))
            #expect(!after.contains("vtrecord_frames_captured_total 42.0"))
        }
    }

    @Test func anEventReachesTheHookWithItsLabelAndDuration() async throws {
        let log = HookLog()
        try await TestServer.test(TestServer.make(log: log), .router) { client in
            let json = try await client.execute(uri: "/events", method: .post,
                                                body: ByteBuffer(string: #"{"label": "door", "duration": 10}"#))
            #expect(json.status == .ok && json.text == #"{"ok":true}"#)
            let query = try await client.execute(uri: "/events?label=bell&duration=2.5", method: .post)
            #expect(query.status == .ok)
            let moment = try await client.execute(uri: "/events", method: .post)
            #expect(moment.status == .ok)
        }
        #expect(log.events.withLock { $0 } == [.init(label: "door", duration: 10), .init(label: "bell", duration: 2.5),
                                               .init(label: nil, duration: nil)])
    }

    @Test func aBadEventIsRefusedBeforeTheHook() async throws {
        let log = HookLog()
        try await TestServer.test(TestServer.make(log: log), .router) { client in
            let notJSON = try await client.execute(uri: "/events", method: .post, body: ByteBuffer(string: "door for 10 s"))
            #expect(notJSON.status == .badRequest)
            #expect(notJSON.text == #"{"ok":false,"error":"the body must be JSON: {\"label\": \"door\", \"duration\": 10}"}"#)
            let badDuration = try await client.execute(uri: "/events?duration=ten", method: .post)
            #expect(badDuration.status == .badRequest)
            #expect(badDuration.text == #"{"ok":false,"error":"duration must be a number of seconds"}"#)
            let tooLong = try await client.execute(uri: "/events", method: .post,
                                                   body: ByteBuffer(repeating: UInt8(ascii: " "), count: (64 << 10) + 1))
            #expect(tooLong.status == .contentTooLarge)
        }
        #expect(log.events.withLock { $0 }.isEmpty)
    }

    @Test func theHooksRefusalOfAnEventIsTheAnswer() async throws {
        let log = HookLog()
        log.eventRefusal.withLock { $0 = "a clip is being kept already" }
        try await TestServer.test(TestServer.make(log: log), .router) { client in
            let response = try await client.execute(uri: "/events?label=door", method: .post)
            #expect(response.status == .badRequest)
            #expect(response.text == #"{"ok":false,"error":"a clip is being kept already"}"#)
        }
        try await TestServer.test(TestServer.make(takesEvents: false), .router) { client in
            let response = try await client.execute(uri: "/events", method: .post)
            #expect(response.status == .notFound)
        }
    }

    @Test func stopCallsTheStopHookOnce() async throws {
        let log = HookLog()
        try await TestServer.test(TestServer.make(log: log), .router) { client in
            #expect(log.stops.load(ordering: .relaxed) == 0)
            let response = try await client.execute(uri: "/stop", method: .post)
            #expect(response.status == .ok && response.text == #"{"ok":true}"#)
            // Only POST stops: a link or a prefetch does not.
            #expect(try await client.execute(uri: "/stop", method: .get).status == .notFound)
        }
        #expect(log.stops.load(ordering: .relaxed) == 1)
    }
}
