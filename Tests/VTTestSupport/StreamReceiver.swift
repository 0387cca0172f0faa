import Foundation

/// A receiver of a published stream on 127.0.0.1, run by a test to check what a sender put on
/// the wire with a program the sender's authors did not write: ffmpeg listening for SRT or
/// RTSP or reading UDP, or nginx's RTMP module.
///
/// `init` returns once the receiver listens. The test can then stall it (`pause`), kill it
/// (`kill`) and start another on the same port (`restart`); `stop` ends whatever still runs and
/// returns what each receiver process got, decoded, one `ReceivedPart` per connection. Every
/// wait is bounded: a receiver that does not end when told is killed.
///
/// Not for use from several threads at once.
public final class StreamReceiver {
    public let kind: Kind
    /// The port on 127.0.0.1 the receiver listens on; the same across restarts.
    public let port: Int
    /// What a sender publishes to. SRT options (latency, passphrase) are the sender's to add;
    /// the RTMP and RTSP stream name is "camera".
    public let url: String

    /// One receiver process and what it writes to.
    private final class Generation {
        let child: ChildProcess
        let capture: String
        var result: ChildProcess.Result?

        init(child: ChildProcess, capture: String) {
            self.child = child
            self.capture = capture
        }
    }

    private let directory: URL
    private var generations: [Generation] = []
    private var paused = false
    private var received: [ReceivedPart]?

