import Foundation
import VTCore

/// One sample of a track (a video access unit, an audio packet), as the sample tables and a
/// `trun` describe it.
struct MP4Sample: Equatable {
    var size: UInt32
    /// Ticks to the next sample's decode time (the last: to the end of the track).
    var duration: UInt32
    /// Presentation time minus decode time, in ticks; never negative here.
    var compositionOffset: UInt32
    var isKeyFrame: Bool

    /// `sample_flags` of a track fragment run: a sync sample depends on nothing
    /// (sample_depends_on = 2); any other depends on others and is not a sync sample.
    var flags: UInt32 { isKeyFrame ? 0x0200_0000 : 0x0101_0000 }
}

/// A run of one track's samples stored back to back (its part of a fragment's `mdat`
/// payload), at a file offset.
struct MP4Chunk: Equatable {
    var offset: Int64
    var sampleCount: Int
}

/// What a track's samples are, with what its sample description says about them.
enum MP4Media {
    case video(width: Int, height: Int, coding: MP4VideoCoding, sampleAspectRatio: SampleAspectRatio?)
    case sound(MP4SoundSampleEntry)
}

/// How a video track's samples are coded, with what its sample entry needs of it.
enum MP4VideoCoding: Equatable {
    /// H.264, with its avcC record.
    case avc([UInt8])
    /// Motion JPEG: each JPEG carries its own tables.
    case jpeg
}

/// One track of the movie (the pictures, track 1; the sound, track 2): everything its `moov`
/// says about it.
struct MP4Track {
    var id: UInt32
    var media: MP4Media
    var timescale: UInt32
    /// The media time, in the fragments' decode-time ticks, that the movie shows at its time 0.
    /// Positive: an edit skips the media before it (a B-frame decode lead, an audio encoder's
    /// priming); negative: the track starts that much later, after an empty edit.
    var presentationStart: Int64 = 0
    /// The first sample's decode time in the fragments; a complete sample table starts it at 0.
    var firstDecodeTime: Int64 = 0
    /// Where the track stops playing, in the fragments' decode-time ticks: for pictures one
    /// frame interval after the latest presentation time; for sound the end of its last packet.
    var presentationEnd: Int64 = 0
    var samples: [MP4Sample] = []
    var chunks: [MP4Chunk] = []

    /// Sum of the sample durations: the media's length from its first decode time. As other
    /// muxers do, the last picture lasts one frame interval, so a constant-rate recording has
    /// one sample duration throughout; with B-frames the edit below reaches past the media's
    /// end by the decode lead, which players show as the last picture held.
    var mediaDuration: UInt64 { samples.reduce(0) { $0 + UInt64($1.duration) } }

    /// The edit list in media ticks: an empty stretch of the movie before the media starts
    /// (0 for none), then the media time shown first and for how long. `fragmented`: the
    /// fragments' decode times, and a length not known yet; otherwise the complete sample
    /// table's, which start at 0.
    func edit(fragmented: Bool) -> (empty: Int64, mediaTime: Int64, length: Int64) {
        let start = presentationStart - (fragmented ? 0 : firstDecodeTime)
        let length = fragmented ? 0 : max(0, presentationEnd - max(presentationStart, firstDecodeTime))
        return (max(0, -start), max(0, start), length)
    }
}

/// The boxes of an MP4 file (ISO/IEC 14496-12 and -14, avcC from 14496-15) that vtrecord writes:
/// `ftyp`; a `moov` for fragments (empty sample tables, `mvex`) or a complete one; a `moof` with
/// a track fragment per track. Only what one H.264 track and one sound track need.
enum MP4Boxes {
    /// Brands: ISO base media with fragments (iso6), AVC, and MP4 version 1 for older readers.
    static func fileType() -> [UInt8] {
        var w = BoxBuilder()
        w.box("ftyp") { w in
            w.fourCC("isom")
            w.u32(0x200)
            for brand in ["isom", "iso6", "iso2", "avc1", "mp41"] { w.fourCC(brand) }
        }
        return w.bytes
    }

    /// A `moov` for `tracks`, the pictures first: the movie's timescale is theirs.
    /// `fragmented`: the sample tables are empty and `mvex` announces fragments; otherwise the
    /// tables list every sample and chunk.
    static func movie(_ tracks: [MP4Track], metadata: ContainerMetadata, fragmented: Bool) -> [UInt8] {
        precondition(!tracks.isEmpty, "a movie has a track")
        let timescale = tracks[0].timescale
        var w = BoxBuilder(reservingCapacity: 1024 + tracks.reduce(0) { $0 + $1.samples.count * 12 })
        let created = metadata.creationTime.map(macTime) ?? 0
        let edits = tracks.map { MovieEdit($0, movieTimescale: timescale, fragmented: fragmented) }
        let duration = edits.map(\.trackDuration).max() ?? 0
        w.box("moov") { w in
            let wide = created > UInt64(UInt32.max) || duration > UInt64(UInt32.max)
            w.fullBox("mvhd", version: wide ? 1 : 0) { w in
                w.times(created, wide: wide)
                w.u32(timescale)
                w.sized(duration, wide: wide)
                w.u32(0x0001_0000)  // rate 1.0
                w.u16(0x0100)  // volume 1.0
                w.zeros(10)
                w.unityMatrix()
                w.zeros(24)
                w.u32((tracks.map(\.id).max() ?? 0) + 1)  // next track ID
            }
            for (track, edit) in zip(tracks, edits) {
                w.box("trak") { w in trackBox(&w, track, edit: edit, created: created, fragmented: fragmented) }
            }
            if fragmented {
                w.box("mvex") { w in
                    for track in tracks {
                        w.fullBox("trex") { w in
                            w.u32(track.id)
                            w.u32(1)  // sample description index
                            w.zeros(12)  // default duration, size, flags: each fragment gives its own
                        }
                    }
                }
            }
            w.box("udta") { w in userData(&w, metadata) }
        }
        return w.bytes
    }

