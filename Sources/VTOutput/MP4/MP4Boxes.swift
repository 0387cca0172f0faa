import Foundation
import VTCore

/// One sample (access unit) of the video track, as the sample tables and a `trun` describe it.
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

/// A run of samples stored back to back (one fragment's `mdat` payload), at a file offset.
struct MP4Chunk: Equatable {
    var offset: Int64
    var sampleCount: Int
}

/// What the file says about itself beyond the pictures: when it was made, by what, of what.
public struct ContainerMetadata: Sendable, Equatable {
    /// The wall-clock time of the first frame.
    public var creationTime: Date?
    /// `vtrecord 0.x`.
    public var encoder: String
    /// The camera, input file or test pattern the pictures came from.
    public var source: String?

    public init(creationTime: Date? = nil, encoder: String, source: String? = nil) {
        self.creationTime = creationTime
        self.encoder = encoder
        self.source = source
    }
}

/// The movie's one video track: everything its `moov` says about it.
struct MP4Track {
    var width: Int
    var height: Int
    var timescale: UInt32
    var avcC: [UInt8]
    var sampleAspectRatio: SampleAspectRatio?
    /// Decode-time ticks before the first presented picture (an edit skips them, so the first
    /// picture shows at time 0 also when B-frames make decoding start earlier).
    var leadingTicks: Int64 = 0
    /// Where the last picture stops showing, in decode-time ticks: one frame interval after the
    /// latest presentation time.
    var presentationEnd: Int64 = 0
    var samples: [MP4Sample] = []
    var chunks: [MP4Chunk] = []

    /// Sum of the sample durations: the media's length from its first decode time. As other
    /// muxers do, the last sample lasts one frame interval, so a constant-rate recording has
    /// one sample duration throughout; with B-frames the edit below reaches past the media's
    /// end by the decode lead, which players show as the last picture held.
    var mediaDuration: UInt64 { samples.reduce(0) { $0 + UInt64($1.duration) } }
    /// What plays: from the first picture's presentation time to the last one's end.
    var presentationDuration: UInt64 { UInt64(max(0, presentationEnd - leadingTicks)) }
}

/// The boxes of an MP4 file (ISO/IEC 14496-12 and -14, avcC from 14496-15) that vtrecord writes:
/// `ftyp`; a `moov` for fragments (empty sample tables, `mvex`) or a complete one; a `moof` with
/// one track fragment. Only what one H.264 track needs.
enum MP4Boxes {
    /// Brands: ISO base media with fragments (iso6), AVC, and MP4 version 1 for older readers.
    static func fileType() -> [UInt8] {
        var w = BoxWriter()
        w.box("ftyp") { w in
            w.fourCC("isom")
            w.u32(0x200)
            for brand in ["isom", "iso6", "iso2", "avc1", "mp41"] { w.fourCC(brand) }
        }
        return w.bytes
    }

    /// A `moov`. `fragmented`: the sample tables are empty and `mvex` announces fragments;
    /// otherwise the tables list every sample and chunk.
    static func movie(_ track: MP4Track, metadata: ContainerMetadata, fragmented: Bool) -> [UInt8] {
        var w = BoxWriter(reservingCapacity: 1024 + track.samples.count * 12)
        let created = metadata.creationTime.map(macTime) ?? 0
        let duration = fragmented ? 0 : track.presentationDuration
        w.box("moov") { w in
            let wide = created > UInt64(UInt32.max) || duration > UInt64(UInt32.max)
            w.fullBox("mvhd", version: wide ? 1 : 0) { w in
                w.times(created, wide: wide)
                w.u32(track.timescale)
                w.sized(duration, wide: wide)
                w.u32(0x0001_0000)  // rate 1.0
                w.u16(0x0100)  // volume 1.0
                w.zeros(10)
                w.unityMatrix()
                w.zeros(24)
                w.u32(2)  // next track ID
            }
            w.box("trak") { w in trackBox(&w, track, created: created, duration: duration, fragmented: fragmented) }
            if fragmented {
                w.box("mvex") { w in
                    w.fullBox("trex") { w in
                        w.u32(1)  // track ID
                        w.u32(1)  // sample description index
                        w.zeros(12)  // default duration, size, flags: each fragment gives its own
                    }
                }
            }
            w.box("udta") { w in userData(&w, metadata) }
        }
        return w.bytes
    }

