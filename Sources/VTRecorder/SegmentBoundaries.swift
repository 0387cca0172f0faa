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

/// Where segments begin, decided on both sides of an encoder that delays frames (B-frames,
/// lookahead): on the input side a frame that starts a segment is marked to be coded as a
/// keyframe; on the output side the file changes when that keyframe comes out, in decode
/// order.
///
/// The keyframe is known by its position, not its time: an IDR picture is decoded after every
/// picture shown before it and before every picture shown after it, so the IDR made of the
/// m-th frame fed is the m-th frame out. (Times would do only where the encoder hands back
/// exactly the time it was given; x264 rounds it to whole frames.) So no frame is lost or
/// lands in the wrong file.
///
/// A size is known only on the output side: a full file asks for the next frame fed to start
/// a segment, so a file may exceed the size by what the encoder holds back.
struct SegmentBoundaries {
    let policy: SegmentPolicy
    private var framesFed = 0
    private var framesOut = 0
    /// k of the next time boundary k × duration.
    private var nextBoundary = 1
    private var sizeReached = false
    /// Positions (in frames fed) of frames marked to start a segment whose keyframe has not
    /// come out.
    private var marked: [Int] = []

    init(policy: SegmentPolicy) {
        self.policy = policy
    }

    /// Input side: whether the frame at `pts` starts a new segment, so must be coded as a
    /// keyframe.
    mutating func startsSegment(at pts: MediaTime) -> Bool {
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
        marked.append(framesFed)
        return true
    }

    /// Output side, before each frame is written, in the order they come out: whether it is a
    /// marked frame's keyframe, so the next file must be opened for it. A marked frame the
    /// encoder did not make a keyframe moves the change to the next keyframe after it.
    mutating func switchesFile(before frame: EncodedFrame) -> Bool {
        let position = framesOut
        framesOut += 1
        guard frame.isKeyFrame, let first = marked.first, position >= first else { return false }
        marked.removeAll { $0 <= position }
        return true
    }

    /// Output side, after a frame is written: the size of the file being written.
    mutating func written(segmentBytes: Int64) {
        guard let maxBytes = policy.maxBytes, segmentBytes >= maxBytes, marked.isEmpty else { return }
        sizeReached = true
    }
}