    /// A track's edit list in the movie's timescale, and the track's length there.
    private struct MovieEdit {
        /// Movie ticks before the track starts (an empty edit); 0 for none.
        var empty: UInt64
        /// The media time shown first, in the track's ticks, and for how many movie ticks.
        var mediaTime: Int64
        var length: UInt64
        /// The track's length in the movie (`tkhd`): 0 in a fragmented one, whose length is
        /// not known yet.
        var trackDuration: UInt64

        init(_ track: MP4Track, movieTimescale: UInt32, fragmented: Bool) {
            let edit = track.edit(fragmented: fragmented)
            let movieTicks = { (ticks: Int64) in
                UInt64(MediaTime(value: ticks, timescale: Int32(track.timescale)).converted(to: Int32(movieTimescale)).value)
            }
            empty = movieTicks(edit.empty)
            mediaTime = edit.mediaTime
            length = movieTicks(edit.length)
            trackDuration = fragmented ? 0 : empty + length
        }

        /// Nothing to edit: the media's time 0 shows at the movie's.
        var isIdentity: Bool { empty == 0 && mediaTime == 0 }
    }

    private static func trackBox(_ w: inout BoxBuilder, _ track: MP4Track, edit: MovieEdit, created: UInt64,
                                 fragmented: Bool) {
        let duration = edit.trackDuration
        let wide = created > UInt64(UInt32.max) || duration > UInt64(UInt32.max)
        w.fullBox("tkhd", version: wide ? 1 : 0, flags: 3) { w in  // enabled, in the movie
            w.times(created, wide: wide)
            w.u32(track.id)
            w.u32(0)
            w.sized(duration, wide: wide)
            w.zeros(8)
            w.u16(0)  // layer
            w.u16(0)  // alternate group
            switch track.media {
            case let .video(width, height, _, sampleAspectRatio):
                w.u16(0)  // volume: video has none
                w.u16(0)
                w.unityMatrix()
                let displayWidth = sampleAspectRatio.map { width * $0.width / max($0.height, 1) } ?? width
                w.u32(UInt32(displayWidth) << 16)
                w.u32(UInt32(height) << 16)
            case .sound:
                w.u16(0x0100)  // volume 1.0
                w.u16(0)
                w.unityMatrix()
                w.zeros(8)  // no picture
            }
        }
        if !edit.isIdentity {
            // In a fragmented file the length is not known yet; 0 stands for "to the end of the
            // media".
            w.box("edts") { w in
                let wideEdit = edit.empty > UInt64(Int32.max) || edit.length > UInt64(UInt32.max)
                    || edit.mediaTime > Int64(Int32.max)
                var entries: [(duration: UInt64, mediaTime: Int64)] = []
                if edit.empty > 0 { entries.append((edit.empty, -1)) }  // -1: nothing shows
                entries.append((edit.length, edit.mediaTime))
                w.fullBox("elst", version: wideEdit ? 1 : 0) { w in
                    w.u32(UInt32(entries.count))
                    for entry in entries {
                        if wideEdit {
                            w.u64(entry.duration)
                            w.u64(UInt64(bitPattern: entry.mediaTime))
                        } else {
                            w.u32(UInt32(entry.duration))
                            w.i32(Int32(entry.mediaTime))
                        }
                        w.u16(1)  // media rate 1.0
                        w.u16(0)
                    }
                }
            }
        }
        w.box("mdia") { w in
            let mediaDuration = fragmented ? 0 : track.mediaDuration
            let wideMedia = created > UInt64(UInt32.max) || mediaDuration > UInt64(UInt32.max)
            w.fullBox("mdhd", version: wideMedia ? 1 : 0) { w in
                w.times(created, wide: wideMedia)
                w.u32(track.timescale)
                w.sized(mediaDuration, wide: wideMedia)
                w.u16(0x55C4)  // language "und"
                w.u16(0)
            }
            let isVideo = if case .video = track.media { true } else { false }
            w.fullBox("hdlr") { w in
                w.u32(0)
                w.fourCC(isVideo ? "vide" : "soun")
                w.zeros(12)
                w.cString(isVideo ? "VideoHandler" : "SoundHandler")
            }
            w.box("minf") { w in
                if isVideo {
                    w.fullBox("vmhd", flags: 1) { w in w.zeros(8) }
                } else {
                    w.fullBox("smhd") { w in w.zeros(4) }  // balance: centre
                }
                w.box("dinf") { w in
                    w.fullBox("dref") { w in
                        w.u32(1)
                        w.fullBox("url ", flags: 1) { _ in }  // the media is in this file
                    }
                }
                w.box("stbl") { w in sampleTable(&w, track) }
            }
        }
    }

