import CAVFormat
import VTFFmpeg
import VTCore

/// Writes an MPEG transport stream through FFmpeg's muxer (libavformat), which does it well.
/// The bytes go through vtrecord's own `OutputFile` (a custom AVIOContext), so a failed write
/// cuts a regular file back and is reported as every output error is, and standard output
/// and pipes work as for the other kinds.
///
/// Access units go in as Annex B with SPS/PPS before each keyframe; the muxer puts PAT/PMT
/// before keyframes and carries PCR; each packet is written at once, so a file cut anywhere
/// plays to its last whole packet.
///
/// Presentation times start at 0 in each file. With B-frames the first decode times are then
/// below 0: they are carried modulo 2^33, as the format's 33-bit clock wraps anyway
/// (libavformat would otherwise shift the whole file by the B-frame lead).
public final class TransportStreamWriter: SingleFileOutput {
    public struct Options: Sendable {
        public var frameRate: FrameRate
        public var metadata: ContainerMetadata
        /// The sound track (AAC or Opus), if there is one.
        public var audio: AudioFormatDescription?

        public init(frameRate: FrameRate, metadata: ContainerMetadata, audio: AudioFormatDescription? = nil) {
            precondition(audio?.codec != .pcm, "a transport stream carries no 16-bit PCM")
            self.frameRate = frameRate
            self.metadata = metadata
            self.audio = audio
        }
    }

    public let file: OutputFile
    public private(set) var statistics = OutputStatistics()
    private let options: Options
    private let sink: Sink
    private var format: VideoFormatDescription?
    private var muxer: FFmpegMuxer?
    private var framesGiven = 0

    /// Where libavformat's writes go: appended to the output file (the transport stream muxer
    /// never goes back).
    final class Sink {
        let file: OutputFile
        var failure: OutputError?

        init(file: OutputFile) { self.file = file }

        func write(_ bytes: UnsafeRawBufferPointer) throws(OutputError) {
            try file.append(bytes)
            file.startWriteback(ofLast: Int64(bytes.count))
        }
    }

    /// Opens `path` ("-" for standard output); see `OutputFile` for what is refused.
    /// Refused before anything is opened when libavformat cannot be loaded.
    public init(path: String, overwrite: Bool, options: Options) throws(OutputError) {
        if let problem = FFmpegLibraries.loadFailure() { throw .muxer(path: path, reason: problem) }
        self.options = options
        file = try OutputFile(path: path, overwrite: overwrite)
        file.unitName = "packet"
        sink = Sink(file: file)
    }

    deinit { closeMuxer() }

    /// The muxer is opened with the first frame.
    public var holdsNothing: Bool { framesGiven == 0 }

    public func writeHeader(_ format: VideoFormatDescription) throws(OutputError) {
        guard format != self.format else { return }
        guard format.codec == .h264 else {
            throw .muxer(path: file.path, reason: "carries H.264 only, not \(format.codec.rawValue): write Motion JPEG to .mkv or .mp4")
        }
        self.format = format
    }

    /// Sound packets go to the muxer as they come (AAC gets its ADTS headers there); their
    /// times count from the same base as the picture's, so AAC's priming puts the first one
    /// just before 0.
    public func writeAudio(_ sound: EncodedAudioPacket) throws(OutputError) {
        guard let muxer else { preconditionFailure("sound written before the first frame") }
        try muxer.writeAudio(sound)
        statistics.bytes = file.endOffset
    }

    public func write(_ frame: EncodedFrame) throws(OutputError) {
        try write(frame, sharing: nil)
    }

    public var writesAnnexB: Bool { true }

    /// The access unit as the streams beside the recording send it: converted once for all.
    public func write(_ frame: EncodedFrame, sharing annexB: SharedAnnexB) throws(OutputError) {
        try write(frame, sharing: .some(annexB))
    }

    private func write(_ frame: EncodedFrame, sharing annexB: SharedAnnexB?) throws(OutputError) {
        guard let format else { preconditionFailure("a frame written before its header") }
        if muxer == nil { try open(format, first: frame) }
        guard let muxer else { return }
        framesGiven += 1
        if let annexB {
            try muxer.write(frame, annexB: annexB.bytes())
        } else {
            try muxer.write(frame, format: format)
        }
        statistics.frames += 1
        if frame.isKeyFrame { statistics.keyFrames += 1 }
        statistics.bytes = file.endOffset
    }

    public func complete() throws(OutputError) {
        try muxer?.writeTrailer()
        closeMuxer()
        statistics.bytes = file.endOffset
    }

    public func salvage() {
        // What the muxer still holds goes out if the medium takes it.
        if let io = muxer?.context.pointee.pb { vt_avio_flush(io) }
        closeMuxer()
    }

    /// Sets up the muxer for the stream `format` describes and writes the file's header.
    private func open(_ format: VideoFormatDescription, first frame: EncodedFrame) throws(OutputError) {
        let metadata = options.metadata
        // What a transport stream carries of it: its SDT's provider and service names.
        var tags: [(String, String)] = [("service_provider", metadata.encoder)]
        if let source = metadata.source { tags.append(("service_name", source)) }
        let muxer = try FFmpegMuxer(formatName: "mpegts", url: nil, format: format, base: frame.pts,
                                    frameRate: options.frameRate, audio: options.audio, tags: tags,
                                    parameterSetsUpFront: false) { [file, sink] status, what in
            sink.failure ?? .muxer(path: file.path, reason: "cannot \(what): \(FFmpegLibraries.errorText(status))")
        }
        self.muxer = muxer
        let context = muxer.context
        // 188-byte TS packets fill the buffer exactly, so a write never ends inside one.
        let bufferSize: Int32 = 188 * 174
        guard let buffer = vt_av_malloc(Int(bufferSize))?.assumingMemoryBound(to: UInt8.self) else {
            throw .muxer(path: file.path, reason: "out of memory")
        }
        let opaque = Unmanaged.passUnretained(sink).toOpaque()
        guard let io = vt_avio_alloc_context(buffer, bufferSize, 1, opaque, nil, Self.writePacket, nil) else {
            vt_av_free(buffer)
            throw .muxer(path: file.path, reason: "out of memory")
        }
        io.pointee.seekable = 0
        context.pointee.pb = io
        context.pointee.flags |= AVFMT_FLAG_CUSTOM_IO | AVFMT_FLAG_FLUSH_PACKETS
        context.pointee.flush_packets = 1
        context.pointee.avoid_negative_ts = AVFMT_AVOID_NEG_TS_DISABLED
        var none: OpaquePointer?
        try muxer.writeHeader(options: &none)
    }

    private func closeMuxer() {
        if let context = muxer?.context, let io = context.pointee.pb {
            vt_av_free(io.pointee.buffer)
            var pointer: UnsafeMutablePointer<AVIOContext>? = io
            vt_avio_context_free(&pointer)
            context.pointee.pb = nil
        }
        muxer = nil
    }

    private static let writePacket: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int32) -> Int32 = {
        opaque, buffer, size in
        guard let opaque, let buffer, size >= 0 else { return vt_averror_eio() }
        let sink = Unmanaged<Sink>.fromOpaque(opaque).takeUnretainedValue()
        do throws(OutputError) {
            try sink.write(UnsafeRawBufferPointer(start: buffer, count: Int(size)))
        } catch {
            sink.failure = error
            return vt_averror_eio()
        }
        return size
    }
}
