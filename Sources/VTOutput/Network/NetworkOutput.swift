import CAVFormat
import VTCore
import VTFFmpeg

/// A recording published to a media server through libavformat: MPEG-TS over SRT or UDP, FLV
/// over RTMP, RTP over RTSP (see `NetworkDestination`). The picture goes as Annex B with SPS
/// and PPS before every keyframe, so a receiver can start at any keyframe; the sound goes
/// beside it.
///
/// Nothing is opened when it is made: `connect` opens the connection and sends the stream's
/// header, or the first frame written does. Every call that waits on the network waits at
/// most `connectTimeout` (connecting; an SRT listener waits for its caller without a limit)
/// or `stallTimeout` (one packet, the trailer) and gives up at once when `interrupt` is
/// stopped, so a server that never answers or a receiver that stopped reading cannot hold a
/// thread.
public final class NetworkOutput: MediaOutput {
    public struct Settings: Sendable {
        public var frameRate: FrameRate
        public var audio: AudioFormatDescription?
        public var metadata: ContainerMetadata
        /// Seconds a connection may take, the server's answers included.
        public var connectTimeout: Double
        /// Seconds one packet may take to go out before the receiver counts as gone.
        public var stallTimeout: Double

        public init(frameRate: FrameRate, audio: AudioFormatDescription? = nil, metadata: ContainerMetadata,
                    connectTimeout: Double = 5, stallTimeout: Double = 5) {
            self.frameRate = frameRate
            self.audio = audio
            self.metadata = metadata
            self.connectTimeout = connectTimeout
            self.stallTimeout = stallTimeout
        }
    }

    public let destination: NetworkDestination
    public private(set) var statistics = OutputStatistics()
    private let settings: Settings
    private let interrupt: NetworkInterrupt
    private var format: VideoFormatDescription?
    private var muxer: FFmpegMuxer?
    /// Whether the call in progress is connecting (for what a give-up means).
    private var connecting = false
    /// The decode time of the first picture sent on this connection: FLV refuses any packet
    /// before it, and sound from before it is of no use to a receiver starting there.
    private var streamStart: MediaTime?

    /// Refused when libavformat cannot be loaded.
    public init(destination: NetworkDestination, settings: Settings, interrupt: NetworkInterrupt) throws(OutputError) {
        if let problem = FFmpegLibraries.loadFailure() { throw .network(url: destination.description, reason: problem) }
        Self.networkReady
        self.destination = destination
        self.settings = settings
        self.interrupt = interrupt
    }

    deinit { close() }

    /// libavformat's network layer (TLS for rtmps) is set up once per process.
    private static let networkReady: Void = { _ = vt_avformat_network_init() }()

    /// A stream is not a file.
    public var paths: [String] { [] }
    public var unusedFile: String? { nil }
    public var isConnected: Bool { muxer != nil }

    /// Connects and sends the stream's header, for pictures coded with `format`; times are
    /// sent counted from `base`.
    public func connect(format: VideoFormatDescription, base: MediaTime) throws(OutputError) {
        precondition(muxer == nil, "connected twice")
        self.format = format
        streamStart = nil
        let muxer = try FFmpegMuxer(formatName: destination.scheme.muxerName, url: destination.libavformatURL,
                                    format: format, base: base, frameRate: settings.frameRate, audio: settings.audio,
                                    tags: [("encoder", settings.metadata.encoder)], parameterSetsUpFront: true) {
            [unowned self] status, what in failure(status, what)
        }
        let context = muxer.context
        context.pointee.interrupt_callback = interrupt.callback
        context.pointee.flush_packets = 1
        connecting = true
        // A listener waits for its receiver for as long as it takes (until a stop).
        if !destination.waitsForCaller { interrupt.giveUp(after: settings.connectTimeout) }
        defer {
            connecting = false
            interrupt.noDeadline()
        }
        var options: OpaquePointer?
        defer { vt_av_dict_free(&options) }
        if context.pointee.oformat.pointee.flags & AVFMT_NOFILE == 0 {
            var callback = interrupt.callback
            let status = vt_avio_open2(&context.pointee.pb, destination.libavformatURL, AVIO_FLAG_WRITE, &callback, &options)
            guard status >= 0 else { throw failure(status, "connect") }
        }
        switch destination.scheme {
        case .rtsp: vt_av_dict_set(&options, "rtsp_transport", "tcp", 0)
        // A live stream has no duration or size to go back and fill in.
        case .rtmp, .rtmps: vt_av_dict_set(&options, "flvflags", "no_duration_filesize", 0)
        case .srt, .udp: break
        }
        self.muxer = muxer
        do {
            try muxer.writeHeader(options: &options)
        } catch {
            close()
            throw error
        }
    }

