/// How many captured frames the pipeline behind a source can hold at once, worked out in one
/// place so that the queue, the sources' buffer pools and a camera's driver buffers follow
/// from each other.
///
/// A frame is out of the source's hands while it waits in the queue between the capture and
/// encoder threads, while the capture thread hands it to that queue, while it is being
/// encoded (the encoders copy the picture inside `encode`), with `--timing cfr` while the
/// constant-rate grid holds it back until the next frame shows how many slots it fills, and
/// with `--snapshot` while the still taker copies it after it was encoded.
/// A pool of `framesHeld` buffers therefore never runs dry, so a live source never waits
/// for one; a camera whose buffers are handed out without a copy needs more driver buffers
/// than that, and copies instead when the driver would be left too few (`V4L2Source`).
public struct PipelineDepth: Sendable, Equatable {
    /// Frames waiting between the capture and encoder threads.
    public let queue: Int
    /// Whether the constant-rate grid holds a frame back.
    public let holdsGridFrame: Bool
    /// Whether a still taker (`--snapshot`) holds a frame after it was encoded.
    public let holdsStill: Bool
    /// `--http`'s MJPEG stream makes its JPEGs from a frame held on a still thread of its own.
    public let holdsLiveStill: Bool

    /// The queue of the default pipeline: a few frames absorb an encoder's uneven pace (a
    /// keyframe, a scene change) without dropping, and no more, since a live source's frames
    /// only grow older there.
    public static let defaultQueue = 4

    /// The queue with `--realtime adaptive`: most of a second at 30 fps. An encoder that is
    /// about to step faster, or whose cost jumps for a moment (x264 starting up, when its
    /// lookahead fills for the first time and a burst of analysis holds every picture back for
    /// up to a second; another program taking the cores), catches up from here instead of
    /// dropping. The frames are made only when a backlog needs them (at 1080p, 3 MB each), and
    /// the controller steps faster once two or more wait and their number grows over a few
    /// pictures, so the backlog does not stay.
    public static let adaptiveQueue = 24

    /// The queue of a camera's own frames stored as they came (`--encoder copy`): a second at
    /// 30 fps. A copied frame is the camera's compressed bytes (a JPEG or an H.264 access unit,
    /// kilobytes to a few hundred), not a picture of megabytes, and the writer's pace is the
    /// disk's: four frames (133 ms) let a writer thread that waited for a core a moment too long
    /// drop frames, and one H.264 unit dropped loses every unit up to the next IDR picture.
    public static let copyQueue = 30

    public init(queue: Int = PipelineDepth.defaultQueue, holdsGridFrame: Bool = false, holdsStill: Bool = false,
                holdsLiveStill: Bool = false) {
        precondition(queue >= 1, "the pipeline needs room for one frame between its threads")
        self.queue = queue
        self.holdsGridFrame = holdsGridFrame
        self.holdsStill = holdsStill
        self.holdsLiveStill = holdsLiveStill
    }

    /// Frames the pipeline may hold at once: the queue, the frame the capture thread is
    /// handing over, the frame in the encoder, the grid's and the still taker's.
    public var framesHeld: Int { queue + 2 + (holdsGridFrame ? 1 : 0) + (holdsStill ? 1 : 0) + (holdsLiveStill ? 1 : 0) }
}
