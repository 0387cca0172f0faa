import VTCore

/// What a branch is handed: an access unit with the parameter sets it was coded with, or a
/// packet of sound. Both share their bytes with the recording's (an array's storage is
/// reference-counted), so a branch never copies them.
enum BranchPacket: Sendable {
    /// `startsSegment`: a segmented file output starts its next file with this keyframe;
    /// `annexB`: the access unit's Annex B form, shared by every stream.
    case frame(EncodedFrame, VideoFormatDescription, startsSegment: Bool = false, annexB: SharedAnnexB? = nil)
    case sound(EncodedAudioPacket)

    var byteCount: Int {
        switch self {
        // A stream's queue holds the Annex B form too once an output has made it.
        case .frame(let frame, _, _, let annexB): frame.data.count + (annexB?.byteCount ?? 0)
        case .sound(let packet): packet.data.count
        }
    }

    var isKeyFrame: Bool {
        if case .frame(let frame, _, _, _) = self { return frame.isKeyFrame }
        return false
    }
}

/// The packets waiting for a branch's thread, bounded by bytes and by the presentation time
/// they span, and the rule for what goes when they would pass either: whole GOPs, never the
/// start of one. Used under its branch's lock; not thread-safe by itself.
public struct BranchQueue {
    public struct Limits: Sendable, Equatable {
        public var bytes: Int
        /// Seconds of presentation time from the oldest waiting picture to the newest.
        public var seconds: Double

        public init(bytes: Int = 16_000_000, seconds: Double = 2) {
            self.bytes = bytes
            self.seconds = seconds
        }
    }

    struct Entry {
        let packet: BranchPacket
        /// The GOP the packet belongs to (counted by keyframes offered), for counting what is dropped.
        let gop: Int
    }

    /// What was let go, for the counts.
    struct Dropped: Equatable {
        var packets = 0
        /// GOPs that lost a picture.
        var gops = 0
    }

    let limits: Limits
    private(set) var entries: [Entry] = []
    private(set) var bytes = 0
    private(set) var peakBytes = 0
    /// Waiting for a keyframe: the GOP in progress was cut, so nothing of it is taken.
    private(set) var skipping = false
    private var gop = 0
    private var lastDroppedGOP = -1
    private(set) var dropped = Dropped()

    init(limits: Limits) { self.limits = limits }

    var isEmpty: Bool { entries.isEmpty }

    enum Outcome: Equatable {
        case taken
        /// Dropped while waiting for a keyframe.
        case skipped
        /// It did not fit: GOPs were dropped.
        case overflowed
    }

    /// Takes `packet` if it fits, else makes room by letting go of whole GOPs, oldest first,
    /// from their keyframes (what waits before the first keyframe is the rest of the GOP being
    /// sent, and stays). When only the GOP still arriving is left, it goes too, and what comes
    /// until the next keyframe.
    mutating func offer(_ packet: BranchPacket) -> Outcome {
        if packet.isKeyFrame { gop += 1 }
        let entry = Entry(packet: packet, gop: gop)
        if skipping {
            guard packet.isKeyFrame else {
                drop(entry)
                return .skipped
            }
            skipping = false
        }
        guard !hasRoom(for: packet) else {
            append(entry)
            return .taken
        }
        while !hasRoom(for: packet) {
            guard let start = entries.firstIndex(where: { $0.packet.isKeyFrame }) else { break }
            let end = entries[(start + 1)...].firstIndex { $0.packet.isKeyFrame } ?? entries.endIndex
            // The GOP still arriving goes only when the new packet does not start the next.
            if end == entries.endIndex && !packet.isKeyFrame { break }
            for waiting in entries[start..<end] { drop(waiting) }
            entries.removeSubrange(start..<end)
            bytes = entries.reduce(0) { $0 + $1.packet.byteCount }
        }
        if hasRoom(for: packet) {
            append(entry)
            return .overflowed
        }
        if let start = entries.firstIndex(where: { $0.packet.isKeyFrame }) {
            for waiting in entries[start...] { drop(waiting) }
            entries.removeSubrange(start...)
            bytes = entries.reduce(0) { $0 + $1.packet.byteCount }
        }
        drop(entry)
        skipping = true
        return .overflowed
    }

    /// Lets go of `packet` unseen (the stream is down) and of what comes until a keyframe.
    mutating func refuse(_ packet: BranchPacket) {
        if packet.isKeyFrame { gop += 1 }
        drop(Entry(packet: packet, gop: gop))
        skipping = true
    }

    /// The oldest waiting packet.
    mutating func take() -> BranchPacket? {
        guard !entries.isEmpty else { return nil }
        let entry = entries.removeFirst()
        bytes -= entry.packet.byteCount
        return entry.packet
    }

    /// Lets go of everything waiting and of what comes until the next keyframe (the stream
    /// broke, or starts over).
    mutating func dropAll() {
        for entry in entries { drop(entry) }
        entries.removeAll()
        bytes = 0
        skipping = true
    }

    /// A new stream must start with a keyframe: what waits before the first one goes (all of
    /// it, and what comes until the next keyframe, when none waits). Returns whether the
    /// stream now starts with a keyframe.
    mutating func startAtKeyFrame() -> Bool {
        guard let start = entries.firstIndex(where: { $0.packet.isKeyFrame }) else {
            dropAll()
            return false
        }
        for waiting in entries[..<start] { drop(waiting) }
        entries.removeSubrange(..<start)
        bytes = entries.reduce(0) { $0 + $1.packet.byteCount }
        return true
    }

    /// Something must wait for a keyframe that is not yet waiting.
    mutating func skipToNextKeyFrame() { skipping = true }

    /// Whether `packet` fits beside what waits (a packet that must wait for a keyframe fits:
    /// it is let go anyway).
    func fits(_ packet: BranchPacket) -> Bool {
        guard !skipping || packet.isKeyFrame else { return true }
        return hasRoom(for: packet)
    }

    private func hasRoom(for packet: BranchPacket) -> Bool {
        guard bytes + packet.byteCount <= limits.bytes else { return false }
        guard case .frame(let newest, _, _, _) = packet,
              let oldest = entries.first(where: { if case .frame = $0.packet { true } else { false } }),
              case .frame(let first, _, _, _) = oldest.packet else { return true }
        return newest.pts.seconds - first.pts.seconds <= limits.seconds
    }

    private mutating func append(_ entry: Entry) {
        entries.append(entry)
        bytes += entry.packet.byteCount
        peakBytes = max(peakBytes, bytes)
    }

    private mutating func drop(_ entry: Entry) {
        dropped.packets += 1
        if case .frame = entry.packet, entry.gop != lastDroppedGOP {
            dropped.gops += 1
            lastDroppedGOP = entry.gop
        }
    }
}
