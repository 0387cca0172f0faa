import Foundation

/// What the file says about itself beyond the pictures: when it was made, by what, of what.
public struct ContainerMetadata: Sendable, Equatable {
    /// The wall-clock time of the first frame.
    public var creationTime: Date?
    /// `vtrecord 0.x`.
    public var encoder: String
    /// The camera, input file or test pattern the pictures came from.
    public var source: String?

    public init(creationTime: Date? = nil, encoder: String, source: String? = nil) {
        self.creationTime = creationTime
        self.encoder = encoder
        self.source = source
    }
}