    private static func trackBox(_ w: inout BoxWriter, _ track: MP4Track, created: UInt64, duration: UInt64,
                                 fragmented: Bool) {
        let wide = created > UInt64(UInt32.max) || duration > UInt64(UInt32.max)
        w.fullBox("tkhd", version: wide ? 1 : 0, flags: 3) { w in  // enabled, in the movie
            w.times(created, wide: wide)
            w.u32(1)  // track ID
            w.u32(0)
            w.sized(duration, wide: wide)
            w.zeros(8)
            w.u16(0)  // layer
            w.u16(0)  // alternate group
            w.u16(0)  // volume: video has none
            w.u16(0)
            w.unityMatrix()
            let displayWidth = track.sampleAspectRatio.map { track.width * $0.width / max($0.height, 1) } ?? track.width
            w.u32(UInt32(displayWidth) << 16)
            w.u32(UInt32(track.height) << 16)
        }
        if track.leadingTicks > 0 {
            // Skip the decode-time lead: the first picture shows at 0. In a fragmented file the
            // length is not known yet; 0 stands for "to the end of the media".
            w.box("edts") { w in
                let wideEdit = duration > UInt64(UInt32.max)
                w.fullBox("elst", version: wideEdit ? 1 : 0) { w in
                    w.u32(1)
                    if wideEdit {
                        w.u64(duration)
                        w.u64(UInt64(track.leadingTicks))
                    } else {
                        w.u32(UInt32(duration))
                        w.u32(UInt32(track.leadingTicks))
                    }
                    w.u16(1)  // media rate 1.0
                    w.u16(0)
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
            w.fullBox("hdlr") { w in
                w.u32(0)
                w.fourCC("vide")
                w.zeros(12)
                w.cString("VideoHandler")
            }
            w.box("minf") { w in
                w.fullBox("vmhd", flags: 1) { w in w.zeros(8) }
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

    private static func sampleTable(_ w: inout BoxWriter, _ track: MP4Track) {
        w.fullBox("stsd") { w in
            w.u32(1)
            w.box("avc1") { w in
                w.zeros(6)
                w.u16(1)  // data reference index
                w.zeros(16)
                w.u16(UInt16(track.width))
                w.u16(UInt16(track.height))
                w.u32(0x0048_0000)  // 72 dpi
                w.u32(0x0048_0000)
                w.u32(0)
                w.u16(1)  // frames per sample
                w.zeros(32)  // compressor name
                w.u16(0x0018)  // depth
                w.u16(0xFFFF)  // pre_defined -1
                w.box("avcC") { w in w.append(track.avcC) }
                if let sar = track.sampleAspectRatio, sar.width != sar.height {
                    w.box("pasp") { w in
                        w.u32(UInt32(sar.width))
                        w.u32(UInt32(sar.height))
                    }
                }
            }
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
    }

    /// iTunes-style metadata, which ffprobe, mediainfo and players show: the encoder (`©too`)
    /// and the source (`©cmt`).
    private static func userData(_ w: inout BoxWriter, _ metadata: ContainerMetadata) {
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

    /// A `moof` for `samples` of track 1, starting at `baseDecodeTime`, whose data follows in an
    /// `mdat` right after it (with an 8-byte header).
    static func fragment(sequence: UInt32, baseDecodeTime: UInt64, samples: [MP4Sample]) -> [UInt8] {
        var w = BoxWriter(reservingCapacity: 128 + samples.count * 16)
        var dataOffsetField = 0
        w.box("moof") { w in
            w.fullBox("mfhd") { w in w.u32(sequence) }
            w.box("traf") { w in
                w.fullBox("tfhd", flags: 0x02_0000) { w in w.u32(1) }  // offsets from the moof
                w.fullBox("tfdt", version: 1) { w in w.u64(baseDecodeTime) }
                // data offset, and per sample: duration, size, flags, composition offset
                w.fullBox("trun", flags: 0x00_0001 | 0x00_0100 | 0x00_0200 | 0x00_0400 | 0x00_0800) { w in
                    w.u32(UInt32(samples.count))
                    dataOffsetField = w.count
                    w.u32(0)
                    for sample in samples {
                        w.u32(sample.duration)
                        w.u32(sample.size)
                        w.u32(sample.flags)
                        w.u32(sample.compositionOffset)
                    }
                }
            }
        }
        w.patch(u32: UInt32(w.count + 8), at: dataOffsetField)
        return w.bytes
    }

    /// Seconds since 1904-01-01 UTC, the epoch of ISO BMFF times.
    static func macTime(_ date: Date) -> UInt64 {
        UInt64(max(0, date.timeIntervalSince1970 + 2_082_844_800))
    }

}

private extension BoxWriter {
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
