import CAVFormat
import VTFFmpeg
import VTCore
import VTH264

/// Reads the H.264 track of an MP4, Matroska or MPEG-TS file through FFmpeg's demuxers
/// (AVFoundation's `AVAssetReader`, the mirror of `AssetWriter`): the format description and
/// each access unit in AVCC form with its times and keyframe flag, in decode order.
public final class AssetReader {
    public let path: String
    /// libavformat's name of the container ("mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm", "mpegts",
    /// or "h264" for a raw stream).
    public let containerName: String
    /// mp4, mkv, ts, or h264 for a raw stream: the short name vtrecord's options and reports use.
    public var container: String {
        if containerName.contains("mp4") { return "mp4" }
        if containerName.contains("matroska") { return "mkv" }
        if containerName.contains("mpegts") { return "ts" }
        return containerName
    }
    /// The first frame's presentation time in seconds (a transport stream's times do not start
    /// at zero); times given to `seek` are from the start of the file's own clock.
    public let startTime: Double
    /// Seconds, when the container says.
    public let duration: Double?
    public let width: Int
    public let height: Int
    /// The track's average frame rate, when the container gives one.
    public let frameRate: FrameRate?
    /// The parameter sets of the frames read so far (from the container's avcC, or the first
    /// ones in the stream).
    public private(set) var format: VideoFormatDescription?

    /// The packets are Annex B (MPEG-TS), not length-prefixed (an avcC in the container).
    private var annexB = true
    private var context: UnsafeMutablePointer<AVFormatContext>?
    private let streamIndex: Int32
    private let timeBase: AVRational
    private let packet: UnsafeMutablePointer<AVPacket>

