import VTCore

/// Makes the writer for a container (AVFoundation's `AVAssetWriter(outputURL:fileType:)`): every
/// kind takes the session's format description and its AVCC frames through `MediaOutput`, so
/// the recorder, segments, signals and output errors work the same for each.
public enum AssetWriter {
    public struct Settings: Sendable {
        public var container: Container
        public var overwrite: Bool
        /// The nominal frame rate of the recording.
        public var frameRate: FrameRate
        /// Frames carry the source's own capture times (a camera), not a nominal grid.
        public var sourceTimes: Bool
        /// MP4 and Matroska: the longest fragment (cluster) while recording, in seconds.
        public var fragmentDuration: Double
        /// MP4: stay fragmented at a clean end.
        public var keepFragmented: Bool
        public var metadata: ContainerMetadata
        /// The sound track, when the recording has one (never for raw H.264).
        public var audio: AudioFormatDescription?

        public init(container: Container, overwrite: Bool, frameRate: FrameRate, sourceTimes: Bool = false,
                    fragmentDuration: Double = 1, keepFragmented: Bool = false, metadata: ContainerMetadata,
                    audio: AudioFormatDescription? = nil) {
            self.container = container
            self.overwrite = overwrite
            self.frameRate = frameRate
            self.sourceTimes = sourceTimes
            self.fragmentDuration = fragmentDuration
            self.keepFragmented = keepFragmented
            self.metadata = metadata
            self.audio = audio
        }
    }

    /// Opens `path` ("-" for standard output) as the container `settings` names.
    public static func open(path: String, settings: Settings) throws(OutputError) -> any MediaOutput {
        switch settings.container {
        case .h264:
            return try AnnexBWriter(path: path, overwrite: settings.overwrite)
        case .mp4:
            let timescale = MP4Writer.Options.timescale(for: settings.frameRate, sourceTimes: settings.sourceTimes)
            return try MP4Writer(path: path, overwrite: settings.overwrite,
                                 options: .init(frameRate: settings.frameRate, timescale: timescale,
                                                fragmentDuration: settings.fragmentDuration,
                                                keepFragmented: settings.keepFragmented,
                                                metadata: settings.metadata, audio: settings.audio))
        case .mkv:
            return try MatroskaWriter(path: path, overwrite: settings.overwrite,
                                      options: .init(frameRate: settings.frameRate,
                                                     fragmentDuration: settings.fragmentDuration,
                                                     metadata: settings.metadata, audio: settings.audio))
        case .ts:
            return try TransportStreamWriter(path: path, overwrite: settings.overwrite,
                                             options: .init(frameRate: settings.frameRate, metadata: settings.metadata,
                                                            audio: settings.audio))
        }
    }
}
