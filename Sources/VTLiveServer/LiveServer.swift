import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import Synchronization
import VTCore

/// `--http`: the HTTP server inside the recording process (Hummingbird 2 on SwiftNIO, on
/// NIO's event loop threads and Swift's concurrency pool; never the recording's threads).
///
/// What it serves, and where from: the live picture from `LiveStream` (`/live.mp4`,
/// `/live.m3u8`), stills (`/snapshot.jpg`), the live summary and its figures (`/status`,
/// `/metrics`), events and a clean stop (`POST /events`, `POST /stop`), the files the
/// templates made (`/recordings`), and the page at `/`. Everything the recording knows comes
/// through `Hooks`, so this module knows no recorder.
public final class LiveServer: Sendable {
    public struct Hooks: Sendable {
        /// The live summary, as JSON (the schema of `--json-summary`).
        public var status: @Sendable () -> [UInt8]
        /// The figures `/metrics` exposes.
        public var metrics: @Sendable () -> [LiveMetric]
        /// An event with a label and a duration in seconds (nil: a moment); the error's text,
        /// or nil once it is taken.
        public var event: (@Sendable (String?, Double?) -> String?)?
        /// A clean stop, as SIGTERM.
        public var stop: @Sendable () -> Void
        /// A JPEG of the next picture.
        public var snapshot: (@Sendable () async throws -> [UInt8])?

        public init(status: @escaping @Sendable () -> [UInt8], metrics: @escaping @Sendable () -> [LiveMetric],
                    event: (@Sendable (String?, Double?) -> String?)?, stop: @escaping @Sendable () -> Void,
                    snapshot: (@Sendable () async throws -> [UInt8])?) {
            self.status = status
            self.metrics = metrics
            self.event = event
            self.stop = stop
            self.snapshot = snapshot
        }
    }

    public struct Settings: Sendable {
        public var address: HTTPAddress
        public var passwords: PasswordFile?
        /// Connections at once; more wait to be accepted. As many as nginx's default
        /// (worker_connections): clients that trickle a request head in hold theirs until
        /// `requestTime`, and a few hundred of them must leave room for everyone else.
        public var maxConnections = 1024
        /// A request must arrive whole within this time (slow-loris).
        public var requestTime: TimeAmount = .seconds(10)
        /// A client whose socket stays full this long while an answer is sent is closed.
        public var stallTime: TimeAmount = .seconds(5)
        /// The most a request's head may hold, and a request's body.
        public var maxHeaderBytes = 16 << 10
        public var maxBodyBytes = 64 << 10
        /// How long a wrong password's answer waits.
        public var refusalDelay: Duration = .seconds(1)
        /// Why `/live.mp4` and HLS answer 404 (no H.264 to stream), or nil.
        public var liveVideoAbsent: String?
        /// Why `/stream.mjpeg` and `/snapshot.jpg` answer 404 (no JPEGs), or nil.
        public var jpegsAbsent: String?

        public init(address: HTTPAddress, passwords: PasswordFile?) {
            self.address = address
            self.passwords = passwords
        }
    }

    public struct StartError: ReportableError {
        public var description: String
        public var exitStatus: ExitStatus { .usage }
    }

    public let settings: Settings
    public let stream: LiveStream
    public let jpegs: JPEGFeed
    let hooks: Hooks
    public let library: RecordingLibrary
    let guardCounters = ConnectionGuard.Counters()
    let metrics = LiveMetrics()
    let authFailures = Atomic<Int>(0)
    private let task = Mutex<Task<Void, Never>?>(nil)
    private let boundPort = Atomic<Int>(0)

    public init(settings: Settings, stream: LiveStream, jpegs: JPEGFeed, library: RecordingLibrary, hooks: Hooks) {
        self.settings = settings
        self.stream = stream
        self.jpegs = jpegs
        self.library = library
        self.hooks = hooks
    }

    /// The port it listens on (the one chosen when asked for port 0).
    public var port: Int { boundPort.load(ordering: .acquiring) }

