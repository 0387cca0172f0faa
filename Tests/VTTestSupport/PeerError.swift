/// Why a peer of a stream test (a receiver, the lossy relay) could not be used.
public enum PeerError: Error, CustomStringConvertible {
    /// The peer did not bind its port in time, or exited first (the port taken by another
    /// program, a tool missing, a configuration refused).
    case notListening(peer: String, port: Int, waited: Duration, log: String)
    /// The peer ended without the report it prints on its way out.
    case noReport(peer: String, log: String)

    public var description: String {
        switch self {
        case let .notListening(peer, port, waited, log):
            "\(peer) was not listening on 127.0.0.1:\(port) after \(waited): \(log.suffix(3000))"
        case let .noReport(peer, log):
            "\(peer) ended without its report: \(log.suffix(3000))"
        }
    }
}
