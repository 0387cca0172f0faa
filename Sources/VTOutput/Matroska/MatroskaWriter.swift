import Foundation
import VTCore
import VTH264

/// Writes a Matroska file that plays to its last complete cluster after a crash and has its
/// index (Cues) and Duration after a clean end.
///
/// Written here rather than through FFmpeg's muxer because that muxer (libavformat 5.1) fixes
/// the timestamp scale at 1 ms, which rounds a camera's capture times and 90 kHz times by up
/// to half a millisecond. Every time in this file counts 10 µs units (`TimestampScale`
/// 10000 ns): finer than half a 90 kHz tick (11.1 µs), so a time from an MP4 or a transport
/// stream comes back to its own tick when the file is read and written again.
///
/// Layout: the EBML header; a Segment of unknown size holding a SeekHead (with room for the
/// Cues' entry), Info (timestamp scale, date, application, room for the Duration), Tracks
/// (one H.264 track: the session's avcC as CodecPrivate, access units stored as the session
/// gave them, in SimpleBlocks) and Tags (the source); then clusters. A cluster starts at each
/// keyframe, after `fragmentDuration` at the latest, and before its 16-bit block times would
/// overflow (327 ms at this scale); each is written with one write(2) whose writeback starts
/// at once, together with the header for the first. A sound track (`Options.audio`) is track
/// 2: AAC (A_AAC, its AudioSpecificConfig as CodecPrivate), Opus (A_OPUS, OpusHead, with
/// CodecDelay and SeekPreRoll as WebM has them) or 16-bit PCM; its blocks go in the open
/// cluster as they come (one cluster may close early to keep their 16-bit times in range).
/// AAC's priming would put its first packet before the picture's 0, where Matroska has no
/// time: the whole file is moved later by it instead, so picture and sound keep their
/// distance (FFmpeg's muxer does the same). At a clean end on a regular file the Cues
/// (one point per keyframe) are appended and the Segment size, SeekHead and Duration filled in;
/// each of those writes leaves a valid file.
public final class MatroskaWriter: SingleFileOutput {
    public struct Options: Sendable {
        /// The nominal frame rate: the track's default duration and the last frame's.
        public var frameRate: FrameRate
        /// The longest cluster, in seconds; a keyframe starts one sooner.
        public var fragmentDuration: Double
        public var metadata: ContainerMetadata
        /// The sound track, if there is one.
        public var audio: AudioFormatDescription?

        public init(frameRate: FrameRate, fragmentDuration: Double = 1, metadata: ContainerMetadata,
                    audio: AudioFormatDescription? = nil) {
            precondition(fragmentDuration > 0, "a cluster lasts some time")
            self.frameRate = frameRate
            self.fragmentDuration = fragmentDuration
            self.metadata = metadata
            self.audio = audio
        }
    }

    /// Nanoseconds per unit of every time in the file.
    public static let timestampScale: Int64 = 10_000
    /// Units per second (1e9 ÷ `timestampScale`).
    static let unitsPerSecond: Int32 = 100_000
    /// Room for the SeekHead at the start of the Segment: four entries (Info, Tracks, Tags,
    /// Cues) of 21 bytes and the SeekHead's own ID and size.
    private static let seekHeadRoom = 100
    /// Bytes of a Duration element (2-byte ID, 1-byte size, 8-byte float).
    private static let durationLength = 11
    /// Bytes before a cluster's children: its 4-byte ID and an 8-byte size.
    private static let clusterHeaderLength = 12

    public let file: OutputFile
    public private(set) var statistics = OutputStatistics()
    public private(set) var isFinalized = false

