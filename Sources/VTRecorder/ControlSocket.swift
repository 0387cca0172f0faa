import Foundation
import Synchronization
import VTCore

#if canImport(Glibc)
import Glibc
#endif

/// `--control-socket PATH`: a Unix stream socket that takes one command a line and answers
/// each with one line (JSON), on a thread of its own (`vtrecord-ctl`), as mpv's and
/// HAProxy's command sockets do. Any number of lines may come on one connection; a few
/// connections may be open at once.
///
/// Nothing a client does reaches the recording except through `handle`: a line over
/// `longestLine` bytes is answered with an error and the connection closed; a client that
/// does not read its answers is cut off rather than waited for; at most `mostClients` are
/// served at once (one more is closed straight away).
public final class ControlSocket: Sendable {
    /// Why the socket cannot be made; said on one line, exit 2.
    public struct SetUpError: ReportableError {
        public let message: String
        public var exitStatus: ExitStatus { .usage }
        public var description: String { message }
    }

    public let path: String
    private let listener: Int32
    /// Written to end the thread: poll wakes on its other end.
    private let wakeWrite: Int32
    private let wakeRead: Int32
    private let ended = DispatchSemaphore(value: 0)
    private let closed = Atomic<Bool>(false)
    private let handle: @Sendable (String) -> String

    static let longestLine = 4096
    static let mostClients = 16

    /// Binds `path` and starts answering. A stale socket (no one listening) is replaced; a
    /// live one, or anything else at the path, is refused.
    public init(path: String, handle: @escaping @Sendable (String) -> String) throws {
        self.path = path
        self.handle = handle
        if try Self.check(path) {
            // Left by a process that ended without removing it.
            _ = unlink(path)
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else {
            throw SetUpError(message: "--control-socket \(path): a socket path is at most \(capacity - 1) bytes: give a shorter one")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8) + [0])
        }
        let fd = try systemCall("socket") { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        do {
            try withUnsafePointer(to: &address) { pointer throws(SystemError) in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress throws(SystemError) in
                    _ = try systemCall("bind") { bind(fd, socketAddress, socklen_t(MemoryLayout<sockaddr_un>.size)) }
                }
            }
            try systemCall("listen") { listen(fd, 8) }
        } catch {
            Glibc.close(fd)
            throw SetUpError(message: "--control-socket \(path): \(error.reason): give a path in a folder you can write")
        }
        var fds: [Int32] = [0, 0]
        do {
            try systemCall("pipe") { pipe(&fds) }
        } catch {
            Glibc.close(fd)
            _ = unlink(path)
            throw error
        }
        for own in [fd, fds[0], fds[1]] { _ = fcntl(own, F_SETFD, FD_CLOEXEC) }
        listener = fd
        wakeRead = fds[0]
        wakeWrite = fds[1]
        Thread.start(named: "vtrecord-ctl") { [self] in
            serve()
            ended.signal()
        }
    }

    /// Stops answering and removes the socket; once.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
        ended.wait()
        _ = unlink(path)
        Glibc.close(listener)
        Glibc.close(wakeRead)
        Glibc.close(wakeWrite)
    }

    /// Whether `path` can take the socket: nothing there (false), or a socket nobody listens on
    /// any more (true: it may be replaced). Anything else is refused, as the command line's
    /// checks refuse it before the camera is opened.
    public static func check(_ path: String) throws(SetUpError) -> Bool {
        var status = stat()
        guard lstat(path, &status) == 0 else { return false }
        guard status.st_mode & S_IFMT == S_IFSOCK else {
            throw SetUpError(message: "--control-socket \(path): exists and is not a socket: remove it or give another path")
        }
        guard !answers(path) else {
            throw SetUpError(message: "--control-socket \(path): another process is listening there: give another path")
        }
        return true
    }

    /// Whether a process accepts connections at `path`.
    private static func answers(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8.prefix(raw.count - 1)) + [0])
        }
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }

    // MARK: the socket's thread

    private struct Client {
        let fd: Int32
        var pending: [UInt8] = []
    }

    private func serve() {
        var clients: [Client] = []
        defer { for client in clients { Glibc.close(client.fd) } }
        while true {
            var polled = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
                          pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
                + clients.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            guard poll(&polled, nfds_t(polled.count), -1) >= 0 || errno == EINTR else { return }
            if polled[0].revents != 0 { return }
            var closing: Set<Int32> = []
            for index in clients.indices where polled[index + 2].revents != 0 {
                if !read(&clients[index]) { closing.insert(clients[index].fd) }
            }
            for fd in closing { Glibc.close(fd) }
            clients.removeAll { closing.contains($0.fd) }
            if polled[1].revents & Int16(POLLIN) != 0 {
                let fd = accept(listener, nil, nil)
                if fd >= 0 {
                    _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                    if clients.count < Self.mostClients {
                        clients.append(Client(fd: fd))
                    } else {
                        Glibc.close(fd)
                    }
                }
            }
        }
    }

    /// Reads what the client sent and answers each whole line; false when the connection is done.
    private func read(_ client: inout Client) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(client.fd, &buffer, buffer.count, 0)
        if count < 0 { return errno == EAGAIN || errno == EINTR }
        if count == 0 { return false }
        client.pending += buffer[..<count]
        while let newline = client.pending.firstIndex(of: UInt8(ascii: "\n")) {
            let line = String(decoding: client.pending[..<newline], as: UTF8.self)
            client.pending.removeSubrange(...newline)
            guard answer(client.fd, handle(line.trimmingCharacters(in: .whitespacesAndNewlines))) else { return false }
        }
        if client.pending.count > Self.longestLine {
            _ = answer(client.fd, #"{"ok":false,"error":"a line is at most \#(Self.longestLine) bytes"}"#)
            return false
        }
        return true
    }

    /// Sends one line without waiting: a client that does not read its answers is let go.
    private func answer(_ fd: Int32, _ text: String) -> Bool {
        let bytes = Array((text + "\n").utf8)
        let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
        return sent == bytes.count
    }
}