    /// Opens `path`; a file libavformat cannot read, or one without H.264 video, is refused.
    public init(path: String) throws(ReadError) {
        self.path = path
        if let problem = FFmpegLibraries.loadFailure() { throw ReadError(path: path, reason: problem) }
        // What goes wrong is reported once, as a ReadError.
        var opened: UnsafeMutablePointer<AVFormatContext>?
        let status = vt_avformat_open_input(&opened, path, nil, nil)
        guard status >= 0, let context = opened else { throw ReadError(path: path, status: status, doing: "open") }
        self.context = context
        let probed = vt_avformat_find_stream_info(context, nil)
        guard probed >= 0 else {
            vt_avformat_close_input(&self.context)
            throw ReadError(path: path, status: probed, doing: "read the streams of")
        }
        let index = vt_av_find_best_stream(context, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        guard index >= 0, let stream = context.pointee.streams[Int(index)],
              stream.pointee.codecpar.pointee.codec_id == AV_CODEC_ID_H264 else {
            vt_avformat_close_input(&self.context)
            throw ReadError(path: path, reason: "holds no H.264 video")
        }
        guard let packet = vt_av_packet_alloc() else {
            vt_avformat_close_input(&self.context)
            throw ReadError(path: path, reason: "out of memory")
        }
        self.packet = packet
        streamIndex = index
        timeBase = stream.pointee.time_base
        containerName = String(cString: context.pointee.iformat.pointee.name)
        duration = context.pointee.duration > 0 ? Double(context.pointee.duration) / Double(AV_TIME_BASE) : nil
        startTime = context.pointee.start_time != vt_av_nopts_value()
            ? Double(context.pointee.start_time) / Double(AV_TIME_BASE) : 0
        let average = stream.pointee.avg_frame_rate
        frameRate = average.num > 0 && average.den > 0
            ? FrameRate(numerator: Int(average.num), denominator: Int(average.den)) : nil
        let parameters = stream.pointee.codecpar.pointee
        width = Int(parameters.width)
        height = Int(parameters.height)
        if parameters.extradata_size > 0, let extradata = parameters.extradata {
            let bytes = Array(UnsafeBufferPointer(start: extradata, count: Int(parameters.extradata_size)))
            format = Self.format(extradata: bytes)
            annexB = bytes.first != 1
        }
    }

    deinit {
        var packet: UnsafeMutablePointer<AVPacket>? = self.packet
        vt_av_packet_free(&packet)
        vt_avformat_close_input(&context)
    }

    /// One access unit as the file holds it, for readers that check a file rather than trust
    /// it (`verify`): where it starts, and no refusal when parameter sets are missing.
    public struct Packet {
        /// AVCC, with the times the container gives (a raw stream's are libavformat's guess).
        public var frame: EncodedFrame
        /// The parameter sets in force for it; nil when none has come yet.
        public var format: VideoFormatDescription?
        /// The byte offset in the file where the unit starts, when the demuxer knows it.
        public var position: Int64?
        /// The unit's size in the file.
        public var size: Int
        /// The container gave a presentation time (a raw stream has none of its own).
        public var hasTimes: Bool
        /// The container gave a decode time (Matroska gives none).
        public var hasDecodeTime: Bool
    }

    /// The next access unit of the video track, or nil at the end of the file.
    public func nextFrame() throws(ReadError) -> EncodedFrame? {
        guard let packet = try nextPacket() else { return nil }
        guard packet.format != nil else { throw ReadError(path: path, reason: "a frame comes before any SPS and PPS") }
        return packet.frame
    }

    /// The next access unit of the video track with its place in the file, or nil at the end.
    public func nextPacket() throws(ReadError) -> Packet? {
        guard let context else { return nil }
        while true {
            let status = vt_av_read_frame(context, packet)
            if status == vt_averror_eof() { return nil }
            guard status >= 0 else { throw ReadError(path: path, status: status, doing: "read") }
            defer { vt_av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex, let data = packet.pointee.data else { continue }
            var bytes = Array(UnsafeBufferPointer(start: data, count: Int(packet.pointee.size)))
            if annexB {
                // MPEG-TS and raw streams (and in-band parameter sets): Annex B, with SPS and PPS at keyframes.
                let split = AVCC.fromAnnexB(bytes, parameterSetsApart: true)
                if !split.sequenceParameterSets.isEmpty && !split.pictureParameterSets.isEmpty {
                    format = try? VideoFormatDescription(h264ParameterSets: split.sequenceParameterSets
                        + split.pictureParameterSets)
                }
                bytes = split.accessUnit
            }
            let nopts = vt_av_nopts_value()
            let pts = packet.pointee.pts != nopts ? packet.pointee.pts : packet.pointee.dts
            let dts = packet.pointee.dts != nopts ? packet.pointee.dts : pts
            let frame = EncodedFrame(data: bytes, pts: time(pts), dts: time(dts),
                                     isKeyFrame: packet.pointee.flags & AV_PKT_FLAG_KEY != 0, token: FrameToken(0))
            return Packet(frame: frame, format: format, position: packet.pointee.pos >= 0 ? packet.pointee.pos : nil,
                          size: Int(packet.pointee.size), hasTimes: packet.pointee.pts != nopts,
                          hasDecodeTime: packet.pointee.dts != nopts)
        }
    }

    /// Moves to the keyframe at or before `time` (seconds on the file's clock), through the
    /// container's index where it has one (MP4's sync samples, Matroska's cues); a time before
    /// the first keyframe moves to the first. The next `nextPacket()` reads from there.
    public func seek(toKeyFrameAtOrBefore time: Double) throws(ReadError) {
        guard let context else { return }
        let ticks = Int64((time * Double(timeBase.den) / Double(timeBase.num)).rounded(.down))
        if vt_avformat_seek_file(context, streamIndex, Int64.min, ticks, ticks, 0) >= 0 { return }
        let status = vt_avformat_seek_file(context, streamIndex, Int64.min, ticks, Int64.max, 0)
        guard status >= 0 else { throw ReadError(path: path, status: status, doing: "seek in") }
    }

    private func time(_ ticks: Int64) -> MediaTime {
        MediaTime(value: ticks * Int64(timeBase.num), timescale: timeBase.den)
    }

    /// A format description from an avcC record, or from Annex B parameter sets.
    private static func format(extradata: [UInt8]) -> VideoFormatDescription? {
        if extradata.first == 1 { return try? VideoFormatDescription(avcC: extradata) }
        let split = AVCC.fromAnnexB(extradata, parameterSetsApart: true)
        return try? VideoFormatDescription(h264ParameterSets: split.sequenceParameterSets + split.pictureParameterSets)
    }
}

/// A file that cannot be read as a recording (exit 2: the input is bad).
public struct ReadError: ReportableError, Equatable {
    public let path: String
    public let reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    init(path: String, status: Int32, doing: String) {
        self.init(path: path, reason: "cannot \(doing) it: \(FFmpegLibraries.errorText(status))")
    }

    public var exitStatus: ExitStatus { .usage }
    public var description: String { "\(path): \(reason)" }
}
