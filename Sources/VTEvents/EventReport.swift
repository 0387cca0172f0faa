import VTCore

/// What `--events` did, for the summary, the status line and the control socket's `status`.
public struct EventReport: Codable, Sendable, Equatable {
    /// One clip file.
    public struct Clip: Codable, Sendable, Equatable {
        public enum State: String, Codable, Sendable {
            /// Being written (the event goes on, or its post-roll).
            case recording
            case finished
            /// The file could not be written whole; it ends where the failure came.
            case failed
        }

        public var file: String
        public var state: State
        /// What asked for it, and its label.
        public var trigger: EventRequest.Source
        @NullWhenAbsent public var label: String?
        /// Presentation times of the first picture and of the end (the picture after the last),
        /// in seconds on the recording's clock.
        public var start: Double
        @NullWhenAbsent public var end: Double?
        /// Seconds held before the trigger that the clip starts with.
        public var preRoll: Double
        /// The clip continues one cut at `--max-clip` (the same event).
        public var continues: Bool
        public var frames = 0
        public var bytes: Int64 = 0
        @NullWhenAbsent public var error: String?

        enum CodingKeys: String, CodingKey {
            case file, state, trigger, label, start, end, preRoll = "pre_roll", continues, frames, bytes, error
        }
    }

    /// Every clip, in order.
    public var clips: [Clip] = []
    /// Requests taken (a second one during a clip extends it).
    public var triggers = 0
    /// Bytes of encoded pictures and sound held for the pre-roll now, and the most held.
    public var heldBytes = 0
    public var heldBytesPeak = 0
    /// The bound on what is held.
    public var heldBytesLimit = 0
    /// GOPs let go early to stay within it: a pre-roll shorter than asked.
    public var gopsDroppedForBytes = 0
    /// Packets a clip lost because its file fell too far behind.
    public var packetsDropped = 0
    /// `--on-event`: commands started, and those that failed (exited other than 0, ended by a
    /// signal, could not start); absent without it.
    public var hooksRun: Int?
    public var hooksFailed: Int?

    public init() {}

    enum CodingKeys: String, CodingKey {
        case clips, triggers, heldBytes = "held_bytes", heldBytesPeak = "held_bytes_peak"
        case heldBytesLimit = "held_bytes_limit", gopsDroppedForBytes = "gops_dropped_for_bytes"
        case packetsDropped = "packets_dropped", hooksRun = "hooks_run", hooksFailed = "hooks_failed"
    }
}
