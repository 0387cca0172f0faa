import CAVFormat
import Foundation
import VTCore
import VTH264

/// Writes Matroska or MPEG-TS through FFmpeg's muxers (libavformat), which do both well. The
/// bytes go through vtrecord's own `OutputFile` (a custom AVIOContext), so a failed write cuts
/// a regular file back and is reported as every output error is, and standard output and pipes
/// work as for the other kinds.
///
/// Matroska: the session's avcC is the track's CodecPrivate and each access unit is stored as
/// the session gave it (AVCC); a cluster starts at each keyframe and after `fragmentDuration`
/// at the latest, and is written out as soon as it is closed, so a file cut anywhere plays to
/// its last complete cluster. At a clean end the muxer writes Cues and the Duration (a
/// regular file only). MPEG-TS: access units in Annex B with SPS/PPS before each keyframe;
/// the muxer puts PAT/PMT before keyframes and carries PCR; each packet is written at once.
///
/// Presentation times start at 0 in each file. With B-frames the first decode times are then
/// below 0: Matroska keeps no decode times, and MPEG-TS carries them modulo 2^33, as its
/// 33-bit clock wraps anyway (libavformat would otherwise shift the whole file by the B-frame
/// lead).
public final class MuxerWriter: MediaOutput {
    public enum Kind: Sendable {
        case matroska
        case mpegTS

        var muxerName: String {
            switch self {
            case .matroska: "matroska"
            case .mpegTS: "mpegts"
            }
        }
    }

    public struct Options: Sendable {
        public var frameRate: FrameRate
        /// Matroska: the longest cluster, in seconds.
        public var fragmentDuration: Double
        public var metadata: ContainerMetadata

        public init(frameRate: FrameRate, fragmentDuration: Double = 1, metadata: ContainerMetadata) {
            self.frameRate = frameRate
            self.fragmentDuration = fragmentDuration
            self.metadata = metadata
        }
    }

    public let kind: Kind
    public let file: OutputFile
    public private(set) var statistics = OutputStatistics()
    private let options: Options
    private let sink: Sink
    private var format: FormatDescription?
    /// Parameter sets that changed after the header was written: in-band before keyframes.
    private var inBandParameterSets: [[UInt8]] = []
    private var context: UnsafeMutablePointer<AVFormatContext>?
    private var stream: UnsafeMutablePointer<AVStream>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    /// The time subtracted from every frame's, so the file starts at 0.
    private var base: MediaTime?
    private var framesGiven = 0
    private var trailerWritten = false
    private var accessUnit: [UInt8] = []

    /// Where libavformat's writes go: the output file, at the position the muxer has sought to
    /// (it goes back to finish sizes and the index at the end).
    final class Sink {
        let file: OutputFile
        var position: Int64 = 0
        var failure: OutputError?

        init(file: OutputFile) { self.file = file }

        func write(_ bytes: UnsafeRawBufferPointer) throws(OutputError) {
            let end = file.endOffset
            let inside = Int(max(0, min(Int64(bytes.count), end - position)))
            if inside > 0 { try file.overwrite(UnsafeRawBufferPointer(rebasing: bytes[0..<inside]), at: position) }
            if inside < bytes.count {
                try file.append(UnsafeRawBufferPointer(rebasing: bytes[inside...]))
                file.startWriteback(ofLast: Int64(bytes.count - inside))
            }
            position += Int64(bytes.count)
        }
    }

    /// Opens `path` ("-" for standard output); see `OutputFile` for what is refused.
    public init(path: String, overwrite: Bool, kind: Kind, options: Options) throws(OutputError) {
        self.kind = kind
        self.options = options
        file = try OutputFile(path: path, overwrite: overwrite)
        file.unitName = kind == .matroska ? "cluster" : "packet"
        sink = Sink(file: file)
    }

    deinit { release() }

    public var paths: [String] { [file.path] }
    public var unusedFile: String? { file.isUnused && framesGiven == 0 ? file.path : nil }
    /// Matroska: its index and duration were written at the end; MPEG-TS has nothing to finish.
    public var finalized: Bool? { kind == .matroska ? trailerWritten : nil }

    public func writeHeader(_ format: FormatDescription) throws(OutputError) {
        guard format != self.format else { return }
        if context != nil { inBandParameterSets = format.sequenceParameterSets + format.pictureParameterSets }
        self.format = format
    }