    private let options: Options
    private var metadata: ContainerMetadata
    private var parameterSets = TrackParameterSets()
    private var layout: Layout?
    /// The time every other is counted from: the first frame's presentation time.
    private var origin: MediaTime?
    /// The open cluster, whole (ID, size to be filled in, timestamp, blocks).
    private var cluster = EBMLBuilder()
    private var clusterTime: Int64 = 0
    private var clusterFirstDecode: Int64 = 0
    private var clusterFrames = 0
    /// Blocks of either track in the open cluster.
    private var clusterBlocks = 0
    private var clusterKeyFrames = 0
    /// The open cluster starts with a keyframe: a cue points at it once it is written.
    private var clusterCue: Int64?
    private var cues: [Cue] = []
    /// The latest presentation time plus one frame interval: the file's duration, in units.
    private var end: Int64 = 0
    private let fragmentUnits: Int64
    private let frameUnits: Int64
    /// Units every time is moved later by, so no sound comes before 0 (AAC's priming).
    private let shift: Int64
    /// Units added to each sound block's time, which a reader subtracts again (Opus's
    /// CodecDelay).
    private let codecDelay: Int64

    /// Where the parts filled in at a clean end are, as file offsets.
    private struct Layout {
        var segmentSize: Int64
        var segmentData: Int64
        var seekHead: Int64
        var duration: Int64
        /// The level-1 elements the SeekHead lists, by ID, relative to the Segment's data.
        var entries: [(id: UInt32, position: Int64)]
    }

    private struct Cue {
        var time: Int64
        /// The cluster's position relative to the Segment's data.
        var cluster: Int64
        /// The block's position inside the cluster's data.
        var block: Int64
    }

    /// Opens `path` ("-" for standard output); see `OutputFile` for what is refused.
    public init(path: String, overwrite: Bool, options: Options) throws(OutputError) {
        self.options = options
        metadata = options.metadata
        file = try OutputFile(path: path, overwrite: overwrite)
        file.unitName = "cluster"
        fragmentUnits = max(1, MediaTime(seconds: options.fragmentDuration, timescale: Self.unitsPerSecond).value)
        frameUnits = max(1, options.frameRate.frameDuration.ticks(since: .zero, timescale: Self.unitsPerSecond))
        if let audio = options.audio, audio.primingSamples > 0 {
            let priming = MediaTime(value: Int64(audio.primingSamples), timescale: Int32(audio.sampleRate))
                .ticks(since: .zero, timescale: Self.unitsPerSecond)
            shift = audio.codec == .opus ? 0 : priming
            codecDelay = audio.codec == .opus ? priming : 0
        } else {
            shift = 0
            codecDelay = 0
        }
    }

    public var holdsNothing: Bool { clusterBlocks == 0 }
    /// Its Cues and Duration were written at a clean end.
    public var finalized: Bool? { isFinalized }
    private var canFinalize: Bool { file.isRegularFile && file.path != "-" }

    public func writeHeader(_ format: VideoFormatDescription) throws(OutputError) {
        try parameterSets.update(format, fixed: layout != nil || clusterFrames > 0, container: "Matroska")
    }

    public func writeAudio(_ packet: EncodedAudioPacket) throws(OutputError) {
        guard let audio = options.audio else { preconditionFailure("sound written to an output opened without a sound track") }
        guard let origin else { preconditionFailure("sound written before the first frame") }
        let rate = Int32(audio.sampleRate)
        let time = MediaTime(value: packet.pts, timescale: rate).ticks(since: origin, timescale: Self.unitsPerSecond)
            + shift + codecDelay
        // Sound from before this file's start (a later segment's first packets) is in the one before.
        guard time >= 0 else { return }
        if clusterBlocks > 0, Int16(exactly: time - clusterTime) == nil { try writeCluster() }
        if clusterBlocks == 0 { openCluster(at: time, decode: clusterFirstDecode, keyFrame: false) }
        // Every sound packet can be decoded on its own.
        appendSimpleBlock(track: 2, at: time, keyFrame: true, packet.data)
        let packetEnd = MediaTime(value: packet.end, timescale: rate).ticks(since: origin, timescale: Self.unitsPerSecond) + shift
        end = max(end, packetEnd)
    }

