import VTCore

/// What an event clip is made of: an access unit with the parameter sets it was coded with, or
/// a packet of sound. The bytes are the encoder's own arrays, shared, never copied.
public enum ClipPacket: Sendable {
    case frame(EncodedFrame, VideoFormatDescription)
    case sound(EncodedAudioPacket)

    var byteCount: Int {
        switch self {
        case .frame(let frame, _): frame.data.count
        case .sound(let packet): packet.data.count
        }
    }
}

/// The last moments of the encoded stream, held in memory so that an event's clip can begin
/// before the event: every picture and sound packet from the newest keyframe that lies at
/// least `seconds` before the newest picture, and nothing older. A clip starts at a keyframe,
/// so that is the least that serves any trigger from now on.
///
/// Bounded twice: by time (whole GOPs older than that go as soon as a newer keyframe is old
/// enough) and by `byteLimit` (the oldest GOPs go first; a single GOP over the limit goes
/// whole, and nothing is held until the next keyframe). Not thread-safe: the encoder thread's.
struct PreRollBuffer {
    let seconds: Double
    let byteLimit: Int

    /// Held packets in arrival order; `packets[head...]` are live, the rest wait to be compacted.
    private var packets: [ClipPacket] = []
    private var head = 0
    /// The sequence number of `packets[0]`: positions are counted from the first packet ever held.
    private var base = 0
    /// Positions and times of the keyframes held, oldest first.
    private var keyFrames: [(position: Int, pts: MediaTime)] = []
    private(set) var bytes = 0
    private(set) var peakBytes = 0
    /// The newest picture's presentation time.
    private(set) var newest: MediaTime?
    /// GOPs let go early for the byte limit: a pre-roll shorter than asked.
    private(set) var gopsDroppedForBytes = 0

    init(seconds: Double, byteLimit: Int) {
        self.seconds = seconds
        self.byteLimit = byteLimit
    }

    /// The position the next packet will get.
    var end: Int { base + packets.count }

    /// Holds `packet`. Nothing is held before the first keyframe: a clip cannot start there.
    mutating func append(_ packet: ClipPacket) {
        if case .frame(let frame, _) = packet {
            if frame.isKeyFrame { keyFrames.append((end, frame.pts)) }
            newest = max(newest ?? frame.pts, frame.pts)
        }
        guard !keyFrames.isEmpty else { return }
        packets.append(packet)
        bytes += packet.byteCount
        trim()
        peakBytes = max(peakBytes, bytes)
    }

    /// The keyframe a clip for a trigger at `time` starts with: the newest held at or before
    /// `time − seconds`, else the oldest held (the pre-roll is then shorter than asked), and
    /// never before `notBefore` (where the last clip ended). nil when none is held.
    func start(for time: MediaTime, notBefore: Int?) -> (position: Int, pts: MediaTime)? {
        let wanted = time.seconds - seconds
        let allowed = keyFrames.filter { $0.position >= (notBefore ?? Int.min) }
        guard let oldest = allowed.first else { return nil }
        return allowed.last { $0.pts.seconds <= wanted + 1e-9 } ?? oldest
    }

    /// The packets held from `position` on, in arrival order.
    func packets(from position: Int) -> ArraySlice<ClipPacket> {
        let index = max(position - base, head)
        return packets[min(index, packets.count)...]
    }

    /// Lets go of GOPs no clip can start with any more, and of the oldest while over the byte limit.
    private mutating func trim() {
        if let newest {
            while keyFrames.count >= 2, keyFrames[1].pts.seconds <= newest.seconds - seconds + 1e-9 {
                dropFirstGOP()
            }
        }
        while bytes > byteLimit {
            gopsDroppedForBytes += 1
            if keyFrames.count >= 2 {
                dropFirstGOP()
            } else {
                dropAll()
            }
        }
    }

    private mutating func dropFirstGOP() {
        keyFrames.removeFirst()
        drop(upTo: keyFrames[0].position)
    }

    private mutating func dropAll() {
        keyFrames.removeAll()
        drop(upTo: end)
    }

    /// Stands in for a packet let go, so its bytes are freed at once, not at the next compaction.
    private static let released = ClipPacket.sound(EncodedAudioPacket(data: [], pts: 0, duration: 1))

    /// Forgets the packets before `position`; the array is compacted once half of it is dead.
    private mutating func drop(upTo position: Int) {
        let index = position - base
        for i in head..<index {
            bytes -= packets[i].byteCount
            packets[i] = Self.released
        }
        head = index
        if head > 64 && head * 2 > packets.count {
            packets.removeFirst(head)
            base += head
            head = 0
        }
    }
}
