/// What vtrecord tells its HTTP server as it starts it (as JSON, across the library's C
/// boundary): where to listen, who may come in, where the JPEGs come from, and which files
/// `/recordings` may serve.
public struct LiveServerSettings: Codable, Sendable, Equatable {
    /// `--http`, as given (`HTTPAddress` reads it).
    public var address: String
    /// `--http-auth FILE`: read and checked by the server as it starts.
    public var passwordFile: String?
    /// The JPEGs are the camera's own (an MJPEG camera).
    public var jpegsFromCamera: Bool
    /// Seconds of an HLS part.
    public var hlsPartTarget: Double
    /// The folders and file-name patterns (regular expressions) of the templates' files.
    public var library: [LibrarySource]

    public struct LibrarySource: Codable, Sendable, Equatable {
        /// "recording" or "clip".
        public var kind: String
        public var directory: String
        public var pattern: String

        public init(kind: String, directory: String, pattern: String) {
            self.kind = kind
            self.directory = directory
            self.pattern = pattern
        }
    }

    public init(address: String, passwordFile: String?, jpegsFromCamera: Bool, hlsPartTarget: Double,
                library: [LibrarySource]) {
        self.address = address
        self.passwordFile = passwordFile
        self.jpegsFromCamera = jpegsFromCamera
        self.hlsPartTarget = hlsPartTarget
        self.library = library
    }
}
