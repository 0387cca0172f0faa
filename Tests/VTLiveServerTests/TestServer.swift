import Foundation
import Hummingbird
import Logging
import NIOCore
import Synchronization
@testable import VTLiveServer

/// What the server's hooks were handed: the recording a test stands in for.
final class HookLog: Sendable {
    struct Event: Equatable, Sendable {
        var label: String?
        var duration: Double?
    }

    let events = Mutex<[Event]>([])
    let stops = Atomic<Int>(0)
    /// The error the event hook answers with (nil: the event is taken).
    let eventRefusal = Mutex<String?>(nil)
    /// The figure handed to `/metrics` as `vtrecord_frames_captured_total`.
    let framesCaptured = Atomic<Int>(42)

    func takeEvent(label: String?, duration: Double?) -> String? {
        if let refusal = eventRefusal.withLock({ $0 }) { return refusal }
        events.withLock { $0.append(Event(label: label, duration: duration)) }
        return nil
    }
}

/// A `LiveServer` for one test: an empty live stream, a JPEG feed, no recordings unless given,
/// and hooks that write to a `HookLog`.
enum TestServer {
    static let status = Array(#"{"frames":42,"state":"recording"}"#.utf8)
    static let snapshot: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0xFF, 0xD9]

    static func make(library: RecordingLibrary = RecordingLibrary(sources: [], thumbnailer: nil, isOpen: { _ in false }),
                     log: HookLog = HookLog(), takesEvents: Bool = true,
                     configure: (inout LiveServer.Settings) -> Void = { _ in }) -> LiveServer {
        var settings = LiveServer.Settings(address: HTTPAddress("127.0.0.1:0")!, passwords: nil)
        configure(&settings)
        let metrics: @Sendable () -> [LiveMetric] = {
            [LiveMetric("vtrecord_frames_captured_total", .counter, Double(log.framesCaptured.load(ordering: .relaxed)),
                        help: "Pictures captured.")]
        }
        let take: @Sendable (String?, Double?) -> String? = { log.takeEvent(label: $0, duration: $1) }
        let event = takesEvents ? take : nil
        let hooks = LiveServer.Hooks(status: { status }, metrics: metrics, event: event,
                                     stop: { log.stops.add(1, ordering: .relaxed) }, snapshot: { snapshot })
        return LiveServer(settings: settings, stream: LiveStream(partTarget: 0.5), jpegs: JPEGFeed(fromCamera: false),
                          library: library, hooks: hooks)
    }

    /// How a test reaches the server. Both run the real server on 127.0.0.1 (with its
    /// connection guard) and talk to it over one HTTP/1.1 connection: Hummingbird's own test
    /// client needs AsyncHTTPClient and SwiftNIO's TLS (BoringSSL), which would add minutes
    /// to every fresh build of the suite. `.router` marks the tests that exercise the routes
    /// alone, `.live` those that need the connection as well.
    enum TestingSetup { case router, live }

    /// Runs `body` with a client connected to the server's application.
    static func test<Value: Sendable>(_ server: LiveServer, _ setup: TestingSetup,
                                      _ body: @Sendable (TestClient) async throws -> Value) async throws -> Value {
        try await running(server) { port in
            let client = try await TestClient.connect(port: port)
            do {
                let value = try await body(client)
                await client.close()
                return value
            } catch {
                await client.close()
                throw error
            }
        }
    }

    /// Runs the server's application on 127.0.0.1 at a port the system chooses, for `body`
    /// (handed the port), without Hummingbird's test client, whose own idle connection the
    /// connection guard would close and count too.
    static func running<Value>(_ server: LiveServer, _ body: (Int) async throws -> Value) async throws -> Value {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = server.makeApplication(logger: Logger(label: "vtrecord.test"), onServerRunning: { channel in
            continuation.yield(channel.localAddress?.port ?? 0)
        })
        let task = Task {
            // A server that cannot listen ends the stream, so the wait for its port ends too.
            defer { continuation.finish() }
            try? await app.runService(gracefulShutdownSignals: [])
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            task.cancel()
            throw TestServerError.didNotListen
        }
        do {
            let value = try await body(port)
            task.cancel()
            _ = await ended(task, within: .seconds(5))
            return value
        } catch {
            task.cancel()
            _ = await ended(task, within: .seconds(5))
            throw error
        }
    }

    /// Whether `task` ended within `limit`; never waits longer.
    static func ended(_ task: Task<Void, Never>, within limit: Duration) async -> Bool {
        let outcome = Outcome()
        return await withCheckedContinuation { continuation in
            outcome.waiter.withLock { $0 = continuation }
            Task {
                await task.value
                outcome.resume(true)
            }
            Task {
                try? await Task.sleep(for: limit)
                outcome.resume(false)
            }
        }
    }

    /// Polls `condition` until it holds or `limit` passes; whether it held. Generous: the tests of
    /// a module run side by side in one process, and long synchronous ones beside them can keep
    /// Swift's two pool threads (on two cores) for seconds before a request's task runs.
    static func eventually(within limit: Duration = .seconds(60), _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while !condition() {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    /// The first of two racing tasks resumes the waiter; the other finds it gone.
    private final class Outcome: Sendable {
        let waiter = Mutex<CheckedContinuation<Bool, Never>?>(nil)
        func resume(_ value: Bool) { waiter.withLock { $0.take() }?.resume(returning: value) }
    }
}

enum TestServerError: Error {
    case didNotListen
}

extension TestResponse {
    var text: String { String(buffer: body) }
    var bytes: [UInt8] { Array(body.readableBytesView) }

    /// The head's fields as `name: value` lines, sorted, without `Date` (a second may pass
    /// between two answers).
    var fieldsWithoutDate: [String] {
        headers.filter { $0.name != .date }.map { "\($0.name): \($0.value)" }.sorted()
    }
}

/// A directory of its own under the system's temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        var template = Array((NSTemporaryDirectory() as NSString).appendingPathComponent("vtlive-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
        path = String(cString: made)
    }

    func file(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

    /// Writes `name` (a path inside the directory) with `bytes`.
    @discardableResult
    func write(_ name: String, _ bytes: Data) throws -> String {
        let path = file(name)
        try bytes.write(to: URL(fileURLWithPath: path))
        return path
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}
