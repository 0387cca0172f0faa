import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Ports on 127.0.0.1 for the peers of stream tests: one nobody holds, and whether a given
/// process has bound one yet.
public enum LoopbackPort {
    /// A port on 127.0.0.1 that was free a moment ago: the kernel picks it when a socket binds
    /// port 0, and the socket is closed before this returns. Another program may take it in
    /// between; a receiver that then cannot bind exits, and its wait for `isBound` says so.
    public static func free(udp: Bool) -> Int {
        let (descriptor, port) = bound(udp: udp)
        close(descriptor)
        return port
    }

    /// A socket bound to a free port on 127.0.0.1, and the port: kept open, it holds the port
    /// (a UDP socket that nobody reads is an address that never answers). The caller closes it.
    public static func bound(udp: Bool) -> (descriptor: Int32, port: Int) {
        let descriptor = socket(AF_INET, Int32(udp ? SOCK_DGRAM.rawValue : SOCK_STREAM.rawValue), 0)
        precondition(descriptor >= 0, "socket: \(String(cString: strerror(errno)))")
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr = in_addr(s_addr: in_addr_t(0x7f00_0001).bigEndian)
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(descriptor, generic, length) == 0 && getsockname(descriptor, generic, &length) == 0
            }
        }
        precondition(bound, "binding 127.0.0.1:0: \(String(cString: strerror(errno)))")
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// True when process `pid` holds a socket bound to `port`: for TCP one that listens, for
    /// UDP any. Read from /proc/net/{tcp,udp} and the process's descriptors, so nothing
    /// connects: ffmpeg's RTSP and TCP listeners accept exactly one connection, and a probe
    /// that connected would be taken for the publisher.
    public static func isBound(_ port: Int, udp: Bool, by pid: Int32) -> Bool {
        let inodes = socketInodes(of: pid)
        guard !inodes.isEmpty,
              let table = try? String(contentsOfFile: udp ? "/proc/net/udp" : "/proc/net/tcp", encoding: .utf8)
        else { return false }
        // TCP state 0A is LISTEN; a bound UDP socket may be in any state
        let listening = "0A"
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 9,
                  let local = fields[1].split(separator: ":").last, Int(local, radix: 16) == port,
                  udp || fields[3] == listening
            else { continue }
            if inodes.contains(String(fields[9])) { return true }
        }
        return false
    }

    /// Waits until process `pid` holds a socket bound to `port` (`isBound`), for at most
    /// `timeout` and while `isRunning` says it runs; whether it does.
    public static func waitUntilBound(_ port: Int, udp: Bool, by pid: Int32, timeout: Duration = .seconds(10),
                                      while isRunning: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if isBound(port, udp: udp, by: pid) { return true }
            if !isRunning() { break }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return isBound(port, udp: udp, by: pid)
    }

    /// The inodes of the sockets `pid` has open, from its /proc/PID/fd links ("socket:[N]").
    private static func socketInodes(of pid: Int32) -> Set<String> {
        let directory = "/proc/\(pid)/fd"
        guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        var inodes: Set<String> = []
        for descriptor in descriptors {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(descriptor)"),
                  target.hasPrefix("socket:[") else { continue }
            inodes.insert(String(target.dropFirst("socket:[".count).dropLast()))
        }
        return inodes
    }
}
