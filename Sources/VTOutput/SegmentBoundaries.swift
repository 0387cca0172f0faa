import VTCore

/// When a recording moves on to its next file (`--segment-time`, `--segment-size`).
public struct SegmentPolicy: Sendable, Equatable {
    /// Presentation time per file, in seconds: file k starts with the first frame at or after
    /// k × duration.
    public var duration: Double?
    /// Bytes: once a file holds this many, the next frame fed to the encoder starts a new one.
    public var maxBytes: Int64?

    public init(duration: Double? = nil, maxBytes: Int64? = nil) {
        precondition(duration.map { $0 > 0 } ?? true, "a segment lasts a positive time")
        precondition(maxBytes.map { $0 > 0 } ?? true, "a segment holds a positive size")
        self.duration = duration
        self.maxBytes = maxBytes
    }
}

/// Where segments begin, decided on both sides of an encoder that delays and reorders frames
/// (B-frames, lookahead): on the input side a frame that starts a segment is marked, by its
/// token, to be coded as a keyframe; on the output side the file changes when that keyframe
/// comes out, in decode order. An IDR picture is decoded after every picture shown before it
/// and before every picture shown after it, so no frame lands in the wrong file. (Times would
/// not do: x264 rounds them to whole frames.)
///
/// A size is known only on the output side: a full file asks for the next frame fed to start
/// a segment, so a file may exceed the size by what the encoder holds back.
struct SegmentBoundaries {
    let policy: SegmentPolicy
    private var framesFed = 0
    /// k of the next time boundary k × duration.
    private var nextBoundary = 1
    private var sizeReached = false
    /// Frames marked to start a segment that have not come out yet.
    private var marked: Set<FrameToken> = []
    /// A marked frame came out but was not a keyframe: the next keyframe starts the file.
    private var switchPending = false

    init(policy: SegmentPolicy) {
        self.policy = policy
    }

    /// Input side: whether the frame `token` at `pts` starts a new segment, so must be coded
    /// as a keyframe.
    mutating func startsSegment(_ token: FrameToken, at pts: MediaTime) -> Bool {
        defer { framesFed += 1 }
        var starts = false
        if let duration = policy.duration {
            // The same tolerance as --duration, so a frame at exactly 2 s counts as at 2 s.
            while pts.seconds >= Double(nextBoundary) * duration - 1e-9 {
                nextBoundary += 1
                starts = true
            }
        }
        if sizeReached {
            sizeReached = false
            starts = true
        }
        // The first frame goes to the file already open.
        guard starts, framesFed > 0 else { return false }
        marked.insert(token)
        return true
    }

    /// Output side, before each frame is written, in the order they come out: whether the
    /// next file must be opened for it. A marked frame the encoder did not make a keyframe
    /// moves the change to the next keyframe after it.
    mutating func switchesFile(before frame: EncodedFrame) -> Bool {
        if marked.remove(frame.token) != nil { switchPending = true }
        guard switchPending, frame.isKeyFrame else { return false }
        switchPending = false
        return true
    }

    /// Output side, after a frame is written: the size of the file being written.
    mutating func written(segmentBytes: Int64) {
        guard let maxBytes = policy.maxBytes, segmentBytes >= maxBytes, marked.isEmpty, !switchPending else { return }
        sizeReached = true
    }
}
