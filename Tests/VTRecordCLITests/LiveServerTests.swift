import Foundation
import Testing
import VTCore
import VTTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `--http`: the server inside a recording of the fake camera, read by clients vtrecord's
/// authors did not write: ffmpeg reads /live.mp4 and /live.m3u8 and its pictures are compared
/// with the recording's, curl fetches ranges of the recordings, Prometheus' own Python client
/// parses /metrics, headless Chromium plays the page, and a script of broken and hostile
/// requests must leave the server serving and the recording whole.
///
/// Real time, one recording at a time, each a few seconds of a 640x480 camera. Nested in
/// CameraRecordingTests, whose `.serialized` covers them: beside the stream tests' receivers,
/// Chromium and wrk took enough of the machine to make those recordings drop frames.
extension CameraRecordingTests {
    @Suite struct LiveServerTests {
        static let rate = 30

        /// Starts a recording of `camera` with `--http 127.0.0.1:0` and `arguments`; the child and
        /// the port it serves on.
        static func start(_ camera: FakeCamera, _ arguments: [String], size: String = "640x480") throws -> (ChildProcess, Int) {
            // The recording must drop nothing while its server works (Tools.vtrecordAboveTheSuite).
            let child = try ChildProcess(Tools.vtrecordAboveTheSuite
                                         + ["--device", camera.path, "--size", size, "--fps", "\(rate)",
                                            "--speed", "ultrafast", "--tune", "zerolatency", "--http", "127.0.0.1:0",
                                            "--json-summary", camera.file("summary.json")] + arguments,
                                         environment: try camera.environment())
            guard child.waitForStandardError(containing: "serving the live view on http://127.0.0.1:", timeout: .seconds(15)) else {
                child.send(SIGKILL)
                Issue.record("no server: \(child.wait().standardError)")
                throw CancellationError()
            }
            let text = child.standardErrorSoFar
            let port = try #require(text.firstMatch(of: /127\.0\.0\.1:(\d+)\//).flatMap { Int($0.1) })
            return (child, port)
        }

        /// `seconds` of /live.mp4 as ffmpeg reads it, stored as it came in an MP4 at `path`.
        static func keepLiveMP4(_ port: Int, seconds: Int, in path: String,
                                sourceLocation: SourceLocation = #_sourceLocation) throws {
            let reader = try Tools.run("ffmpeg", ["-v", "error", "-i", "http://127.0.0.1:\(port)/live.mp4", "-t", "\(seconds)",
                                                  "-c", "copy", "-f", "mp4", path])
            #expect(reader.status == 0, "\(reader.stderr)", sourceLocation: sourceLocation)
        }

        /// curl's answer: status, body, time taken.
        static func curl(_ port: Int, _ path: String, _ options: [String] = []) throws -> (status: Int, body: Data) {
            let r = try Tools.run("curl", ["-s", "--max-time", "20", "-o", "-", "-w", "\n%{http_code}"] + options
                                  + ["http://127.0.0.1:\(port)\(path)"])
            let newline = try #require(r.stdout.lastIndex(of: UInt8(ascii: "\n")), "curl: \(r.stderr)")
            let status = Int(String(decoding: r.stdout[(newline + 1)...], as: UTF8.self)) ?? 0
            return (status, Data(r.stdout[..<newline]))
        }

        /// The checksums of a framemd5 file ffmpeg wrote.
        static func framemd5(_ path: String) throws -> [String] {
            try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
                .filter { !$0.hasPrefix("#") }
                .compactMap { $0.split(separator: ",").last?.trimmingCharacters(in: .whitespaces) }
        }

        static func json(_ data: Data) -> [String: Any] {
            (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
        }

        static func summary(_ camera: FakeCamera) throws -> [String: Any] {
            json(try Data(contentsOf: URL(fileURLWithPath: camera.file("summary.json"))))
        }

        /// `received` is a run of `recorded`'s pictures, picture for picture, from where it starts.
        static func expectRun(_ received: [String], of recorded: [String], _ what: String,
                              sourceLocation: SourceLocation = #_sourceLocation) {
            guard let first = received.first, let start = recorded.firstIndex(of: first) else {
                Issue.record("\(what): \(received.count) pictures, the first not in the recording", sourceLocation: sourceLocation)
                return
            }
            let expected = Array(recorded[start ..< min(recorded.count, start + received.count)])
            #expect(received == expected, "\(what): differs from the recording's pictures from \(start)",
                    sourceLocation: sourceLocation)
        }

