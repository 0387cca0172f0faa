/// `--http`: who watched and what the server refused (the summary's `http`).
public struct HTTPReport: Codable, Sendable, Equatable {
    /// Where it listened, with the port it was given for port 0.
    public var address: String
    public var liveViewers: Int
    public var liveViewersServed: Int
    /// Viewers of /live.mp4 cut off for falling too far behind.
    public var liveViewersCutOff: Int
    /// Connections closed for not sending a whole request in time (idle or slow).
    public var connectionsTimedOut: Int
    /// Connections closed for not reading what they were sent.
    public var clientsStalled: Int
    public var authFailures: Int

    public init(address: String, liveViewers: Int, liveViewersServed: Int, liveViewersCutOff: Int,
                connectionsTimedOut: Int, clientsStalled: Int, authFailures: Int) {
        self.address = address
        self.liveViewers = liveViewers
        self.liveViewersServed = liveViewersServed
        self.liveViewersCutOff = liveViewersCutOff
        self.connectionsTimedOut = connectionsTimedOut
        self.clientsStalled = clientsStalled
        self.authFailures = authFailures
    }

    enum CodingKeys: String, CodingKey {
        case address, liveViewers = "live_viewers", liveViewersServed = "live_viewers_served"
        case liveViewersCutOff = "live_viewers_cut_off", connectionsTimedOut = "connections_timed_out"
        case clientsStalled = "clients_stalled", authFailures = "auth_failures"
    }
}
