/// The H.264 profiles vtrecord encodes and decodes (`--profile`; an SPS's profile_idc).
public enum H264Profile: String, Sendable, CaseIterable {
    /// Constrained Baseline: no B-frames, no CABAC, no 8×8 transform.
    case baseline, main, high

    /// The profile as H.264 names it.
    public var streamName: String {
        switch self {
        case .baseline: "Constrained Baseline"
        case .main: "Main"
        case .high: "High"
        }
    }
}
