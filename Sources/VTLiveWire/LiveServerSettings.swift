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
    /// Why `/live.mp4` and HLS are not served (a recording that keeps an MJPEG camera's own
    /// JPEGs has no H.264 to stream); nil when they are.
    public var liveVideoAbsent: String?
    /// Why `/stream.mjpeg` and `/snapshot.jpg` are not served (a recording that keeps an H.264
    /// camera's stream as it comes has no picture to make a JPEG of); nil when they are.
    public var jpegsAbsent: String?
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

    public init(address: String, passwordFile: String?, jpegsFromCamera: Bool, liveVideoAbsent: String? = nil,
                jpegsAbsent: String? = nil, hlsPartTarget: Double, library: [LibrarySource]) {
        self.address = address
        self.passwordFile = passwordFile
        self.jpegsFromCamera = jpegsFromCamera
        self.liveVideoAbsent = liveVideoAbsent
        self.jpegsAbsent = jpegsAbsent
        self.hlsPartTarget = hlsPartTarget
        self.library = library
    }
}