    /// The parameter sets go with every keyframe, so a change needs nothing more.
    public func writeHeader(_ format: VideoFormatDescription) throws(OutputError) {
        guard format.codec == .h264 else {
            throw .network(url: destination.description, reason: "a stream carries H.264 only, not \(format.codec.rawValue)")
        }
        self.format = format
    }

    public func write(_ frame: EncodedFrame) throws(OutputError) {
        try send(frame) { (muxer, format) throws(OutputError) in try muxer.write(frame, format: format) }
    }

    public var writesAnnexB: Bool { true }

    /// `write` for an access unit whose Annex B form is made once for every output.
    public func write(_ frame: EncodedFrame, sharing annexB: SharedAnnexB) throws(OutputError) {
        try send(frame) { (muxer, _) throws(OutputError) in try muxer.write(frame, annexB: annexB.bytes()) }
    }

    private func send(_ frame: EncodedFrame,
                      _ body: (FFmpegMuxer, VideoFormatDescription) throws(OutputError) -> Void) throws(OutputError) {
        guard let format else { preconditionFailure("a frame written before its header") }
        if muxer == nil { try connect(format: format, base: frame.pts) }
        guard let muxer else { return }
        interrupt.giveUp(after: settings.stallTimeout)
        defer { interrupt.noDeadline() }
        if streamStart == nil { streamStart = frame.dts }
        try body(muxer, format)
        statistics.frames += 1
        if frame.isKeyFrame { statistics.keyFrames += 1 }
        statistics.bytes += Int64(frame.data.count)
    }

    /// Sound from before the stream's first picture is left out: a receiver starts with a
    /// picture, and FLV refuses a packet earlier than the first it was given (a stream opened
    /// again starts at a keyframe, and the sound written after it reaches back to the frame
    /// before).
    public func writeAudio(_ packet: EncodedAudioPacket) throws(OutputError) {
        guard let muxer, let audio = settings.audio, let streamStart else { return }
        let start = MediaTime(value: packet.pts, timescale: Int32(audio.sampleRate))
        guard start >= max(streamStart, muxer.base) else { return }
        interrupt.giveUp(after: settings.stallTimeout)
        defer { interrupt.noDeadline() }
        try muxer.writeAudio(packet)
        statistics.bytes += Int64(packet.data.count)
    }

    public func finish(keepEmpty: Bool) throws(OutputError) {
        guard let muxer else { return }
        interrupt.giveUp(after: settings.stallTimeout)
        defer {
            interrupt.noDeadline()
            close()
        }
        try muxer.writeTrailer()
    }

    /// Ends the stream at once: the muxer is told to finish (an RTSP session sends its
    /// TEARDOWN and closes its connections there) with no time to wait for anything.
    public func abandon() {
        guard let muxer else { return }
        interrupt.giveUp(after: 0)
        try? muxer.writeTrailer()
        interrupt.noDeadline()
        close()
    }

    private func close() {
        if let context = muxer?.context, context.pointee.pb != nil,
           context.pointee.oformat.pointee.flags & AVFMT_NOFILE == 0 {
            _ = vt_avio_closep(&context.pointee.pb)
        }
        muxer = nil
    }

    /// The error of a libavformat status, saying why a call gave up when it was made to.
    private func failure(_ status: Int32, _ what: String) -> OutputError {
        let url = destination.description
        if let reason = Self.givingUp(interrupt, connecting: connecting, what: what, settings: settings) {
            return .network(url: url, reason: reason)
        }
        // RTSP connects in its header, SRT, UDP and RTMP before it: either way, connecting.
        return .network(url: url, reason: "cannot \(connecting ? "connect" : what): \(FFmpegLibraries.errorText(status))")
    }

    /// Why a call gave up when `interrupt` made it, or nil when it did not: a stop, the time
    /// left to a stream at the recording's end, or the call's own time (to connect, or for
    /// the receiver to take a packet).
    static func givingUp(_ interrupt: NetworkInterrupt, connecting: Bool, what: String, settings: Settings) -> String? {
        if interrupt.isStopped { return "stopped while trying to \(what)" }
        guard interrupt.isDue else { return nil }
        // The recording's end, not the receiver, set this deadline.
        if let spent = interrupt.endAllowanceSpent {
            return String(format: "the recording ended and the stream could not %@ in the %g s a stream has to end",
                          what, spent)
        }
        if connecting { return String(format: "no answer within %g s", settings.connectTimeout) }
        return String(format: "the receiver took no data for %g s", settings.stallTimeout)
    }
}
