import VTCore

/// The sound track as the MP4 writer builds it: which packets the file keeps, their decode
/// times, the packets waiting for the next fragment, and the track written so far.
///
/// Times are in samples. The movie's time 0 is the first picture's presentation time on the
/// recording's timeline (`pictureStart`). Sound that ends by then is not played; of it only the
/// packet just before the first one played is kept, because an AAC decoder overlaps each
/// frame with the one before (the edit list skips what that packet decodes to). Decode time 0
/// of the track is the first packet kept (`origin`), and the edit list shows media time
/// `pictureStart − origin` at movie time 0: an encoder's priming is skipped, and sound that
/// starts after the pictures gets an empty edit for the gap.
struct MP4SoundTrack {
    struct PendingPacket {
        var decodeTime: Int64
        /// The packet's own duration, for the last one of a fragment.
        var duration: Int64
        var size: Int
    }

    static let trackID: UInt32 = 2

    let entry: MP4SoundSampleEntry
    /// The first picture's presentation time in samples: the movie's time 0.
    private(set) var pictureStart: Int64?
    /// The recording's sample at decode time 0 of the fragments: the first packet kept, or,
    /// when the file's header had to describe the track before any packet came, two packets
    /// before the pictures (room for a decoder's warm-up packet).
    private(set) var origin: Int64?
    /// A packet that plays was taken: the sound has reached the pictures.
    private(set) var hasStarted = false
    /// The latest packet that ends before the pictures start, held back for the decoder.
    private var preroll: EncodedAudioPacket?
    private(set) var pending: [PendingPacket] = []
    private(set) var pendingData: [UInt8] = []
    private var lastDecodeTime: Int64 = -1
    /// The decode time of the last packet in the file.
    private var lastWrittenDecodeTime: Int64?
    /// The track as written so far; nil until the file's header describes it.
    private(set) var track: MP4Track?

    init(_ format: AudioFormatDescription) throws(MP4SoundSampleEntry.Refusal) {
        entry = try MP4SoundSampleEntry(format)
    }

    var sampleRate: Int32 { Int32(entry.format.sampleRate) }

    /// The first picture was taken, shown at `pts`.
    mutating func picturesStart(at pts: MediaTime) {
        if pictureStart == nil { pictureStart = pts.converted(to: sampleRate).value }
    }

    /// Takes the next packet, or holds it back while the sound has not reached the pictures.
    mutating func take(_ packet: EncodedAudioPacket) {
        guard let pictureStart else { preconditionFailure("sound written before the first picture") }
        if !hasStarted {
            guard packet.end > pictureStart else {
                preroll = packet
                return
            }
            hasStarted = true
            if let preroll { append(preroll) }
            preroll = nil
        }
        append(packet)
    }

    private mutating func append(_ packet: EncodedAudioPacket) {
        let origin = self.origin ?? packet.pts
        self.origin = origin
        // Only a track described before its first packet can have a start that sound misses.
        guard packet.pts >= origin else { return }
        let decode = max(packet.pts - origin, lastDecodeTime + 1)
        pending.append(PendingPacket(decodeTime: decode, duration: Int64(packet.duration), size: packet.data.count))
        pendingData.append(contentsOf: packet.data)
        lastDecodeTime = decode
    }

    /// Fixes where the track starts, for the file's header, which comes with the first
    /// fragment (`track` is nil before).
    mutating func describe() {
        guard track == nil, let pictureStart else { return }
        let origin = self.origin ?? pictureStart - 2 * Int64(entry.format.samplesPerPacket)
        self.origin = origin
        track = MP4Track(id: Self.trackID, media: .sound(entry), timescale: UInt32(sampleRate),
                         presentationStart: pictureStart - origin)
    }

    /// The waiting packets as a fragment's run, their data at `dataOffset` in its `mdat`
    /// payload; nil with none waiting. Each lasts to the next one's decode time, the last its
    /// own duration (the next fragment's decode time says where the sound goes on).
    func run(dataOffset: Int) -> MP4TrackRun? {
        guard let first = pending.first else { return nil }
        var samples: [MP4Sample] = []
        samples.reserveCapacity(pending.count)
        for (index, packet) in pending.enumerated() {
            let duration = index + 1 < pending.count ? pending[index + 1].decodeTime - packet.decodeTime : packet.duration
            samples.append(MP4Sample(size: UInt32(packet.size), duration: UInt32(duration), compositionOffset: 0,
                                     isKeyFrame: true))
        }
        return MP4TrackRun(trackID: Self.trackID, baseDecodeTime: UInt64(first.decodeTime), samples: samples,
                           allSync: true, dataOffset: dataOffset, rollGroup: true)
    }

    /// `run` is in the file, its data at `offset`: it joins the track, and no packet waits.
    mutating func written(_ run: MP4TrackRun, at offset: Int64) {
        // Taken out while it grows, so its sample table is appended to in place, not copied.
        guard let last = pending.last, var track = track.take() else { return }
        defer { self.track = track }
        let start = Int64(run.baseDecodeTime)
        if let previous = lastWrittenDecodeTime, let index = track.samples.indices.last {
            // A complete sample table has no decode times of its own: the packet before a gap
            // in the sound lasts until the next one.
            track.samples[index].duration = UInt32(start - previous)
        } else {
            track.firstDecodeTime = start
        }
        track.samples += run.samples
        track.chunks.append(MP4Chunk(offset: offset, sampleCount: run.samples.count))
        track.presentationEnd = last.decodeTime + last.duration
        lastWrittenDecodeTime = last.decodeTime
        pending.removeAll(keepingCapacity: true)
        pendingData.removeAll(keepingCapacity: true)
    }
}
