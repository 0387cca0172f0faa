/// Why a recording ended.
public enum StopReason: String, Sendable, Codable {
    /// Not stopped yet: a live summary (`GET /status`) of a recording under way.
    case recording
    case endOfInput = "end_of_input"
    case frameLimit = "frames"
    case durationLimit = "duration"
    case signal
    case error
}