    /// The server as Hummingbird runs it: the routes, the connection guard, the limits.
    /// `onServerRunning` is called with the listening channel.
    public func makeApplication(logger: Logger, onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in })
        -> some ApplicationProtocol {
        // Hummingbird's own log says what it does with each connection, and that it was cancelled
        // at the end; vtrecord says what matters itself.
        var quiet = logger
        quiet.logLevel = .critical
        let (requestTime, stallTime, counters) = (settings.requestTime, settings.stallTime, guardCounters)
        return Application(
            router: makeRouter(),
            server: .http1(configuration: HTTP1Channel.Configuration(
                // One guard per connection.
                additionalChannelHandlers: [ConnectionGuard(requestTime: requestTime, stallTime: stallTime,
                                                            counters: counters)],
                httpDecoderConfiguration: .init(maxHeaderFieldSize: settings.maxHeaderBytes,
                                                maxHeaderListSize: settings.maxHeaderBytes,
                                                maxHeaderFieldCount: 100))),
            configuration: ApplicationConfiguration(address: .hostname(settings.address.host, port: settings.address.port),
                                                    serverName: "vtrecord",
                                                    availableConnectionsDelegate: MaximumAvailableConnections(
                                                        settings.maxConnections, logger: quiet)),
            onServerRunning: onServerRunning,
            logger: quiet)
    }

    /// Starts listening; returns once the socket is bound, or throws why it could not be.
    public func start(logger: Logger) throws(StartError) {
        Self.allowDescriptors(settings.maxConnections + Self.descriptorsBeside)
        let outcome = Mutex<Result<Int, StartError>?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let address = settings.address
        let app = makeApplication(logger: logger, onServerRunning: { channel in
            outcome.withLock { $0 = .success(channel.localAddress?.port ?? address.port) }
            ready.signal()
        })
        let task = Task.detached {
            do {
                try await app.runService(gracefulShutdownSignals: [])
            } catch {
                outcome.withLock { slot in
                    if slot == nil {
                        slot = .failure(StartError(description: "--http \(address): cannot listen: \(Self.reason(error)): choose another address or port"))
                    }
                }
                ready.signal()
            }
        }
        self.task.withLock { $0 = task }
        if ready.wait(timeout: .now() + 10) == .timedOut {
            task.cancel()
            throw StartError(description: "--http \(address): the server did not start within 10 s")
        }
        switch outcome.withLock({ $0 }) {
        case .success(let port): boundPort.store(port, ordering: .releasing)
        case .failure(let error): throw error
        case nil: throw StartError(description: "--http \(address): the server did not start")
        }
    }

    /// Ends every live answer and stops the server.
    public func stop() {
        stream.end()
        jpegs.end()
        guard let task = task.withLock({ $0.take() }) else { return }
        task.cancel()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            await task.value
            done.signal()
        }
        _ = done.wait(timeout: .now() + 2)
    }

    /// Descriptors the recording needs beside the server's connections: the camera's, files,
    /// streams, pipes, libraries.
    static let descriptorsBeside = 256

    /// Raises the soft limit on open descriptors to `wanted` where the hard limit allows (as
    /// nginx's worker_rlimit_nofile does): Debian's soft limit of 1024 would otherwise make
    /// accept fail before `maxConnections` is reached. Never lowers it.
    static func allowDescriptors(_ wanted: Int) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < rlim_t(wanted) else { return }
        limit.rlim_cur = min(rlim_t(wanted), limit.rlim_max)
        // A refusal leaves the limit as it was: fewer clients at once, nothing worse.
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    private static func reason(_ error: any Error) -> String {
        if let io = error as? IOError {
            switch io.errnoCode {
            case EADDRINUSE: return "the address is in use"
            case EADDRNOTAVAIL: return "no interface of this machine has that address"
            case EACCES: return "permission denied (ports below 1024 need root)"
            default: return String(cString: strerror(io.errnoCode))
            }
        }
        return "\(error)"
    }
}