    public func write(_ frame: EncodedFrame) throws(OutputError) {
        guard parameterSets.format != nil else { preconditionFailure("a frame written before its header") }
        if origin == nil {
            origin = frame.pts
            if metadata.creationTime == nil { metadata.creationTime = Date() }
        }
        let origin = self.origin ?? frame.pts
        // Matroska keeps presentation times only, and none before the start.
        let presentation = max(0, frame.pts.ticks(since: origin, timescale: Self.unitsPerSecond)) + shift
        let decode = frame.dts.ticks(since: origin, timescale: Self.unitsPerSecond) + shift
        // A keyframe starts a cluster (sound blocks before it stay in the one before).
        if clusterBlocks > 0,
           frame.isKeyFrame || (clusterFrames > 0 && decode - clusterFirstDecode >= fragmentUnits)
            || Int16(exactly: presentation - clusterTime) == nil {
            try writeCluster()
        }
        if clusterBlocks == 0 {
            openCluster(at: presentation, decode: decode, keyFrame: frame.isKeyFrame)
        } else if clusterFrames == 0 {
            // A cluster opened by sound: the picture's duration rule counts from this frame.
            clusterFirstDecode = decode
        }

        appendSimpleBlock(track: 1, at: presentation, keyFrame: frame.isKeyFrame,
                          frame.isKeyFrame ? parameterSets.inBand : [], frame.data)
        clusterFrames += 1
        if frame.isKeyFrame { clusterKeyFrames += 1 }
        end = max(end, presentation + frameUnits)
    }

    public func complete() throws(OutputError) {
        if clusterBlocks > 0 { try writeCluster() }
        if canFinalize, layout != nil { try finalize() }
    }

    public func salvage() {
        // The open cluster goes out if the medium still takes it; no index is written.
        if clusterBlocks > 0 { try? writeCluster() }
    }

    /// One SimpleBlock in the open cluster: the track number (as an EBML size), the time from
    /// the cluster's start, the keyframe flag, then the data, in parts.
    private func appendSimpleBlock(track: UInt8, at time: Int64, keyFrame: Bool, _ parts: [UInt8]...) {
        cluster.id(MatroskaID.simpleBlock)
        cluster.size(UInt64(4 + parts.reduce(0) { $0 + $1.count }))
        cluster.byte(0x80 | track)
        withUnsafeBytes(of: Int16(time - clusterTime).bigEndian) { cluster.append($0) }
        cluster.byte(keyFrame ? 0x80 : 0x00)
        for part in parts { cluster.append(part) }
        clusterBlocks += 1
    }

    private func openCluster(at presentation: Int64, decode: Int64, keyFrame: Bool) {
        cluster.removeAll()
        clusterTime = presentation
        clusterFirstDecode = decode
        cluster.id(MatroskaID.cluster)
        cluster.append(EBMLBuilder.unknownSize)  // the size is filled in when the cluster closes
        cluster.unsigned(MatroskaID.clusterTimestamp, UInt64(presentation))
        clusterCue = keyFrame ? Int64(cluster.count - Self.clusterHeaderLength) : nil
    }

    /// Writes the open cluster, with the file's header before the first.
    private func writeCluster() throws(OutputError) {
        cluster.patch(EBMLBuilder.encodedSize(UInt64(cluster.count - Self.clusterHeaderLength), width: 8), at: 4)
        var header: [UInt8] = []
        var layout = self.layout
        if layout == nil {
            let built = makeHeader(at: file.endOffset)
            header = built.bytes
            layout = built.layout
        }
        let clusterOffset = file.endOffset + Int64(header.count)
        if header.isEmpty {
            try file.append(cluster.bytes)
        } else {
            try file.append(header + cluster.bytes)
        }
        file.startWriteback(ofLast: Int64(header.count + cluster.count))
        self.layout = layout
        if let block = clusterCue, let layout {
            cues.append(Cue(time: clusterTime, cluster: clusterOffset - layout.segmentData, block: block))
        }
        statistics.frames += clusterFrames
        statistics.keyFrames += clusterKeyFrames
        statistics.bytes = file.endOffset
        clusterFrames = 0
        clusterBlocks = 0
        clusterKeyFrames = 0
        clusterCue = nil
        cluster.removeAll()
    }