    /// Starts a receiver of `kind` on a free loopback port and waits until it listens.
    public init(_ kind: Kind, readyWithin: Duration = .seconds(10)) throws {
        self.kind = kind
        port = Self.freeLoopbackPort(udp: kind.overUDP)
        url = kind.url(port: port)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("vtrecord-receiver-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try start(readyWithin: readyWithin)
    }

    deinit {
        for generation in generations where generation.result == nil && generation.child.isRunning {
            generation.child.send(SIGKILL)
            _ = generation.child.wait(timeout: .seconds(2))
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// A port on 127.0.0.1 nobody held a moment ago (see `LoopbackPort.free`).
    public static func freeLoopbackPort(udp: Bool) -> Int {
        LoopbackPort.free(udp: udp)
    }

    /// Waits until the current receiver process has bound its port: for TCP kinds a listening
    /// socket, for SRT and UDP a bound one, found in /proc without connecting (ffmpeg's RTSP
    /// listener would take a probe connection for its one publisher). For SRT the socket is
    /// bound a moment before libsrt listens on it; a caller's handshake is resent every 250 ms
    /// for seconds, so one that arrives in between is answered by the next.
    public func waitUntilListening(timeout: Duration = .seconds(10)) throws {
        guard let current = generations.last else { return }
        if LoopbackPort.waitUntilBound(port, udp: kind.overUDP, by: current.child.processIdentifier, timeout: timeout,
                                       while: { current.child.isRunning }) { return }
        if current.child.isRunning { current.child.send(SIGKILL) }
        let result = current.child.wait(timeout: .seconds(2))
        current.result = result
        throw PeerError.notListening(peer: kind.name, port: port, waited: timeout, log: result.standardError)
    }

    /// Waits until the current receiver process has written at least `bytes`, and says
    /// whether it did within `timeout`: for SRT and UDP the stream's bytes, for RTMP the FLV
    /// recordings', for RTSP the framemd5 lines (about 70 bytes a frame). For a test that acts
    /// once the stream flows, where a fixed sleep would act too early on a busy machine.
    @discardableResult
    public func waitUntilReceived(bytes: Int, timeout: Duration = .seconds(10)) -> Bool {
        guard let current = generations.last else { return false }
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if Self.bytes(under: current.capture) >= bytes { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return Self.bytes(under: current.capture) >= bytes
    }

    /// Stops the receiving process (SIGSTOP): it keeps its connection and reads nothing, so
    /// the sender's data piles up in socket buffers (TCP, SRT) or is lost once they are full
    /// (UDP).
    public func pause() {
        guard let current = generations.last, current.result == nil, !paused else { return }
        current.child.send(SIGSTOP)
        paused = true
    }

    /// Lets a paused receiver read again (SIGCONT).
    public func resume() {
        guard let current = generations.last, current.result == nil, paused else { return }
        current.child.send(SIGCONT)
        paused = false
    }

    /// Kills the receiving process (SIGKILL), as when the receiver dies: its connection is
    /// reset (TCP) or simply goes silent (SRT, UDP). What it wrote before then is kept.
    public func kill() {
        guard let current = generations.last, current.result == nil else { return }
        current.child.send(SIGKILL)
        paused = false
        current.result = current.child.wait(timeout: .seconds(5))
    }

    /// Starts a new receiver process on the same port, ending the current one first if it
    /// still runs (as `stop` does); what each process received stays a part of its own.
    public func restart(readyWithin: Duration = .seconds(10)) throws {
        precondition(received == nil, "the receiver has been stopped")
        if let current = generations.last { end(current) }
        try start(readyWithin: readyWithin)
    }

    /// Ends the receiver and returns what it received, decoded: a part per connection, in
    /// the order they came, each with the generation (process) it came from. A receiver
    /// process that got nothing gives one empty part carrying its messages. Calling it again
    /// returns the same parts.
    public func stop() -> [ReceivedPart] {
        if let received { return received }
        if let current = generations.last { end(current) }
        var parts: [ReceivedPart] = []
        for (index, generation) in generations.enumerated() {
            parts += kind.parts(capture: generation.capture, log: Self.log(of: generation.result), generation: index)
        }
        received = parts
        return parts
    }

    /// A receiver process's messages and, last, how it ended.
    private static func log(of result: ChildProcess.Result?) -> String {
        guard let result else { return "" }
        let ending = result.signal.map { "killed by signal \($0)" } ?? "exit status \(result.status)"
        return result.standardError + "\n[the receiver ended: \(ending)\(result.timedOut ? ", after SIGTERM for not heeding SIGINT" : "")]"
    }

    private func start(readyWithin: Duration) throws {
        let index = generations.count
        let capture = kind.capture(in: directory, generation: index)
        let command = try kind.command(port: port, capture: capture, directory: directory, generation: index)
        let child = try ChildProcess(command, environment: ProcessInfo.processInfo.environment, signalsUnblocked: true)
        generations.append(Generation(child: child, capture: capture))
        try waitUntilListening(timeout: readyWithin)
    }

    /// Ends a receiver process without losing what it has: an SRT or RTSP one is given
    /// `kind.settle` to end with its connection; any still running once what it writes has
    /// stopped growing is sent SIGINT (nginx closes its recordings, ffmpeg its output). ffmpeg
    /// blocked in a read with nothing arriving does not heed the first signal, so after a second
    /// the SIGTERM of `ChildProcess.wait` follows, and SIGKILL 2 s after that.
    private func end(_ generation: Generation) {
        guard generation.result == nil else { return }
        if paused {
            generation.child.send(SIGCONT)
            paused = false
        }
        let settled = ContinuousClock.now + kind.settle
        while generation.child.isRunning && ContinuousClock.now < settled {
            Thread.sleep(forTimeInterval: 0.01)
        }
        if generation.child.isRunning {
            waitUntilQuiet(generation.capture, quiet: .milliseconds(300), limit: .seconds(3))
            generation.child.send(SIGINT)
        }
        generation.result = generation.child.wait(timeout: .seconds(1))
    }

    /// Waits, up to `limit`, until the bytes under `path` (a file or a directory of files)
    /// have not grown for `quiet`: data the sender sent last may still be on its way through
    /// socket buffers and ffmpeg's FIFO.
    private func waitUntilQuiet(_ path: String, quiet: Duration, limit: Duration) {
        let deadline = ContinuousClock.now + limit
        var size = Self.bytes(under: path)
        var since = ContinuousClock.now
        while ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.02)
            let now = Self.bytes(under: path)
            if now != size {
                size = now
                since = ContinuousClock.now
            } else if ContinuousClock.now - since >= quiet {
                return
            }
        }
    }

    private static func bytes(under path: String) -> Int {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: path, isDirectory: &isDirectory) else { return 0 }
        let files = isDirectory.boolValue
            ? ((try? manager.contentsOfDirectory(atPath: path)) ?? []).map { (path as NSString).appendingPathComponent($0) }
            : [path]
        return files.reduce(0) { $0 + ((try? manager.attributesOfItem(atPath: $1)[.size] as? Int) ?? 0) }
    }
}
