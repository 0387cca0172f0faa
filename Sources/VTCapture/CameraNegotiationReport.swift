import VTCore

/// What the user asked of the camera beside what the driver chose, for the notice and the
/// JSON summary.
public struct CameraNegotiationReport: Sendable, Equatable {
    public var requested: CameraRequest
    public var format: CameraPixelFormat
    public var width: Int
    public var height: Int
    public var frameRate: FrameRate

    public init(requested: CameraRequest, format: CameraPixelFormat, width: Int, height: Int,
                frameRate: FrameRate) {
        self.requested = requested
        self.format = format
        self.width = width
        self.height = height
        self.frameRate = frameRate
    }

    /// One line naming each asked value the driver did not give, or nil when it gave all.
    public var difference: String? {
        var asked: [String] = []
        var got: [String] = []
        if let wanted = requested.format, wanted != format {
            asked.append(wanted.rawValue)
            got.append(format.rawValue)
        }
        if let size = requested.size, size != FrameSize(width: width, height: height) {
            asked.append("\(size)")
            got.append("\(width)x\(height)")
        }
        if let rate = requested.frameRate, rate != frameRate {
            asked.append("\(rate) fps")
            got.append("\(frameRate) fps")
        }
        guard !asked.isEmpty else { return nil }
        return "asked for \(asked.joined(separator: " ")), the camera gives \(got.joined(separator: " "))"
    }
}
