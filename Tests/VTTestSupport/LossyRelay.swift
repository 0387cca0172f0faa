import Foundation

/// Tests/Peers/lossy_relay.py run by a test: a UDP relay on 127.0.0.1 that drops and delays
/// datagrams both ways between a sender and a receiver (SRT), standing in for a bad network
/// where the kernel has no netem.
///
/// Not for use from several threads at once.
public final class LossyRelay {
    /// What the relay passed on and dropped in one direction.
    public struct Direction: Sendable, Equatable, Decodable, CustomStringConvertible {
        public var relayed: Int
        public var dropped: Int
        public var description: String { "\(relayed) relayed, \(dropped) dropped" }
    }

    /// The relay's counts: `forward` from senders to the receiver, `backward` the answers.
    public struct Counts: Sendable, Equatable, Decodable, CustomStringConvertible {
        public var forward: Direction
        public var backward: Direction
        public var description: String { "forward \(forward); backward \(backward)" }
    }

    /// The port senders send to.
    public let port: Int
    private let peer: ReportingPeer<Counts>

    /// Starts the relay from a free port to `receiverPort`, dropping each datagram with
    /// probability `loss` and holding each one it keeps for `delay`, with the random sequence of
    /// `seed`; it ends by itself after `lifetime`. Returns once the relay has bound its port.
    public init(to receiverPort: Int, loss: Double, delay: Duration, seed: Int,
                lifetime: Duration = .seconds(30), readyWithin: Duration = .seconds(10)) throws {
        let port = LoopbackPort.free(udp: true)
        self.port = port
        peer = try ReportingPeer(
            name: "lossy relay",
            arguments: ["/usr/bin/python3", CBuild.path("Tests/Peers/lossy_relay.py"),
                        "--listen", "127.0.0.1:\(port)", "--to", "127.0.0.1:\(receiverPort)",
                        "--loss", String(loss), "--delay-ms", String(delay / .milliseconds(1)), "--seed", String(seed),
                        "--seconds", String(lifetime / .seconds(1))],
            ready: "relaying", readyWithin: readyWithin,
            notReady: { PeerError.notListening(peer: "lossy relay", port: port, waited: readyWithin, log: $0) })
    }

    /// Ends the relay (SIGTERM) and returns what it relayed and dropped each way.
    public func stop() throws -> Counts { try peer.stop() }
}