        @Test func theLiveStreamsAreTheRecordingsPictures() throws {
            let camera = try FakeCamera()
            // Files of 2 s: finished ones to fetch ranges of while the recording goes on.
            let (child, port) = try Self.start(camera, ["--format", "nv12", "--frames", "390", "--keyint", "2s",
                                                        "-o", camera.file("rec-{n}.mp4"), "--segment-time", "2s"])
            defer { if child.isRunning { child.send(SIGKILL) } }
            // ffmpeg reads both live forms at once for 3 s of pictures each.
            let readers = try ["live.mp4", "live.m3u8"].map { path in
                try ChildProcess(["ffmpeg", "-v", "error", "-i", "http://127.0.0.1:\(port)/\(path)", "-t", "3", "-map", "0:v",
                                  "-fps_mode", "passthrough", "-f", "framemd5", camera.file(path + ".md5")], environment: ProcessInfo.processInfo.environment)
            }
            let status = Self.json(try Self.curl(port, "/status").body)
            #expect(status["stop_reason"] as? String == "recording", "\(status)")
            #expect(status["schema"] as? Int == 1 && status["format"] != nil && status["http"] != nil, "\(status)")
            let snapshot = try Self.curl(port, "/snapshot.jpg")
            #expect(snapshot.status == 200 && snapshot.body.starts(with: [0xFF, 0xD8]) && snapshot.body.suffix(2) == Data([0xFF, 0xD9]))
            let event = try Self.curl(port, "/events", ["-X", "POST", "-d", #"{"label":"door"}"#])
            #expect(event.status == 400 && String(decoding: event.body, as: UTF8.self).contains("--events"),
                    "an event without --events: \(String(decoding: event.body, as: UTF8.self))")
            for reader in readers {
                let r = reader.wait(timeout: .seconds(30))
                #expect(r.status == 0, "\(r.standardError)")
            }
            // Seconds into the recording, the page shows its output as being written, not finished.
            let later = Self.json(try Self.curl(port, "/status").body)
            let recordingOutput = try #require((later["outputs"] as? [[String: Any]])?.first)
            #expect(later["stop_reason"] as? String == "recording" && recordingOutput["role"] as? String == "recording"
                    && recordingOutput["state"] as? String == "connected"
                    && recordingOutput["packets_written"] as? Int ?? 0 > 0, "\(recordingOutput)")

            // /metrics, parsed by Prometheus' own client, while the recording goes on.
            let metrics = try Self.curl(port, "/metrics")
            try metrics.body.write(to: URL(fileURLWithPath: camera.file("metrics.txt")))
            let parsed = try Tools.run("/usr/bin/python3", ["-c", """
                import sys
                from prometheus_client.parser import text_string_to_metric_families
                for family in text_string_to_metric_families(open(sys.argv[1]).read()):
                    for sample in family.samples:
                        print(family.type, sample.name, sample.value)
                """, camera.file("metrics.txt")])
            #expect(parsed.status == 0, "prometheus_client: \(parsed.stderr)")
            let families = parsed.stdoutText.split(separator: "\n")
            let captured = families.first { $0.hasPrefix("counter vtrecord_frames_captured_total ") }
            #expect((captured?.split(separator: " ").last).flatMap { Double($0) }.map { $0 > 0 } == true, "\(parsed.stdoutText)")
            #expect(families.contains { $0.hasPrefix("gauge vtrecord_disk_free_bytes ") }, "\(parsed.stdoutText)")

            // Ranges of a finished file, against its bytes on disk.
            let listing = Self.json(try Self.curl(port, "/recordings", ["-H", "Accept: application/json"]).body)
            let files = try #require(listing["files"] as? [[String: Any]])
            let finished = try #require(files.first { $0["open"] as? Bool == false && ($0["bytes"] as? Int ?? 0) > 1000 },
                                        "\(files)")
            let url = "/" + (try #require(finished["url"] as? String))
            let bytes = try Data(contentsOf: URL(fileURLWithPath: camera.file(try #require(finished["name"] as? String))))
            for (range, expected) in [("100-199", bytes[100...199]), ("-50", bytes.suffix(50)), ("\(bytes.count - 10)-", bytes.suffix(10))] {
                let answer = try Self.curl(port, url, ["-H", "Range: bytes=\(range)"])
                #expect(answer.status == 206 && answer.body == Data(expected), "bytes=\(range): \(answer.status)")
            }
            #expect(try Self.curl(port, url, ["-H", "Range: bytes=\(bytes.count)-"]).status == 416)
            #expect(try Self.curl(port, url).body == bytes)
            let thumbnail = try Self.curl(port, url + "?thumbnail")
            #expect(thumbnail.status == 200 && thumbnail.body.starts(with: [0xFF, 0xD8]))
            let page = try Self.curl(port, "/recordings", ["-H", "Accept: text/html"])
            #expect(String(decoding: page.body, as: UTF8.self).contains(">\(finished["name"] as? String ?? "?")</a>"))

            let r = child.wait()
            try #require(r.status == 0, "\(r.standardError)")
            let summary = try Self.summary(camera)
            #expect(summary["dropped_queue"] as? Int == 0, "\(summary)\n\(r.standardError)")
            let segments = try #require(summary["segments"] as? [String])
            let recorded = try segments.flatMap { try Tools.frameMD5s($0) }
            for path in ["live.mp4", "live.m3u8"] {
                let received = try Self.framemd5(camera.file(path + ".md5"))
                #expect(received.count >= 80, "\(path): \(received.count) pictures")
                Self.expectRun(received, of: recorded, path)
            }
        }

        /// Broken and hostile requests (http_abuse.py) with --http-auth: each is refused or
        /// answered, slow-loris connections are closed, wrong passwords wait and are counted, the
        /// server answers afterwards, POST /stop ends the recording cleanly, and it dropped nothing.
        @Test func brokenAndHostileRequestsLeaveTheServerAndTheRecordingWhole() throws {
            let camera = try FakeCamera()
            let hash = try Tools.run("openssl", ["passwd", "-6", "-salt", "vtrecordtest", "s3cret"])
            try #require(hash.status == 0)
            let passwords = camera.file("users")
            try "# viewers\nwatcher:\(hash.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines))\n"
                .write(toFile: passwords, atomically: true, encoding: .utf8)
            let (child, port) = try Self.start(camera, ["--format", "nv12", "--duration", "60s", "--keyint", "1s",
                                                        "-o", camera.file("rec-{n}.mp4"), "--segment-time", "1s",
                                                        "--http-auth", passwords])
            defer { if child.isRunning { child.send(SIGKILL) } }
            try "not a recording".write(toFile: camera.file("secret.txt"), atomically: true, encoding: .utf8)
            usleep(1_500_000)
            let auth = ["-u", "watcher:s3cret"]
            let files = Self.json(try Self.curl(port, "/recordings", auth).body)["files"] as? [[String: Any]] ?? []
            let file = try #require(files.first { $0["open"] as? Bool == false }?["url"] as? String, "\(files)")
            let abuse = try Tools.run("/usr/bin/python3", [Self.peers + "/http_abuse.py", "\(port)", "/" + file,
                                                           "--auth", "watcher:s3cret", "--seed", "7"])
            try #require(abuse.status == 0, "\(abuse.stderr)")
            let report = Self.json(abuse.stdout)
            // Nothing broken is answered as if it were fine, and nothing makes the server fail.
            let malformed = report["malformed"] as? [Any] ?? []
            #expect(malformed.count >= 40)
            for status in malformed.compactMap({ $0 as? Int }) { #expect((400 ..< 500).contains(status), "\(report)") }
            for key in ["huge_header", "many_headers"] {
                #expect((report[key] as? Int).map { (400 ..< 500).contains($0) } ?? true, "\(key): \(report[key] ?? "closed")")
            }
            let ranges = report["ranges"] as? [String: Any] ?? [:]
            #expect(ranges["bytes=0-99"] as? Int == 206 && ranges["bytes=99999999999-"] as? Int == 416, "\(ranges)")
            for (range, status) in ranges { #expect([200, 206, 416].contains(status as? Int ?? 0), "\(range): \(status)") }
            for (path, status) in report["paths"] as? [String: Any] ?? [:] {
                #expect(status as? Int != 200 && (status as? Int).map { $0 < 500 || $0 == 503 } ?? true, "\(path): \(status)")
            }
            // Three slow-loris connections, each closed about 10 s after it opened.
            let loris = report["slow_loris_closed_after"] as? [Double] ?? []
            #expect(loris.count == 3 && loris.allSatisfy { $0 > 8 && $0 < 15 }, "\(loris)")
            for (which, answer) in report["wrong_passwords"] as? [String: [Any]] ?? [:] {
                #expect(answer.first as? Int == 401 && (answer.last as? Double ?? 0) >= 0.9, "wrong password \(which): \(answer)")
            }
            #expect(report["no_password"] as? Int == 401 && report["malformed_auth"] as? Int == 401)
            #expect(report["status_after"] as? Int == 200, "\(report)")

            #expect(try Self.curl(port, "/stop", ["-X", "POST"]).status == 401, "POST /stop without a password")
            #expect(try Self.curl(port, "/stop", ["-X", "POST"] + auth).status == 200)
            let r = child.wait(timeout: .seconds(20))
            try #require(r.status == 0, "\(r.standardError)")
            let summary = try Self.summary(camera)
            #expect(summary["stop_reason"] as? String == "signal")
            #expect(summary["dropped_queue"] as? Int == 0, "\(summary)")
            let http = summary["http"] as? [String: Any] ?? [:]
            #expect(http["auth_failures"] as? Int ?? 0 >= 3, "\(http)")
            #expect(http["connections_timed_out"] as? Int ?? 0 >= 3, "\(http)")
        }

        /// A viewer of /live.mp4 that never reads, at 4 Mbit/s: cut off, while the recording and
        /// another viewer go on.
        @Test func aViewerThatNeverReadsIsCutOff() throws {
            let camera = try FakeCamera()
            let (child, port) = try Self.start(camera, ["--format", "nv12", "--frames", "360", "--bitrate", "4M",
                                                        "-o", camera.file("rec.mp4")])
            defer { if child.isRunning { child.send(SIGKILL) } }
            let stuck = try Self.connect(port, receiveBuffer: 4096)
            defer { close(stuck) }
            let request = "GET /live.mp4 HTTP/1.1\r\nHost: x\r\n\r\n"
            #expect(request.withCString { send(stuck, $0, strlen($0), 0) } == request.utf8.count)
            let reader = try ChildProcess(["ffmpeg", "-v", "error", "-i", "http://127.0.0.1:\(port)/live.mp4", "-t", "8",
                                           "-map", "0:v", "-f", "null", "-"], environment: ProcessInfo.processInfo.environment)
            let r = child.wait()
            try #require(r.status == 0, "\(r.standardError)")
            #expect(reader.wait(timeout: .seconds(20)).status == 0)
            let summary = try Self.summary(camera)
            #expect(summary["dropped_queue"] as? Int == 0, "\(summary)")
            let http = summary["http"] as? [String: Any] ?? [:]
            let cut = (http["clients_stalled"] as? Int ?? 0) + (http["live_viewers_cut_off"] as? Int ?? 0)
            #expect(cut >= 1, "the viewer that never read was not cut off: \(http)")
        }

        /// The page's event button makes a clip with its label (POST /events), and its status
        /// panel shows the recording's figures.
        @Test func thePagesEventButtonMakesALabelledClip() throws {
            let camera = try FakeCamera()
            // No --frames: the recording lasts until the page has answered, however long
            // Chromium takes to start on a busy machine (a 7 s recording had ended before it did).
            let (child, port) = try Self.start(camera, ["--format", "nv12", "--keyint", "1s",
                                                        "--events", camera.file("{label}-{n}.mp4"),
                                                        "--pre-roll", "1s", "--post-roll", "1s"])
            defer { if child.isRunning { child.send(SIGKILL) } }
            let script = camera.file("press.js")
            try """
                const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));
                await sleep(2500);
                const form = document.getElementById("event-form");
                form.elements.label.value = "door";
                form.elements.duration.value = "1";
                form.requestSubmit();
                const result = document.getElementById("event-result");
                for (let i = 0; i < 50 && !result.textContent; i++) await sleep(100);
                return {result: result.textContent, captured: document.getElementById("captured").textContent};
                """.write(toFile: script, atomically: true, encoding: .utf8)
            let r = try Tools.run("/usr/bin/python3", [Self.browser + "/cdp.py", "http://127.0.0.1:\(port)/", script, "--timeout", "30"])
            try #require(r.status == 0, "cdp.py: \(r.stderr)")
            let answer = Self.json(r.stdout)
            #expect(Int(answer["captured"] as? String ?? "") ?? 0 > 30, "the status panel: \(answer)")
            let bad = try Self.curl(port, "/events", ["-X", "POST", "-d", #"{"label":"../etc"}"#])
            #expect(bad.status == 400 && String(decoding: bad.body, as: UTF8.self).contains("label"))
            // The event's second and its post-roll's, then a stop.
            Thread.sleep(forTimeInterval: 2.5)
            child.send(SIGINT)
            let done = child.wait(timeout: .seconds(20))
            try #require(done.status == 0, "\(done.standardError)")
            let clips = EventClipTests.clips(try Self.summary(camera))
            try #require(clips.count == 1, "\(clips) (the page said \(answer))")
            #expect(clips[0]["trigger"] as? String == "http" && clips[0]["label"] as? String == "door")
            #expect((clips[0]["file"] as? String)?.hasSuffix("/door-0.mp4") == true)
        }

        /// Fifty viewers of /live.mp4 at once (wrk on loopback) beside a 1080p30 MJPEG camera's
        /// recording: every viewer is served, none is cut off, and the recording drops nothing.
        /// Runs alone (make test's TEST_ALONE): it needs both cores. The camera's pictures are
        /// made once, so that its own JPEG encoding does not keep both processors busy (on
        /// which this machine's host stops it for about 100 ms now and then: docs/testing.md).
        @Test func fiftyViewersCostTheRecordingNothing() throws {
            let camera = try FakeCamera(knobs: [.pictureRing(10)])
            let (child, port) = try Self.start(camera, ["--format", "mjpeg", "--frames", "360", "--bitrate", "2M",
                                                        "-o", camera.file("rec.mp4")], size: "1920x1080")
            defer { if child.isRunning { child.send(SIGKILL) } }
            let load = try Tools.run("wrk", ["-t1", "-c50", "-d8s", "--timeout", "10s", "http://127.0.0.1:\(port)/live.mp4"])
            #expect(load.status == 0, "\(load.stderr)")
            let read = load.stdoutText.firstMatch(of: /requests in [0-9.]+s, ([0-9.]+)MB read/).flatMap { Double($0.1) } ?? 0
            // 50 viewers of 2 Mbit/s for about 7 s each: some 80 MB.
            #expect(read > 50, "wrk read \(read) MB: \(load.stdoutText)")
            let r = child.wait()
            try #require(r.status == 0, "\(r.standardError)")
            let summary = try Self.summary(camera)
            #expect(summary["dropped_queue"] as? Int == 0 && summary["dropped_driver"] as? Int == 0, "\(summary)")
            let http = summary["http"] as? [String: Any] ?? [:]
            #expect(http["live_viewers_served"] as? Int == 50 && http["live_viewers_cut_off"] as? Int == 0, "\(http)")
        }

        /// Headless Chromium opens the page, plays the live picture (Media Source Extensions) and
        /// reads the fake camera's frame numbers from it: they go forward, and the picture is less
        /// than a second behind the camera (make bench measures it).
        @Test func chromiumPlaysTheLivePage() throws {
            let camera = try FakeCamera()
            let (child, port) = try Self.start(camera, ["--format", "nv12", "--frames", "540", "-o", camera.file("rec.mp4")])
            defer { if child.isRunning { child.send(SIGKILL) } }
            let script = Self.browser + "/framecode.js"
            let r = try Tools.run("/usr/bin/python3", [Self.browser + "/cdp.py", "http://127.0.0.1:\(port)/", script,
                                                       "--timeout", "40",
                                                       "--args", #"{"samples": 40, "seconds": 8, "period_ms": 150, "status": "status"}"#])
            try #require(r.status == 0, "cdp.py: \(r.stderr)")
            let samples = (try JSONSerialization.jsonObject(with: r.stdout) as? [[String: Any]]) ?? []
            let read = samples.compactMap { sample -> (frame: Int, captured: Int)? in
                guard let frame = sample["frame"] as? Int, let captured = sample["captured"] as? Int else { return nil }
                return (frame, captured)
            }
            #expect(read.count >= samples.count * 9 / 10 && samples.count >= 30, "\(samples.count) samples, \(read.count) read")
            #expect(zip(read, read.dropFirst()).allSatisfy { $0.frame <= $1.frame }, "frames went back: \(read.map(\.frame))")
            #expect((read.last?.frame ?? 0) - (read.first?.frame ?? 0) >= 5 * Self.rate, "the picture did not move: \(read.map(\.frame))")
            let delays = read.map { Double($0.captured - 1 - $0.frame) / Double(Self.rate) }.sorted()
            #expect(!delays.isEmpty && delays[delays.count / 2] < 1.0, "median delay \(delays.isEmpty ? -1 : delays[delays.count / 2]) s")
            child.send(SIGINT)
            #expect(child.wait().status == 0)
        }

        /// Chromium's own HLS player given /live.m3u8 before the recording has a whole segment
        /// (the camera holds its second frame for 3 s) plays it: the first answer waits for the
        /// segments a player starts on, as a blocking reload waits for its part.
        @Test func chromiumPlaysTheHLSPlaylistOpenedBeforeTheFirstSegment() throws {
            let camera = try FakeCamera(knobs: [.pause(at: "dqbuf:1", milliseconds: 3000)])
            let (child, port) = try Self.start(camera, ["--format", "nv12", "--size", "320x240", "--frames", "360",
                                                        "-o", camera.file("rec.mp4")], size: "320x240")
            defer { if child.isRunning { child.send(SIGKILL) } }
            let script = camera.file("hls.js")
            try """
                const video = document.createElement("video");
                video.muted = true;
                video.autoplay = true;
                document.body.appendChild(video);
                const opened = await (await fetch("/status")).json();
                video.src = "/live.m3u8";
                const start = performance.now();
                while (performance.now() - start < 12000 && !video.error && video.currentTime < 2) {
                    await new Promise(resolve => setTimeout(resolve, 100));
                }
                return {time: video.currentTime, framesAtOpen: opened.frames_encoded,
                        error: video.error ? video.error.code + ": " + video.error.message : null};
                """.write(toFile: script, atomically: true, encoding: .utf8)
            let r = try Tools.run("/usr/bin/python3", [Self.browser + "/cdp.py", "http://127.0.0.1:\(port)/", script,
                                                       "--timeout", "40"])
            child.send(SIGINT)
            #expect(child.wait().status == 0)
            try #require(r.status == 0, "cdp.py: \(r.stderr)")
            let answer = Self.json(r.stdout)
            #expect(answer["error"] is NSNull, "Chromium's player failed: \(answer)")
            #expect((answer["time"] as? Double ?? 0) >= 2, "the picture did not play on: \(answer)")
            #expect((answer["framesAtOpen"] as? Int ?? 99) < 30, "opened after the first segment: \(answer)")
        }

        /// --live-size: the live view is an encode of its own at that size, with the fake camera's
        /// frame numbers in order, and the recording keeps its own keyframes (none asked for it).
        @Test func theLiveViewsOwnEncodeIsAtItsOwnSize() throws {
            let camera = try FakeCamera()
            let (child, port) = try Self.start(camera, ["--format", "nv12", "--frames", "240", "--keyint", "4s",
                                                        "-o", camera.file("rec.mp4"), "--live-size", "320x240",
                                                        "--live-bitrate", "600k"])
            defer { if child.isRunning { child.send(SIGKILL) } }
            let received = camera.file("live.mp4")
            try Self.keepLiveMP4(port, seconds: 3, in: received)
            let r = child.wait()
            try #require(r.status == 0, "\(r.standardError)")
            let probe = try Tools.ffprobe(received, ["-show_entries", "stream=width,height"])
            let stream = (probe["streams"] as? [[String: Any]])?.first
            #expect(stream?["width"] as? Int == 320 && stream?["height"] as? Int == 240, "\(probe)")
            // The frame code, drawn for 640 wide, is read at that width again.
            let upscaled = camera.file("upscaled.mkv")
            let scaled = try Tools.run("ffmpeg", ["-v", "error", "-i", received, "-vf", "scale=640:480:flags=neighbor",
                                                  "-c:v", "ffv1", upscaled])
            try #require(scaled.status == 0, "\(scaled.stderr)")
            let numbers = try Tools.counters(upscaled, width: 640).compactMap { $0 }
            #expect(numbers.count >= 80 && zip(numbers, numbers.dropFirst()).allSatisfy { $1 > $0 }, "\(numbers)")
            let summary = try Self.summary(camera)
            #expect(summary["keyframes"] as? Int ?? 0 <= 3, "the live view asked the recording for keyframes: \(summary["keyframes"] ?? "?")")
            #expect(summary["dropped_queue"] as? Int == 0)
        }

        /// The JPEGs of a multipart answer, by each part's Content-Length.
        static func parts(_ data: Data) -> [Data] {
            var parts: [Data] = []
            var rest = data[...]
            while let head = rest.range(of: Data("\r\n\r\n".utf8)) {
                let header = String(decoding: rest[..<head.lowerBound], as: UTF8.self)
                guard let length = header.firstMatch(of: /Content-Length: (\d+)/).flatMap({ Int($0.1) }),
                      rest.distance(from: head.upperBound, to: rest.endIndex) >= length else { break }
                let start = head.upperBound
                parts.append(Data(rest[start ..< rest.index(start, offsetBy: length)]))
                rest = rest[rest.index(start, offsetBy: length)...]
            }
            return parts
        }

        /// From an MJPEG camera, /stream.mjpeg and /snapshot.jpg are the camera's own JPEGs, byte
        /// for byte as v4l2-ctl receives the same frames from the same camera (whose pictures depend
        /// only on their sequence number), one for each frame while the client keeps up.
        @Test func anMJPEGCamerasOwnJPEGsAreServed() throws {
            let camera = try FakeCamera()
            let (child, port) = try Self.start(camera, ["--format", "mjpeg", "--frames", "150", "-o", camera.file("rec.mp4")])
            defer { if child.isRunning { child.send(SIGKILL) } }
            let stream = try Tools.run("curl", ["-s", "--max-time", "1.5", "http://127.0.0.1:\(port)/stream.mjpeg"])
            let snapshot = try Self.curl(port, "/snapshot.jpg").body
            let r = child.wait()
            try #require(r.status == 0, "\(r.standardError)")
            try Self.expectTheCamerasJPEGs(camera, stream: stream.stdout, snapshot: snapshot)
        }

        /// 1.5 s of /stream.mjpeg (`stream`) holds one JPEG for each frame in order, and it and
        /// /snapshot.jpg are the camera's own, byte for byte as v4l2-ctl receives the same frames
        /// from the same camera (whose pictures depend only on their sequence number).
        static func expectTheCamerasJPEGs(_ camera: FakeCamera, stream: Data, snapshot: Data, width: Int = 640,
                                          height: Int = 480, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let parts = Self.parts(stream)
            #expect(parts.count >= 30, "\(parts.count) pictures in 1.5 s of a 30 fps camera", sourceLocation: sourceLocation)
            try Data(parts.joined()).write(to: URL(fileURLWithPath: camera.file("served.mjpeg")))
            let numbers = try Tools.counters(camera.file("served.mjpeg"), width: width).map { try #require($0) }
            try #require(numbers.count == parts.count, sourceLocation: sourceLocation)
            #expect(zip(numbers, numbers.dropFirst()).allSatisfy { $1 == $0 + 1 }, "\(numbers)", sourceLocation: sourceLocation)
            try snapshot.write(to: URL(fileURLWithPath: camera.file("snapshot.jpg")))
            let still = try #require(try Tools.counters(camera.file("snapshot.jpg"), width: width).first ?? nil,
                                     sourceLocation: sourceLocation)
            let pictures = try CameraRecordingTests.SnapshotTests.camerasJPEGs(camera, count: max(numbers.last ?? 0, still) + 1,
                                                                              width: width, height: height)
            for (number, part) in zip(numbers, parts) {
                #expect(number < pictures.count && part == pictures[number], "frame \(number) differs from the camera's",
                        sourceLocation: sourceLocation)
            }
            #expect(still < pictures.count && pictures[still] == snapshot, "/snapshot.jpg (frame \(still)) is not the camera's JPEG",
                    sourceLocation: sourceLocation)
        }

        /// From a camera that sends raw pictures, /stream.mjpeg is made at --http-mjpeg-fps and
        /// --http-mjpeg-size while someone watches.
        @Test func mjpegIsMadeAtTheRateAndSizeAsked() throws {
            let camera = try FakeCamera()
            let (child, port) = try Self.start(camera, ["--format", "nv12", "--frames", "150", "-o", camera.file("rec.mp4"),
                                                        "--http-mjpeg-fps", "5", "--http-mjpeg-size", "320x240"])
            defer { if child.isRunning { child.send(SIGKILL) } }
            let stream = try Tools.run("curl", ["-s", "--max-time", "2.2", "http://127.0.0.1:\(port)/stream.mjpeg"])
            let r = child.wait()
            try #require(r.status == 0, "\(r.standardError)")
            let parts = Self.parts(stream.stdout)
            #expect((8 ... 12).contains(parts.count), "\(parts.count) pictures in 2.2 s at 5 a second")
            let first = try #require(parts.first)
            try first.write(to: URL(fileURLWithPath: camera.file("first.jpg")))
            let probe = try Tools.ffprobe(camera.file("first.jpg"), ["-show_entries", "stream=width,height"])
            let picture = (probe["streams"] as? [[String: Any]])?.first
            #expect(picture?["width"] as? Int == 320 && picture?["height"] as? Int == 240, "\(probe)")
            #expect(try Self.summary(camera)["dropped_queue"] as? Int == 0)
        }

        /// The README's nginx configuration, with a certificate made here, in front of the server:
        /// the page, the status and the live stream come through TLS under the sub-path.
        @Test func nginxFromTheReadmeServesItOverTLS() throws {
            let camera = try FakeCamera()
            let readme = try String(contentsOfFile: Self.root + "/README.md", encoding: .utf8)
            let block = try #require(readme.components(separatedBy: "```nginx\n").dropFirst().first?
                .components(separatedBy: "```").first, "no nginx block in the README")
            let key = camera.file("cam.key"), certificate = camera.file("cam.pem")
            let made = try Tools.run("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate,
                                                 "-days", "1", "-subj", "/CN=localhost"])
            try #require(made.status == 0, "\(made.stderr)")
            let (child, port) = try Self.start(camera, ["--format", "nv12", "--duration", "30s", "-o", camera.file("rec.mp4")])
            defer { if child.isRunning { child.send(SIGKILL) } }
            let proxyPort = LoopbackPort.free(udp: false)
            var server = block.replacingOccurrences(of: "listen 443 ssl;", with: "listen 127.0.0.1:\(proxyPort) ssl;")
                .replacingOccurrences(of: "http://127.0.0.1:8080/", with: "http://127.0.0.1:\(port)/")
            server = server.replacing(#/ssl_certificate\s+\S+;/#, with: "ssl_certificate \(certificate);")
                .replacing(#/ssl_certificate_key\s+\S+;/#, with: "ssl_certificate_key \(key);")
            let temporary = camera.file("nginx-temp")
            try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
            let configuration = """
                daemon off;
                master_process off;
                worker_processes 1;
                pid \(camera.file("nginx.pid"));
                error_log stderr warn;
                events { worker_connections 64; }
                http {
                    access_log off;
                    client_body_temp_path \(temporary);
                    proxy_temp_path \(temporary);
                    \(server)
                }
                """
            try configuration.write(toFile: camera.file("nginx.conf"), atomically: true, encoding: .utf8)
            let nginx = try ChildProcess(["/usr/sbin/nginx", "-c", camera.file("nginx.conf"), "-e", "stderr"],
                                         environment: ProcessInfo.processInfo.environment, signalsUnblocked: true)
            defer { if nginx.isRunning { nginx.send(SIGKILL) } }
            let base = "https://localhost:\(proxyPort)/cam1/"
            var page = Data()
            for _ in 0 ..< 50 where page.isEmpty {
                usleep(100_000)
                page = try Tools.run("curl", ["-sk", "--max-time", "5", base]).stdout
            }
            #expect(String(decoding: page, as: UTF8.self).contains("live.js"), "the page through nginx: \(nginx.standardErrorSoFar)")
            let status = Self.json(try Tools.run("curl", ["-sk", "--max-time", "5", base + "status"]).stdout)
            #expect(status["stop_reason"] as? String == "recording", "\(status)")
            // Two seconds of the live stream come through as they are made.
            let live = try Tools.run("curl", ["-sk", "--max-time", "2", base + "live.mp4"])
            #expect(live.stdout.count > 20_000 && live.stdout.dropFirst(4).starts(with: Array("ftyp".utf8)),
                    "\(live.stdout.count) bytes of the live stream through nginx")
            child.send(SIGINT)
            #expect(child.wait().status == 0)
        }

        @Test(arguments: [
            (["--http", ":8080"], "--http-auth"),
            (["--http", "0.0.0.0:8080"], "can be reached from other machines"),
            (["--http", "localhost:99999"], "a port from 0 to 65535"),
            (["--http", "nonsense"], "expected PORT"),
            (["--http-auth", "/nonexistent"], "add --http"),
            (["--http", "127.0.0.1:0", "--http-auth", "/nonexistent", "--http-no-auth"], "contradict"),
            (["--http", ":0", "--http-auth", "/nonexistent"], "cannot read the file"),
        ])
        func badHTTPOptionsAreRefused(arguments: [String], expected: String) throws {
            try Tools.expectRefused(arguments, saying: expected)
        }

        @Test func aPasswordFileWithAPlainPasswordIsRefused() throws {
            let directory = try TemporaryDirectory()
            let file = directory.path("users")
            try "someone:letmein\n".write(toFile: file, atomically: true, encoding: .utf8)
            try Tools.expectRefused(["--http", ":0", "--http-auth", file], saying: "line 1: the password of someone is not hashed")
        }

        @Test func aPortInUseIsRefusedBeforeAnythingIsWritten() throws {
            let (held, port) = LoopbackPort.bound(udp: false)
            defer { close(held) }
            #expect(listen(held, 1) == 0)
            try Tools.expectRefused(["--http", "127.0.0.1:\(port)"], saying: "the address is in use")
        }

        static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        static let browser = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Browser").path
        static let peers = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Peers").path

        /// A TCP connection to the server with a small receive buffer, never read.
        static func connect(_ port: Int, receiveBuffer: Int32) throws -> Int32 {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            try #require(descriptor >= 0)
            var size = receiveBuffer
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr = in_addr(s_addr: in_addr_t(0x7f00_0001).bigEndian)
            address.sin_port = UInt16(port).bigEndian
            let connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            try #require(connected == 0, "connect: \(String(cString: strerror(errno)))")
            return descriptor
        }
    }
}
