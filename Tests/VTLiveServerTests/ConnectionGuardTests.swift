import Foundation
import Glibc
import Synchronization
import Testing
@testable import VTLiveServer

/// The connection guard on the real server: a request that does not arrive whole in time ends
/// its connection, and only that one.
///
/// The server runs without Hummingbird's test client: that client's own keep-alive connection,
/// idle between requests, would be closed and counted too.
@Suite struct ConnectionGuardTests {
    static let requestTime = 500

    static func server() -> LiveServer {
        TestServer.make { $0.requestTime = .milliseconds(Int64(requestTime)) }
    }

    @Test func aRequestHeadSentHalfwayIsCutOffWhileAWholeOneIsAnswered() async throws {
        let server = Self.server()
        try await TestServer.running(server) { port in
            let slow = try RawConnection(port: port)
            defer { slow.close() }
            let opened = ContinuousClock.now
            try slow.send("GET /status HTTP/1.1\r\nHo")

            let whole = try RawConnection(port: port)
            defer { whole.close() }
            try whole.send("GET /status HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            let answer = await whole.readUntilClosed(atMost: .seconds(10))
            #expect(answer.closed)
            #expect(answer.text.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(answer.text.hasSuffix("\r\n\r\n" + String(decoding: TestServer.status, as: UTF8.self)))

            let cut = await slow.readUntilClosed(atMost: .seconds(10))
            let waited = ContinuousClock.now - opened
            #expect(cut.closed && cut.bytes.isEmpty)
            // Not before its time, and soon after it (5 s leaves room for a loaded machine).
            #expect(waited >= .milliseconds(Self.requestTime - 50))
            #expect(waited < .seconds(5))
            #expect(server.guardCounters.timedOut.load(ordering: .relaxed) == 1)
            #expect(server.report.connectionsTimedOut == 1)
        }
    }

    @Test func anIdleKeepAliveConnectionIsClosedAfterItsAnswer() async throws {
        let server = Self.server()
        try await TestServer.running(server) { port in
            let idle = try RawConnection(port: port)
            defer { idle.close() }
            try idle.send("GET /status HTTP/1.1\r\nHost: localhost\r\n\r\n")
            let answer = await idle.readUntilClosed(atMost: .seconds(10))
            #expect(answer.closed)
            #expect(answer.text.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(answer.text.hasSuffix(String(decoding: TestServer.status, as: UTF8.self)))
            #expect(server.guardCounters.timedOut.load(ordering: .relaxed) == 1)
        }
    }
}

/// A TCP connection to 127.0.0.1 made by hand, for what Hummingbird's client would not send
/// (half a request head). Reads block a thread of their own, never one of Swift's pool.
///
/// Once the server has closed its side, the connection is closed at once on the reading
/// thread: Hummingbird waits for the client to close after `Connection: close`, and the guard
/// would count a connection left open that long as timed out.
final class RawConnection: Sendable {
    struct Failure: Error {
        var call: String
        var errno: Int32
    }

    struct Reading {
        var bytes: [UInt8]
        /// The server closed the connection (a read gave 0), rather than the wait ending.
        var closed: Bool
        var text: String { String(decoding: bytes, as: UTF8.self) }
    }

    private let open: Atomic<Int32>
    private let descriptor: Int32

    init(port: Int) throws {
        let made = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard made >= 0 else { throw Failure(call: "socket", errno: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(made, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let error = errno
            Glibc.close(made)
            throw Failure(call: "connect", errno: error)
        }
        descriptor = made
        open = Atomic(made)
    }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == bytes.count else { throw Failure(call: "send", errno: errno) }
    }

    /// Everything the server sends until it closes the connection, or until `limit` passes.
    func readUntilClosed(atMost limit: Duration) async -> Reading {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { [descriptor, self] in
                let deadline = ContinuousClock.now + limit
                var reading = Reading(bytes: [], closed: false)
                var buffer = [UInt8](repeating: 0, count: 4096)
                while ContinuousClock.now < deadline {
                    let left = deadline - ContinuousClock.now
                    var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                    let milliseconds = Int32(max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
                    guard poll(&ready, 1, milliseconds) > 0 else { continue }
                    let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                    if count > 0 {
                        reading.bytes += buffer[0 ..< count]
                    } else if count == 0 || errno == ECONNRESET {
                        reading.closed = true
                        close()
                        break
                    } else if errno != EINTR && errno != EAGAIN {
                        break
                    }
                }
                continuation.resume(returning: reading)
            }
        }
    }

    /// Closes the connection; again, does nothing (the number may be another's by then).
    func close() {
        let descriptor = open.exchange(-1, ordering: .relaxed)
        if descriptor >= 0 { Glibc.close(descriptor) }
    }
}