    private static func sampleTable(_ w: inout BoxBuilder, _ track: MP4Track) {
        w.fullBox("stsd") { w in
            w.u32(1)
            sampleEntry(&w, track.media)
        }
        let samples = track.samples
        w.fullBox("stts") { w in w.runLengthTable(samples.map(\.duration)) }
        if samples.contains(where: { $0.compositionOffset != 0 }) {
            w.fullBox("ctts") { w in w.runLengthTable(samples.map(\.compositionOffset)) }
        }
        if samples.contains(where: { !$0.isKeyFrame }) {
            w.fullBox("stss") { w in
                let sync = samples.indices.filter { samples[$0].isKeyFrame }
                w.u32(UInt32(sync.count))
                for index in sync { w.u32(UInt32(index + 1)) }
            }
        }
        w.fullBox("stsc") { w in
            // One entry wherever the number of samples per chunk changes.
            var entries: [(firstChunk: Int, samples: Int)] = []
            for (index, chunk) in track.chunks.enumerated() where entries.last?.samples != chunk.sampleCount {
                entries.append((index + 1, chunk.sampleCount))
            }
            w.u32(UInt32(entries.count))
            for entry in entries {
                w.u32(UInt32(entry.firstChunk))
                w.u32(UInt32(entry.samples))
                w.u32(1)
            }
        }
        w.fullBox("stsz") { w in
            w.u32(0)  // sizes differ: one per sample
            w.u32(UInt32(samples.count))
            for sample in samples { w.u32(sample.size) }
        }
        if track.chunks.contains(where: { $0.offset > Int64(UInt32.max) }) {
            w.fullBox("co64") { w in
                w.u32(UInt32(track.chunks.count))
                for chunk in track.chunks { w.u64(UInt64(chunk.offset)) }
            }
        } else {
            w.fullBox("stco") { w in
                w.u32(UInt32(track.chunks.count))
                for chunk in track.chunks { w.u32(UInt32(chunk.offset)) }
            }
        }
        if case .sound(let entry) = track.media {
            // Every packet is in the one roll-recovery group; fragments say so for their own.
            w.fullBox("sgpd", version: 1) { w in
                w.fourCC("roll")
                w.u32(2)  // default_length: one 16-bit roll_distance
                w.u32(1)
                w.u16(UInt16(bitPattern: entry.rollDistance))
            }
            rollGroupSamples(&w, count: samples.count)
        }
    }

    /// A `sbgp` that puts `count` samples in group 1 of the track's `roll` descriptions.
    static func rollGroupSamples(_ w: inout BoxBuilder, count: Int) {
        w.fullBox("sbgp") { w in
            w.fourCC("roll")
            w.u32(count > 0 ? 1 : 0)
            if count > 0 {
                w.u32(UInt32(count))
                w.u32(1)  // group_description_index
            }
        }
    }

    /// iTunes-style metadata, which ffprobe, mediainfo and players show: the encoder (`©too`)
    /// and the source (`©cmt`).
    private static func userData(_ w: inout BoxBuilder, _ metadata: ContainerMetadata) {
        w.fullBox("meta") { w in
            w.fullBox("hdlr") { w in
                w.u32(0)
                w.fourCC("mdir")
                w.fourCC("appl")
                w.zeros(8)
                w.u8(0)
            }
            w.box("ilst") { w in
                let items = [("©too", metadata.encoder), ("©cmt", metadata.source.map { "source: \($0)" })]
                for case let (key, text?) in items {
                    w.box(key) { w in
                        w.box("data") { w in
                            w.u32(1)  // UTF-8
                            w.u32(0)
                            w.append(Array(text.utf8))
                        }
                    }
                }
            }
        }
    }

    /// Seconds since 1904-01-01 UTC, the epoch of ISO BMFF times.
    static func macTime(_ date: Date) -> UInt64 {
        UInt64(max(0, date.timeIntervalSince1970 + 2_082_844_800))
    }

}

private extension BoxBuilder {
    /// The table of stts and ctts: an entry count, then (count, value) for each run of equal
    /// values.
    mutating func runLengthTable(_ values: [UInt32]) {
        var runs: [(value: UInt32, count: Int)] = []
        for value in values {
            if runs.last?.value == value {
                runs[runs.count - 1].count += 1
            } else {
                runs.append((value, 1))
            }
        }
        u32(UInt32(runs.count))
        for run in runs {
            u32(UInt32(run.count))
            u32(run.value)
        }
    }

    /// creation_time and modification_time, 32 or 64 bits each.
    mutating func times(_ time: UInt64, wide: Bool) {
        sized(time, wide: wide)
        sized(time, wide: wide)
    }

    mutating func sized(_ value: UInt64, wide: Bool) {
        if wide { u64(value) } else { u32(UInt32(value)) }
    }
}
