import VTCore

/// Keyframes asked of the encoder on behalf of others (a stream opened again, a live viewer
/// joining): at most one a second, however many ask, so that a crowd arriving at once costs the
/// encoder one keyframe and a receiver that reconnects in a loop cannot fill the stream with
/// them.
public struct KeyFrameRequestPacing: Sendable {
    /// The least time between two keyframes asked, in nanoseconds.
    public static let spacing: Int64 = 1_000_000_000

    /// CLOCK_MONOTONIC nanoseconds of the last keyframe asked.
    private var lastAsked: Int64?

    public init() {}

    /// Whether a keyframe may be asked at `now` (CLOCK_MONOTONIC nanoseconds).
    public func mayAsk(at now: Int64) -> Bool {
        lastAsked.map { now - $0 >= Self.spacing } ?? true
    }

    /// A keyframe was asked at `now`.
    public mutating func asked(at now: Int64) {
        lastAsked = now
    }
}