    /// The EBML header and the start of the Segment, for a file whose first byte is at `start`.
    private func makeHeader(at start: Int64) -> (bytes: [UInt8], layout: Layout) {
        var w = EBMLBuilder(reservingCapacity: 512)
        w.master(MatroskaID.ebml) { e in
            e.unsigned(MatroskaID.ebmlVersion, 1)
            e.unsigned(MatroskaID.ebmlReadVersion, 1)
            e.unsigned(MatroskaID.ebmlMaxIDLength, 4)
            e.unsigned(MatroskaID.ebmlMaxSizeLength, 8)
            e.string(MatroskaID.docType, "matroska")
            e.unsigned(MatroskaID.docTypeVersion, 4)
            e.unsigned(MatroskaID.docTypeReadVersion, 2)
        }
        w.id(MatroskaID.segment)
        let segmentSize = w.count
        w.append(EBMLBuilder.unknownSize)
        let segmentData = w.count
        let seekHead = w.count
        w.void(length: Self.seekHeadRoom)

        var entries: [(id: UInt32, position: Int64)] = []
        entries.append((MatroskaID.info, Int64(w.count - segmentData)))
        w.master(MatroskaID.info) { info in
            info.unsigned(MatroskaID.timestampScale, UInt64(Self.timestampScale))
            info.string(MatroskaID.muxingApp, metadata.encoder)
            info.string(MatroskaID.writingApp, metadata.encoder)
            if let created = metadata.creationTime {
                // Nanoseconds since 2001-01-01T00:00:00 UTC, the reference date Foundation uses too.
                info.signed(MatroskaID.dateUTC, Int64((created.timeIntervalSinceReferenceDate * 1e9).rounded()))
            }
            // Last in the Info: room for the Duration, known at a clean end.
            info.void(length: Self.durationLength)
        }
        let durationOffset = Int64(w.count - Self.durationLength)

        entries.append((MatroskaID.tracks, Int64(w.count - segmentData)))
        w.master(MatroskaID.tracks) { tracks in
            tracks.master(MatroskaID.trackEntry) { track in
                track.unsigned(MatroskaID.trackNumber, 1)
                track.unsigned(MatroskaID.trackUID, UInt64.random(in: 1...UInt64(UInt32.max)))
                track.unsigned(MatroskaID.trackType, 1)  // video
                track.unsigned(MatroskaID.flagLacing, 0)
                let nanoseconds = options.frameRate.frameDuration.ticks(since: .zero, timescale: 1_000_000_000)
                track.unsigned(MatroskaID.defaultDuration, UInt64(max(1, nanoseconds)))
                if parameterSets.trackFormat?.codec == .mjpeg {
                    track.string(MatroskaID.codecID, "V_MJPEG")
                } else {
                    track.string(MatroskaID.codecID, "V_MPEG4/ISO/AVC")
                    track.binary(MatroskaID.codecPrivate, parameterSets.avcC)
                }
                track.master(MatroskaID.video) { video in
                    let width = parameterSets.trackFormat?.width ?? 0, height = parameterSets.trackFormat?.height ?? 0
                    video.unsigned(MatroskaID.pixelWidth, UInt64(width))
                    video.unsigned(MatroskaID.pixelHeight, UInt64(height))
                    if let aspect = parameterSets.sampleAspectRatio, aspect.width != aspect.height,
                       aspect.width > 0, aspect.height > 0 {
                        video.unsigned(MatroskaID.displayWidth, UInt64(max(1, width * aspect.width / aspect.height)))
                        video.unsigned(MatroskaID.displayHeight, UInt64(height))
                    }
                }
            }
            if let audio = options.audio {
                tracks.master(MatroskaID.trackEntry) { track in Self.soundTrack(audio, codecDelay: codecDelay, into: &track) }
            }
        }
        if let source = metadata.source {
            entries.append((MatroskaID.tags, Int64(w.count - segmentData)))
            w.master(MatroskaID.tags) { tags in
                tags.master(MatroskaID.tag) { tag in
                    tag.master(MatroskaID.targets) { _ in }
                    tag.master(MatroskaID.simpleTag) { simple in
                        simple.string(MatroskaID.tagName, "COMMENT")
                        simple.string(MatroskaID.tagString, source)
                    }
                }
            }
        }
        // The SeekHead lists what is already there; the Cues are added at a clean end.
        w.patch(Self.seekHead(entries), at: seekHead)
        return (w.bytes, Layout(segmentSize: start + Int64(segmentSize), segmentData: start + Int64(segmentData),
                                seekHead: start + Int64(seekHead), duration: start + durationOffset,
                                entries: entries))
    }