    public func write(_ frame: EncodedFrame) throws(OutputError) {
        guard let format else { preconditionFailure("a frame written before its header") }
        if context == nil { try open(format, first: frame) }
        guard let context, let stream, let packet, let base else { return }
        accessUnit.removeAll(keepingCapacity: true)
        do {
            switch kind {
            case .matroska:
                if frame.isKeyFrame && !inBandParameterSets.isEmpty {
                    accessUnit += AVCC.lengthPrefixed(inBandParameterSets, lengthSize: format.nalUnitLengthSize)
                }
                accessUnit += frame.data
            case .mpegTS:
                try frame.data.withUnsafeBytes { avcc in
                    try AnnexB.appendAccessUnit(avcc: avcc, nalUnitLengthSize: format.nalUnitLengthSize,
                                                parameterSets: frame.isKeyFrame ? format.sequenceParameterSets
                                                    + format.pictureParameterSets : [],
                                                to: &accessUnit)
                }
            }
        } catch {
            throw .invalidAccessUnit(reason: "\(error)")
        }
        let timeBase = stream.pointee.time_base
        let status = accessUnit.withUnsafeMutableBufferPointer { bytes -> Int32 in
            packet.pointee.data = bytes.baseAddress
            packet.pointee.size = Int32(bytes.count)
            packet.pointee.stream_index = stream.pointee.index
            packet.pointee.pts = Self.ticks(frame.pts, minus: base, in: timeBase)
            packet.pointee.dts = Self.ticks(frame.dts, minus: base, in: timeBase)
            packet.pointee.duration = Self.ticks(options.frameRate.frameDuration, minus: .zero, in: timeBase)
            packet.pointee.flags = frame.isKeyFrame ? AV_PKT_FLAG_KEY : 0
            // Not reference-counted: av_write_frame writes it before returning.
            let status = av_write_frame(context, packet)
            packet.pointee.data = nil
            packet.pointee.size = 0
            return status
        }
        framesGiven += 1
        try check(status, "write a frame")
        statistics.frames += 1
        if frame.isKeyFrame { statistics.keyFrames += 1 }
        statistics.bytes = file.endOffset
    }

    public func finish(keepEmpty: Bool) throws(OutputError) {
        if !keepEmpty && unusedFile != nil {
            release()
            if file.removeIfUnused() { return }
        }
        if let context {
            try check(av_write_trailer(context), "finish the file")
            trailerWritten = file.isRegularFile && file.path != "-"
        }
        release()
        statistics.bytes = file.endOffset
        try file.close()
    }

    public func abandon() {
        // What the muxer still holds goes out if the medium takes it; no index is written.
        if let io = context?.pointee.pb { avio_flush(io) }
        release()
        if !file.removeIfUnused() { try? file.close() }
    }

    /// Sets up the muxer for the stream `format` describes and writes the file's header.
    private func open(_ format: FormatDescription, first frame: EncodedFrame) throws(OutputError) {
        // Whatever fails is reported once, as an OutputError; libavformat's own log stays quiet.
        av_log_set_level(AV_LOG_QUIET)
        var made: UnsafeMutablePointer<AVFormatContext>?
        try check(avformat_alloc_output_context2(&made, nil, kind.muxerName, nil), "set up the \(kind.muxerName) muxer")
        guard let context = made else { throw .muxer(path: file.path, reason: "no \(kind.muxerName) muxer") }
        self.context = context
        // 188-byte TS packets fill the buffer exactly, so a write never ends inside one.
        let bufferSize: Int32 = kind == .mpegTS ? 188 * 174 : 64 * 1024
        guard let buffer = av_malloc(Int(bufferSize))?.assumingMemoryBound(to: UInt8.self) else {
            throw .muxer(path: file.path, reason: "out of memory")
        }
        let seekable = file.isRegularFile && file.path != "-"
        let opaque = Unmanaged.passUnretained(sink).toOpaque()
        guard let io = avio_alloc_context(buffer, bufferSize, 1, opaque, nil, Self.writePacket,
                                          seekable ? Self.seek : nil) else {
            av_free(buffer)
            throw .muxer(path: file.path, reason: "out of memory")
        }
        io.pointee.seekable = seekable ? AVIO_SEEKABLE_NORMAL : 0
        context.pointee.pb = io
        context.pointee.flags |= AVFMT_FLAG_CUSTOM_IO | AVFMT_FLAG_FLUSH_PACKETS
        context.pointee.flush_packets = 1
        if kind == .mpegTS { context.pointee.avoid_negative_ts = AVFMT_AVOID_NEG_TS_DISABLED }

        guard let stream = avformat_new_stream(context, nil) else {
            throw .muxer(path: file.path, reason: "cannot add a video stream")
        }
        self.stream = stream
        let parameters = stream.pointee.codecpar!
        parameters.pointee.codec_type = AVMEDIA_TYPE_VIDEO
        parameters.pointee.codec_id = AV_CODEC_ID_H264
        parameters.pointee.width = Int32(format.width)
        parameters.pointee.height = Int32(format.height)
        let extradata: [UInt8]
        switch kind {
        case .matroska:
            do {
                extradata = try format.avcC()
            } catch {
                throw .invalidAccessUnit(reason: "its parameter sets cannot be stored in Matroska: \(error)")
            }
        case .mpegTS:
            extradata = []
        }
        if !extradata.isEmpty {
            let padded = extradata.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)
            guard let bytes = av_mallocz(padded)?.assumingMemoryBound(to: UInt8.self) else {
                throw .muxer(path: file.path, reason: "out of memory")
            }
            bytes.update(from: extradata, count: extradata.count)
            parameters.pointee.extradata = bytes
            parameters.pointee.extradata_size = Int32(extradata.count)
        }
        let rate = options.frameRate
        stream.pointee.time_base = AVRational(num: 1, den: 90_000)
        stream.pointee.avg_frame_rate = AVRational(num: Int32(rate.numerator), den: Int32(rate.denominator))

