import Foundation
import Hummingbird
import NIOCore

extension LiveServer {
    func makeRouter() -> Router<BasicRequestContext> {
        // Every GET resource answers HEAD too (RFC 9110 9.3.2): the GET's head without its body.
        let router = Router(context: BasicRequestContext.self, options: .autoGenerateHeadEndpoints)
        if let passwords = settings.passwords {
            router.add(middleware: BasicAuthentication(passwords: passwords, delay: settings.refusalDelay,
                                                       failures: { [self] in authFailures.add(1, ordering: .relaxed) }))
        }
        router.get("/") { _, _ in Self.page(PackageResources.index_html, type: "text/html; charset=utf-8") }
        router.get("/live.js") { _, _ in Self.page(PackageResources.live_js, type: "text/javascript; charset=utf-8") }
        router.get("/style.css") { _, _ in Self.page(PackageResources.style_css, type: "text/css; charset=utf-8") }

        if let why = settings.liveVideoAbsent {
            for path in ["/live.mp4", "/live.m3u8", "/live/:name"] {
                router.get(RouterPath(path)) { _, _ in Self.failure(.notFound, why) }
            }
        } else {
            router.get("/live.mp4") { [stream] _, _ in try Self.liveMP4(stream) }
            // A viewer joins when its answer starts; HEAD has no answer to start.
            router.head("/live.mp4") { [stream] _, _ in
                Response(status: .ok, headers: [.contentType: stream.contentType, .cacheControl: "no-store"],
                         body: Self.endless)
            }
            router.get("/live.m3u8") { [stream] request, _ in await Self.playlist(stream, request: request) }
            router.get("/live/:name") { [stream] _, context in
                try await Self.hlsFile(stream, name: context.parameters.get("name") ?? "")
            }
        }
        if let why = settings.jpegsAbsent {
            for path in ["/snapshot.jpg", "/stream.mjpeg"] {
                router.get(RouterPath(path)) { _, _ in Self.failure(.notFound, why) }
            }
        } else {
            router.get("/snapshot.jpg") { [hooks, jpegs] _, _ in try await Self.snapshot(hooks, jpegs: jpegs) }
            router.get("/stream.mjpeg") { [jpegs] _, _ in Self.mjpeg(jpegs) }
            router.head("/stream.mjpeg") { _, _ in
                Response(status: .ok, headers: [.contentType: Self.mjpegType, .cacheControl: "no-store"], body: Self.endless)
            }
        }

        router.get("/status") { [hooks] _, _ in
            Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                     body: ResponseBody(byteBuffer: ByteBuffer(bytes: hooks.status())))
        }
        router.get("/metrics") { [self] _, _ in
            let text = metrics.exposition(hooks.metrics() + serverMetrics())
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: text)))
        }
        router.post("/events") { [hooks, settings] request, context in
            var request = request
            return try await Self.event(hooks, request: &request, limit: settings.maxBodyBytes, context: context)
        }
        router.post("/stop") { [hooks] _, _ in
            hooks.stop()
            return Self.json(#"{"ok":true}"#)
        }
        router.get("/recordings") { [library] request, _ in Self.listing(library, request: request) }
        router.get("/recordings/:folder/:name") { [library] request, context in
            try await Self.download(library, folder: context.parameters.get("folder") ?? "",
                                    name: context.parameters.get("name") ?? "", request: request)
        }
        return router
    }

    /// What the server did so far, as the summary's `http` reports it.
    public var report: HTTPReport {
        let stream = stream.figures
        return HTTPReport(address: settings.address.withPort(port).description, liveViewers: stream.viewers,
                          liveViewersServed: stream.viewersServed, liveViewersCutOff: stream.viewersCutOff,
                          connectionsTimedOut: guardCounters.timedOut.load(ordering: .relaxed),
                          clientsStalled: guardCounters.stalledClients.load(ordering: .relaxed),
                          authFailures: authFailures.load(ordering: .relaxed))
    }

    func serverMetrics() -> [LiveMetric] {
        let figures = report
        let counts: [(String, LiveMetric.Kind, Int, String)] = [
            ("vtrecord_http_live_viewers", .gauge, figures.liveViewers, "Viewers of /live.mp4 now."),
            ("vtrecord_http_live_viewers_total", .counter, figures.liveViewersServed, "Viewers of /live.mp4 since the start."),
            ("vtrecord_http_live_viewers_cut_off_total", .counter, figures.liveViewersCutOff,
             "Viewers of /live.mp4 cut off for falling too far behind."),
            ("vtrecord_http_connections_timed_out_total", .counter, figures.connectionsTimedOut,
             "Connections closed for not sending a whole request in time (idle or slow)."),
            ("vtrecord_http_clients_stalled_total", .counter, figures.clientsStalled,
             "Connections closed for not reading what they were sent."),
            ("vtrecord_http_auth_failures_total", .counter, figures.authFailures, "Requests refused for a wrong password."),
            ("vtrecord_http_mjpeg_viewers", .gauge, jpegs.clients, "Viewers of /stream.mjpeg now."),
        ]
        return counts.map { name, kind, value, help in LiveMetric(name, kind, Double(value), help: help) }
    }

    // MARK: Answers

    static func page(_ bytes: [UInt8], type: String) -> Response {
        Response(status: .ok, headers: [.contentType: type, .cacheControl: "no-cache"],
                 body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func json(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                 body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    static func failure(_ status: HTTPResponse.Status, _ text: String) -> Response {
        let encoded = (try? JSONEncoder().encode(text)).map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
        return json(#"{"ok":false,"error":"# + encoded + "}", status: status)
    }

    /// An endless fragmented MP4 from the next keyframe; the connection closes when it ends.
    static func liveMP4(_ stream: LiveStream) throws -> Response {
        let viewer: LiveViewer
        do {
            viewer = try stream.join()
        } catch .tooManyViewers {
            return failure(.serviceUnavailable, "too many viewers of the live stream")
        } catch {
            return failure(.serviceUnavailable, "the recording is over")
        }
        let headers: HTTPFields = [.contentType: stream.contentType, .cacheControl: "no-store", .connection: "close"]
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            defer { stream.leave(viewer) }
            while let chunk = await viewer.next() {
                try await writer.write(chunk)
            }
            try await writer.finish(nil)
        })
    }

    /// The longest a player opening the HLS stream waits for the segments it starts on: three
    /// of the default 2 s keyframe interval's, and the one being made.
    static let hlsStartWait: Duration = .seconds(10)

    /// The HLS playlist once a player can start on it or, with `_HLS_msn` (and `_HLS_part`),
    /// once that segment or part exists (a blocking playlist reload), at most three target
    /// durations later.
    static func playlist(_ stream: LiveStream, request: Request) async -> Response {
        stream.notePlaylistRequest()
        let query = request.uri.queryParameters
        if let msnText = query["_HLS_msn"] {
            guard let msn = Int(String(msnText)), msn >= 0 else { return failure(.badRequest, "_HLS_msn must be a number") }
            let part = query["_HLS_part"].flatMap { Int(String($0)) }
            if query["_HLS_part"] != nil && (part == nil || part! < 0) {
                return failure(.badRequest, "_HLS_part must be a number")
            }
            // A request further ahead than the next segment cannot be answered (RFC 8216bis 6.2.5.2).
            guard msn <= stream.hlsCurrentSequence + 1 else { return failure(.badRequest, "_HLS_msn is too far ahead") }
            guard await stream.waitFor(sequence: msn, part: part, timeout: .seconds(6)) else {
                return failure(.serviceUnavailable, "the stream did not reach that part in time")
            }
        } else {
            // A player opening the stream needs segments to start on (three, RFC 8216 6.3.3):
            // the first answer waits for them, as a blocking reload waits for its part, or for
            // the stream's end, at most `hlsStartWait`.
            let deadline = ContinuousClock.now + hlsStartWait
            while !stream.hlsIsStartable, ContinuousClock.now < deadline,
                  await stream.waitFor(sequence: stream.hlsCurrentSequence, part: nil, timeout: deadline - ContinuousClock.now) {}
        }
        guard let text = stream.hlsPlaylist(prefix: "live/") else {
            return failure(.serviceUnavailable, "the live stream has not started")
        }
        return Response(status: .ok, headers: [.contentType: "application/vnd.apple.mpegurl", .cacheControl: "no-cache"],
                        body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// `init.mp4`, a segment `N.m4s` or a part `N.P.m4s` (waited for if it is the next one).
    static func hlsFile(_ stream: LiveStream, name: String) async throws -> Response {
        let headers: HTTPFields = [.contentType: "video/mp4", .cacheControl: "no-cache"]
        if name == "init.mp4" {
            guard let bytes = stream.hlsInit else { return failure(.notFound, "the live stream has not started") }
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: bytes))
        }
        guard name.hasSuffix(".m4s") else { return failure(.notFound, "no such part of the live stream") }
        let numbers = name.dropLast(4).split(separator: ".", omittingEmptySubsequences: false).map { Int($0) }
        guard !numbers.isEmpty, numbers.count <= 2, numbers.allSatisfy({ ($0 ?? -1) >= 0 }) else {
            return failure(.notFound, "no such part of the live stream")
        }
        let bytes: ByteBuffer?
        if numbers.count == 2 {
            bytes = await stream.hlsPart(numbers[0]!, numbers[1]!, timeout: .seconds(3))
        } else {
            bytes = stream.hlsSegment(numbers[0]!)
        }
        guard let bytes else { return failure(.notFound, "that part of the live stream is gone or not there yet") }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: bytes))
    }

    /// The camera's next JPEG when it sends JPEGs, else a JPEG of the next picture.
    static func snapshot(_ hooks: Hooks, jpegs: JPEGFeed) async throws -> Response {
        let jpeg: ByteBuffer
        if jpegs.fromCamera {
            guard let (next, _) = await jpegs.next(after: 0, timeout: .seconds(5)) else {
                return failure(.serviceUnavailable, "no picture came from the camera within 5 s")
            }
            jpeg = next
        } else {
            guard let snapshot = hooks.snapshot else { return failure(.notFound, "no stills from this recording") }
            do {
                jpeg = ByteBuffer(bytes: try await snapshot())
            } catch {
                return failure(.serviceUnavailable, "no still: \(error)")
            }
        }
        return Response(status: .ok, headers: [.contentType: "image/jpeg", .cacheControl: "no-store"],
                        body: ResponseBody(byteBuffer: jpeg))
    }

    /// The body of HEAD for an answer without an end: no length, as the GET has none (an empty
    /// body would say Content-Length: 0, that the stream is empty).
    static let endless = ResponseBody { writer in try await writer.finish(nil) }

    static let mjpegBoundary = "vtrecordframe"
    static let mjpegType = "multipart/x-mixed-replace;boundary=\(mjpegBoundary)"

    /// Motion JPEG as ustreamer and IP cameras serve it: a multipart answer, one JPEG a part,
    /// each the newest there is when the client is ready for it.
    static func mjpeg(_ jpegs: JPEGFeed) -> Response {
        guard jpegs.join() else { return failure(.serviceUnavailable, "too many viewers of the MJPEG stream") }
        let boundary = mjpegBoundary
        let headers: HTTPFields = [.contentType: mjpegType,
                                   .cacheControl: "no-store", .connection: "close"]
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            defer { jpegs.leave() }
            var seen: UInt64 = 0
            while let (jpeg, sequence) = await jpegs.next(after: seen, timeout: nil) {
                seen = sequence
                let head = "--\(boundary)\r\nContent-Type: image/jpeg\r\nContent-Length: \(jpeg.readableBytes)\r\n\r\n"
                try await writer.write(contentsOf: [ByteBuffer(string: head), jpeg, ByteBuffer(string: "\r\n")])
            }
            try await writer.finish(nil)
        })
    }

    /// `POST /events`: JSON `{"label": "door", "duration": 10}`, or the same as query
    /// parameters; both optional.
    static func event(_ hooks: Hooks, request: inout Request, limit: Int, context: BasicRequestContext) async throws -> Response {
        guard let take = hooks.event else { return failure(.notFound, "there is no --events to keep a clip in") }
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: limit)
        } catch {
            return failure(.contentTooLarge, "the request's body is over \(limit) bytes")
        }
        var label = request.uri.queryParameters["label"].map(String.init)
        var duration = request.uri.queryParameters["duration"].map { Double(String($0)) }
        if body.readableBytes > 0 {
            struct Body: Decodable {
                var label: String?
                var duration: Double?
            }
            guard let decoded = try? JSONDecoder().decode(Body.self, from: Data(body.readableBytesView)) else {
                return failure(.badRequest, #"the body must be JSON: {"label": "door", "duration": 10}"#)
            }
            label = decoded.label ?? label
            if let seconds = decoded.duration { duration = .some(seconds) }
        }
        if case .some(nil) = duration { return failure(.badRequest, "duration must be a number of seconds") }
        if let error = take(label, duration ?? nil) { return failure(.badRequest, error) }
        return json(#"{"ok":true}"#)
    }

    // MARK: Recordings

    static func listing(_ library: RecordingLibrary, request: Request) -> Response {
        let entries = library.list()
        let accept = request.headers[.accept] ?? ""
        if request.uri.queryParameters["format"] == "html"
            || (request.uri.queryParameters["format"] == nil && accept.contains("text/html")) {
            return page(Array(RecordingListPage.html(entries).utf8), type: "text/html; charset=utf-8")
        }
        struct Listing: Encodable { var files: [RecordingLibrary.Entry] }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(Listing(files: entries))) ?? Data("{\"files\":[]}".utf8)
        return Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A file the templates made, whole or the one range asked for; `?thumbnail` for its still.
    static func download(_ library: RecordingLibrary, folder: String, name: String, request: Request) async throws -> Response {
        guard let entry = library.find(folder: folder, name: name) else {
            return failure(.notFound, "no such recording")
        }
        if request.uri.queryParameters["thumbnail"] != nil {
            guard let jpeg = library.thumbnail(of: entry) else { return failure(.notFound, "no picture in that file yet") }
            return Response(status: .ok, headers: [.contentType: "image/jpeg", .cacheControl: "no-cache"],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: jpeg)))
        }
        let descriptor = open(entry.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return failure(.notFound, "the file cannot be read") }
        // The length as the file is now: one still being written grows behind the answer.
        let length = Int64(lseek(descriptor, 0, SEEK_END))
        let range = ByteRange(header: request.headers[.range], length: length)
        var headers: HTTPFields = [.contentType: Self.mediaType(of: name), .acceptRanges: "bytes",
                                   .contentDisposition: "inline; filename=\"\(name.replacingOccurrences(of: "\"", with: "_"))\""]
        let status: HTTPResponse.Status
        let span: Range<Int64>
        switch range {
        case .whole:
            status = .ok
            span = 0 ..< length
        case .part(let part):
            status = .partialContent
            span = part
            headers[.contentRange] = "bytes \(part.lowerBound)-\(part.upperBound - 1)/\(length)"
        case .unsatisfiable:
            close(descriptor)
            headers[.contentRange] = "bytes */\(length)"
            return Response(status: .rangeNotSatisfiable, headers: headers)
        }
        if request.method == .head {
            close(descriptor)
            headers[.contentLength] = String(span.count)
            return Response(status: status, headers: headers)
        }
        return Response(status: status, headers: headers, body: ResponseBody(contentLength: Int(span.count)) { writer in
            defer { close(descriptor) }
            var offset = span.lowerBound
            var buffer = ByteBuffer()
            while offset < span.upperBound {
                let want = Int(min(256 << 10, span.upperBound - offset))
                buffer.clear(minimumCapacity: want)
                let read = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: want) { raw in
                    max(0, pread(descriptor, raw.baseAddress, want, off_t(offset)))
                }
                // A file cut short under the answer ends it early; the client sees the length fall short.
                guard read > 0 else { throw LiveServerError.fileShrank }
                offset += Int64(read)
                try await writer.write(buffer)
            }
            try await writer.finish(nil)
        })
    }

    static func mediaType(of name: String) -> String {
        switch (name as NSString).pathExtension.lowercased() {
        case "mp4", "m4v": "video/mp4"
        case "mkv": "video/x-matroska"
        case "ts": "video/mp2t"
        case "h264", "264": "video/h264"
        case "jpg", "jpeg": "image/jpeg"
        default: "application/octet-stream"
        }
    }
}

enum LiveServerError: Error {
    case fileShrank
}