    /// Track 2: the sound.
    private static func soundTrack(_ audio: AudioFormatDescription, codecDelay: Int64, into track: inout EBMLBuilder) {
        track.unsigned(MatroskaID.trackNumber, 2)
        track.unsigned(MatroskaID.trackUID, UInt64.random(in: 1...UInt64(UInt32.max)))
        track.unsigned(MatroskaID.trackType, 2)  // audio
        track.unsigned(MatroskaID.flagLacing, 0)
        switch audio.codec {
        case .aac:
            track.string(MatroskaID.codecID, "A_AAC")
            track.binary(MatroskaID.codecPrivate, audio.magicCookie)
        case .opus:
            track.string(MatroskaID.codecID, "A_OPUS")
            track.binary(MatroskaID.codecPrivate, audio.magicCookie)
            track.unsigned(MatroskaID.codecDelay, UInt64(codecDelay * timestampScale))
            // RFC 7845's 80 ms: what a decoder needs before a point it seeks to.
            track.unsigned(MatroskaID.seekPreRoll, 80_000_000)
        case .pcm:
            track.string(MatroskaID.codecID, "A_PCM/INT/LIT")
        }
        track.master(MatroskaID.audio) { sound in
            sound.float(MatroskaID.samplingFrequency, Double(audio.sampleRate))
            sound.unsigned(MatroskaID.channels, UInt64(audio.channels))
            if audio.codec == .pcm { sound.unsigned(MatroskaID.bitDepth, 16) }
        }
    }

    /// A SeekHead listing `entries`, padded with a Void to exactly the room kept for it.
    private static func seekHead(_ entries: [(id: UInt32, position: Int64)]) -> [UInt8] {
        var w = EBMLBuilder()
        w.master(MatroskaID.seekHead) { head in
            for entry in entries {
                head.master(MatroskaID.seek) { seek in
                    var id = EBMLBuilder()
                    id.id(entry.id)
                    seek.binary(MatroskaID.seekID, id.bytes)
                    seek.unsigned(MatroskaID.seekPosition, UInt64(entry.position))
                }
            }
        }
        precondition(w.count + 2 <= seekHeadRoom, "the SeekHead outgrew the room kept for it")
        w.void(length: seekHeadRoom - w.count)
        return w.bytes
    }

    /// Appends the Cues, then fills in the SeekHead, the Duration and the Segment's size.
    private func finalize() throws(OutputError) {
        guard var layout else { return }
        if !cues.isEmpty {
            layout.entries.append((MatroskaID.cues, file.endOffset - layout.segmentData))
            var w = EBMLBuilder(reservingCapacity: cues.count * 24)
            w.master(MatroskaID.cues) { index in
                for cue in cues {
                    index.master(MatroskaID.cuePoint) { point in
                        point.unsigned(MatroskaID.cueTime, UInt64(cue.time))
                        point.master(MatroskaID.cueTrackPositions) { positions in
                            positions.unsigned(MatroskaID.cueTrack, 1)
                            positions.unsigned(MatroskaID.cueClusterPosition, UInt64(cue.cluster))
                            positions.unsigned(MatroskaID.cueRelativePosition, UInt64(cue.block))
                        }
                    }
                }
            }
            try file.append(w.bytes)
        }
        try file.overwrite(Self.seekHead(layout.entries), at: layout.seekHead)
        var duration = EBMLBuilder()
        duration.float(MatroskaID.duration, Double(end))
        try file.overwrite(duration.bytes, at: layout.duration)
        let size = UInt64(file.endOffset - layout.segmentData)
        try file.overwrite(EBMLBuilder.encodedSize(min(size, EBMLBuilder.largestSize), width: 8), at: layout.segmentSize)
        self.layout = layout
        statistics.bytes = file.endOffset
        isFinalized = true
    }
}