        let metadata = options.metadata
        // Matroska's WritingApp comes from "encoding_tool" ("encoder" is libavformat's own).
        var tags: [(String, String)] = [("encoder", metadata.encoder), ("encoding_tool", metadata.encoder)]
        if let source = metadata.source { tags.append((kind == .mpegTS ? "service_name" : "comment", source)) }
        if kind == .mpegTS { tags.append(("service_provider", metadata.encoder)) }
        let created = metadata.creationTime ?? Date()
        tags.append(("creation_time", Self.iso8601(created)))
        for (key, value) in tags { av_dict_set(&context.pointee.metadata, key, value, 0) }

        var settings: OpaquePointer?
        if kind == .matroska {
            av_dict_set(&settings, "cluster_time_limit", "\(Int64((options.fragmentDuration * 1000).rounded()))", 0)
        }
        defer { av_dict_free(&settings) }
        try check(avformat_write_header(context, &settings), "write the \(kind.muxerName) header")
        packet = av_packet_alloc()
        guard packet != nil else { throw .muxer(path: file.path, reason: "out of memory") }
        base = frame.pts
    }

    /// Turns a libavformat status into the error of the write it failed in.
    private func check(_ status: Int32, _ what: String) throws(OutputError) {
        guard status < 0 else { return }
        if let failure = sink.failure { throw failure }
        throw .muxer(path: file.path, reason: "cannot \(what): \(libavErrorText(status))")
    }

    private func release() {
        if let context {
            if let io = context.pointee.pb {
                av_free(io.pointee.buffer)
                var pointer: UnsafeMutablePointer<AVIOContext>? = io
                avio_context_free(&pointer)
                context.pointee.pb = nil
            }
            avformat_free_context(context)
            self.context = nil
        }
        if packet != nil { av_packet_free(&packet) }
        stream = nil
    }

    /// `time − base` in ticks of `timeBase`, rounded to the nearest.
    private static func ticks(_ time: MediaTime, minus base: MediaTime, in timeBase: AVRational) -> Int64 {
        let numerator = (Int128(time.value) * Int128(base.timescale) - Int128(base.value) * Int128(time.timescale))
            * Int128(timeBase.den)
        let denominator = Int128(time.timescale) * Int128(base.timescale) * Int128(timeBase.num)
        let half = denominator / 2
        return Int64(numerator >= 0 ? (numerator + half) / denominator : (numerator - half) / denominator)
    }

    private static func iso8601(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
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

    private static let seek: @convention(c) (UnsafeMutableRawPointer?, Int64, Int32) -> Int64 = { opaque, offset, whence in
        guard let opaque else { return Int64(vt_averror_eio()) }
        let sink = Unmanaged<Sink>.fromOpaque(opaque).takeUnretainedValue()
        let end = sink.file.endOffset
        if whence & AVSEEK_SIZE != 0 { return end }
        let target: Int64
        switch whence & ~AVSEEK_FORCE {
        case SEEK_SET: target = offset
        case SEEK_CUR: target = sink.position + offset
        case SEEK_END: target = end + offset
        default: return Int64(vt_averror_eio())
        }
        // Only within what was written: the muxers go back to fill in sizes, never past the end.
        guard target >= 0, target <= end else { return Int64(vt_averror_eio()) }
        sink.position = target
        return target
    }
}
