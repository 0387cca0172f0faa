/// When a recording ends by itself.
public struct RecordingLimits: Sendable, Equatable {
    /// Frames written, then stop.
    public var frames: Int?
    /// Presentation time in seconds: frames before it are written, then stop.
    public var duration: Double?

    public init(frames: Int? = nil, duration: Double? = nil) {
        self.frames = frames
        self.duration = duration
    }
}
