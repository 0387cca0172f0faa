import Foundation
import Testing
import VTCore
import VTEncoding
import VTH264
import VTOutput
import VTTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// An MP4 with sound: a second track beside the pictures, in every fragment while recording and
/// in the complete `moov` at a clean end, read back with FFmpeg and mediainfo, and by box.
@Suite struct MP4AudioTrackTests {
    typealias Fixture = MP4SoundFixture

    static let codecs: [AudioCodec] = [.aac, .opus]
    /// Three seconds of pictures at 30 fps, a keyframe every half second, with B-frames.
    static let frames = MP4WriterTests.frames(90, keyInterval: 15)

    static func writer(_ path: String, audio: AudioFormatDescription?, keepFragmented: Bool = false) throws -> MP4Writer {
        try MP4Writer(path: path, overwrite: false,
                      options: .init(frameRate: MP4WriterTests.rate, timescale: 90_000, fragmentDuration: 1,
                                     keepFragmented: keepFragmented,
                                     metadata: ContainerMetadata(encoder: "vtrecord test", source: "unit"), audio: audio))
    }

    /// Writes `frames` and `sound` the way the recorder interleaves them: after each frame, the
    /// packets that start by its decode time; after the last frame, the rest. Not finished.
    static func record(_ frames: [EncodedFrame], _ sound: Fixture?, to path: String,
                       keepFragmented: Bool = false) throws -> MP4Writer {
        let writer = try writer(path, audio: sound?.format, keepFragmented: keepFragmented)
        try writer.writeHeader(MP4WriterTests.format)
        var packets = (sound?.packets ?? [])[...]
        for frame in frames {
            try writer.write(frame)
            let decodeTime = frame.dts.converted(to: Int32(Fixture.sampleRate)).value
            while let packet = packets.first, packet.pts <= decodeTime {
                try writer.writeAudio(packet)
                packets = packets.dropFirst()
            }
        }
        for packet in packets { try writer.writeAudio(packet) }
        return writer
    }

    static func probe(_ path: String) throws -> (streams: [[String: Any]], packets: [[String: Any]]) {
        let out = try Fixture.run(["ffprobe", "-v", "error", "-show_streams", "-show_packets", "-of", "json", path])
        let json = try #require(try JSONSerialization.jsonObject(with: out) as? [String: Any])
        return (json["streams"] as? [[String: Any]] ?? [], json["packets"] as? [[String: Any]] ?? [])
    }

    /// The sizes of the packets of stream `index`, as FFmpeg reads them.
    static func packetSizes(_ packets: [[String: Any]], stream index: Int) -> [Int] {
        packets.filter { $0["stream_index"] as? Int == index }.compactMap { ($0["size"] as? String).flatMap { Int($0) } }
    }

    /// The video's packets, bytes and times, without decoding them (the test frames are not
    /// real pictures).
    static func videoMD5s(_ path: String) throws -> [String] {
        let out = try Fixture.run(["ffmpeg", "-v", "error", "-i", path, "-map", "0:v", "-c", "copy", "-f", "framemd5", "-"])
        return String(decoding: out, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
    }

    /// The sample entry in a `trak`'s `stsd`, and its configuration box (`esds`, `dOps`).
    static func sampleEntry(_ trak: Box) throws -> (type: String, channels: Int, rate: UInt32, configuration: [UInt8]) {
        let stsd = try #require(trak.find("mdia", "minf", "stbl", "stsd"))
        let entry = try #require(Box.read(stsd.payload.dropFirst(8)).first)
        let fields = entry.offset + entry.headerSize
        let channels = Int(entry.bytes[fields + 16]) << 8 | Int(entry.bytes[fields + 17])
        let configuration = try #require(Box.read(entry.payload.dropFirst(28)).first)
        return (entry.type, channels, Box.u32(entry.bytes, fields + 24),
                Array(configuration.bytes[configuration.offset..<(configuration.offset + configuration.size)]))
    }

    /// Checks the beeps of `path` start at `expected` samples of the movie's timeline, within 2 ms.
    static func expectBeeps(_ path: String, at expected: [Int], _ comment: Comment) throws {
        let onsets = Fixture.onsets(try Fixture.decodedSound(path))
        #expect(onsets.count == expected.count, "\(comment): beeps at \(onsets)")
        for (onset, want) in zip(onsets, expected) {
            #expect(abs(onset - want) <= Fixture.sampleRate / 500, "\(comment): a beep at \(onset), due at \(want)")
        }
    }

    @Test(arguments: codecs)
    func everyPacketIsInTheSoundTrackOfAPlainMP4(_ codec: AudioCodec) throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("sound.mp4")
        let silent = dir.path("silent.mp4")
        let sound = try Fixture.make(codec)
        let writer = try Self.record(Self.frames, sound, to: path)
        try writer.finish(keepEmpty: false)
        try Self.record(Self.frames, nil, to: silent).finish(keepEmpty: false)
        #expect(writer.isFinalized)

        let (bytes, top) = try MP4WriterTests.boxes(path)
        #expect(top.map(\.type) == ["ftyp", "mdat", "moov"])
        #expect(writer.statistics.bytes == Int64(bytes.count), "the sound's bytes count")
        #expect(writer.statistics.frames == Self.frames.count && writer.statistics.keyFrames == 6, "frames are pictures")
        let movie = try #require(top.last)
        #expect(movie.children("trak").count == 2)
        #expect(movie.find("mvhd")?.field(23) == 3, "next track ID")
        let trak = try #require(movie.track(2))
        #expect(trak.find("mdia", "hdlr")?.field(1) == 0x736F_756E, "handler soun")
        #expect(trak.find("mdia", "minf", "smhd") != nil)
        let tables = try SampleTables(track: trak)
        #expect(tables.timescale == 48_000)
        #expect(tables.sync == nil, "every sound sample is a sync sample")
        #expect(tables.sizes == sound.packets.map { UInt32($0.data.count) })
        let misplaced = zip(sound.packets, tables.sampleOffsets).enumerated().filter { _, pair in
            !bytes[Int(pair.1)...].starts(with: pair.0.data)
        }.map(\.offset)
        #expect(misplaced.isEmpty, "packets not where the tables say: \(misplaced.prefix(8))")
        #expect(tables.sampleOffsets.count == sound.packets.count)
        #expect(tables.durations.dropLast().allSatisfy { $0 == UInt32(sound.packets[0].duration) })
        // The edit skips the encoder's priming: sample 0 of the recording shows with picture 0,
        // and lasts to the end of the last packet.
        let end = UInt64(sound.packets.reduce(0) { $0 + $1.duration } - sound.format.primingSamples)
        #expect(trak.editList == [EditListEntry(duration: (end * 90_000 + 24_000) / 48_000,
                                                mediaTime: Int64(sound.format.primingSamples))])
        let mvhd = try #require(movie.find("mvhd"))
        #expect(UInt64(mvhd.field(3)) == max((end * 90_000 + 24_000) / 48_000, 90 * 3000), "the longer track")

        // Every packet in one roll-recovery group: a decoder starts one packet (AAC) or 80 ms
        // (Opus: four 20 ms packets) early.
        let stbl = try #require(trak.find("mdia", "minf", "stbl"))
        let sgpd = try #require(stbl.find("sgpd"))
        #expect(sgpd.version == 1 && sgpd.field(0) == 0x726F_6C6C && sgpd.field(1) == 2 && sgpd.field(2) == 1)
        let rollAt = sgpd.offset + sgpd.headerSize + 16  // after version, flags, type, length, count
        let roll = Int16(bitPattern: UInt16(sgpd.bytes[rollAt]) << 8 | UInt16(sgpd.bytes[rollAt + 1]))
        #expect(roll == (codec == .aac ? -1 : -4))
        let sbgp = try #require(stbl.find("sbgp"))
        #expect(sbgp.field(0) == 0x726F_6C6C && sbgp.field(1) == 1)
        #expect(sbgp.field(2) == UInt32(sound.packets.count) && sbgp.field(3) == 1)
        #expect(try #require(movie.track(1)).find("mdia", "minf", "stbl", "sgpd") == nil, "no roll group for pictures")

        let entry = try Self.sampleEntry(trak)
        switch codec {
        case .aac:
            #expect(entry.type == "mp4a" && entry.channels == 2 && entry.rate == 48_000 << 16)
            // ES_Descriptor (ES_ID 0) > DecoderConfigDescriptor (MPEG-4 audio, audio stream,
            // 1536-byte buffer, 128 kbit/s) > DecoderSpecificInfo (the config); SLConfig 2.
            let descriptor: [UInt8] = [0x03, 0x19, 0, 0, 0,
                                       0x04, 0x11, 0x40, 0x15, 0x00, 0x06, 0x00, 0, 1, 0xF4, 0, 0, 1, 0xF4, 0,
                                       0x05, 0x02] + sound.format.magicCookie + [0x06, 0x01, 0x02]
            #expect(entry.configuration == [0, 0, 0, 39] + Array("esds".utf8) + [0, 0, 0, 0] + descriptor)
        case .opus, .pcm:
            #expect(entry.type == "Opus" && entry.channels == 2 && entry.rate == 48_000 << 16)
            // OpusHead's fields big-endian: version 0, channels, pre-skip, input rate, gain, family.
            let head = sound.format.magicCookie
            let expected: [UInt8] = [0, head[9], head[11], head[10], head[15], head[14], head[13], head[12],
                                     head[17], head[16], head[18]]
            #expect(entry.configuration == [0, 0, 0, 19] + Array("dOps".utf8) + expected)
        }

        let (streams, packets) = try Self.probe(path)
        #expect(streams.map { $0["codec_type"] as? String } == ["video", "audio"])
        #expect(streams[1]["codec_name"] as? String == codec.rawValue)
        #expect(streams[1]["sample_rate"] as? String == "48000")
        #expect(streams[1]["channels"] as? Int == 2)
        #expect(Self.packetSizes(packets, stream: 1) == sound.packets.map(\.data.count))
        #expect(Self.packetSizes(packets, stream: 0).count == Self.frames.count)
        #expect(try Self.videoMD5s(path) == (try Self.videoMD5s(silent)), "the pictures are as without sound")

        let info = try Fixture.run(["mediainfo", "--Inform=Audio;%Format%|%SamplingRate%|%Channel(s)%", path])
        let fields = String(decoding: info, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            .split(separator: "|", omittingEmptySubsequences: false)
        #expect(fields.first == (codec == .aac ? "AAC" : "Opus"))
        #expect(fields.dropFirst().first == "48000")
        // mediainfo 23.04 reads no channel count from an Opus sample entry (nor from FFmpeg's).
        if codec == .aac { #expect(fields.last == "2") }
    }

    @Test(arguments: codecs)
    func beepsPlayAtTheirTimesWithThePrimingSkipped(_ codec: AudioCodec) throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("beeps.mp4")
        try Self.record(Self.frames, try Fixture.make(codec), to: path).finish(keepEmpty: false)
        let (streams, _) = try Self.probe(path)
        #expect(streams.map { $0["start_time"] as? String } == ["0.000000", "0.000000"])
        try Self.expectBeeps(path, at: [0, 48_000, 96_000], "\(codec)")
    }

    /// Sound that starts half a second after the pictures (its first packet at +24000 samples):
    /// an empty edit before it, and each beep at its own time, the priming included since it
    /// is on the timeline. While recording, the first fragment waits for the sound, so the
    /// file's header can say where it starts.
    @Test(arguments: codecs)
    func soundThatStartsLateBeginsWithAnEmptyEdit(_ codec: AudioCodec) throws {
        let dir = try TemporaryDirectory()
        let sound = try Fixture.make(codec, offset: 24_000)
        let late = Fixture(format: sound.format, packets: sound.packets.map {
            EncodedAudioPacket(data: $0.data, pts: $0.pts + Int64(sound.format.primingSamples), duration: $0.duration)
        })
        let start = 24_000 + sound.format.primingSamples
        for keepFragmented in [false, true] {
            let path = dir.path("late-\(keepFragmented).mp4")
            try Self.record(Self.frames, late, to: path, keepFragmented: keepFragmented).finish(keepEmpty: false)
            let top = try MP4WriterTests.boxes(path).top
            let movie = try #require(top.last { $0.type == "moov" })
            let edits = try #require(movie.track(2)).editList
            #expect(edits.count == 2 && edits.first == EditListEntry(duration: 45_000, mediaTime: -1))
            #expect(edits.last?.mediaTime == 0)
            if keepFragmented {
                #expect(edits.last?.duration == 0, "a fragmented file's length is open")
                let first = try #require(top.first { $0.type == "moof" })
                #expect(first.track(1)?.find("trun")?.field(0) == 30, "the first fragment waited a keyframe longer")
                #expect(first.track(2)?.find("tfdt").map { Box.u64($0.bytes, $0.offset + $0.headerSize + 4) } == 0)
            }
            try Self.expectBeeps(path, at: [start, start + 48_000, start + 96_000],
                                 "\(codec) half a second late, fragmented \(keepFragmented)")
        }
    }

    /// Sound that reaches the pictures only after the first fragment stopped waiting (5 s): the
    /// header counts the sound's decode times from just before the pictures, the fragments
    /// place it where it starts, and the complete `moov` begins it with an empty edit.
    @Test func soundLaterThanTheWaitStillPlaysAtItsTime() throws {
        let dir = try TemporaryDirectory()
        let sound = try Fixture.make(.aac, offset: 6 * 48_000 + 1024)
        let frames = MP4WriterTests.frames(270, keyInterval: 15)
        for keepFragmented in [false, true] {
            let path = dir.path("later-\(keepFragmented).mp4")
            try Self.record(frames, sound, to: path, keepFragmented: keepFragmented).finish(keepEmpty: false)
            let top = try MP4WriterTests.boxes(path).top
            let movie = try #require(top.last { $0.type == "moov" })
            if keepFragmented {
                let first = try #require(top.first { $0.type == "moof" })
                #expect(first.track(1)?.find("trun")?.field(0) == 150, "5 s of pictures, then the wait is over")
                #expect(first.track(2) == nil)
                #expect(try #require(movie.track(2)).editList == [EditListEntry(duration: 0, mediaTime: 2048)])
            } else {
                #expect(try #require(movie.track(2)).editList.first == EditListEntry(duration: 540_000, mediaTime: -1))
            }
            // The first packet, priming, at 6 s; the sound after it.
            try Self.expectBeeps(path, at: [289_024, 337_024, 385_024], "fragmented \(keepFragmented)")
        }
    }

    /// A later file of a segmented recording: its pictures start at 2 s, and the sound it is
    /// given starts before that. Sound that ends before the first picture is dropped but for
    /// the one packet before the first that plays; the edit skips to the picture's instant.
    @Test func aLaterSegmentKeepsOnePacketBeforeItsFirstPicture() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("segment.mp4")
        let sound = try Fixture.make(.aac)
        let shift = MediaTime(value: 2, timescale: 1)
        let frames = MP4WriterTests.frames(30, keyInterval: 15).map { frame in
            var frame = frame
            frame.pts = frame.pts + shift
            frame.dts = frame.dts + shift
            return frame
        }
        let given = Fixture(format: sound.format, packets: sound.packets.filter { $0.pts >= 72_000 })
        try Self.record(frames, given, to: path).finish(keepEmpty: false)
        // Packets start at -1024 + 1024k: the first to reach 96000 starts at 95232.
        let kept = sound.packets.filter { $0.pts >= 95_232 - 1024 }
        let movie = try #require(try MP4WriterTests.boxes(path).top.last)
        let trak = try #require(movie.track(2))
        #expect(try SampleTables(track: trak).sizes == kept.map { UInt32($0.data.count) })
        #expect(trak.editList.map(\.mediaTime) == [96_000 - 94_208])
        try Self.expectBeeps(path, at: [0], "the beep at 2 s shows with the first picture")
    }

    @Test func keptFragmentedEveryFragmentCarriesBothTracks() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("fragmented.mp4")
        let sound = try Fixture.make(.aac)
        let writer = try Self.record(Self.frames, sound, to: path, keepFragmented: true)
        try writer.finish(keepEmpty: false)
        #expect(!writer.isFinalized)
        let (_, top) = try MP4WriterTests.boxes(path)
        #expect(Array(top.map(\.type).prefix(2)) == ["ftyp", "moov"])
        let mvex = try #require(top[1].find("mvex"))
        #expect(mvex.children("trex").map { $0.field(0) } == [1, 2])
        #expect(try #require(top[1].track(2)).editList == [EditListEntry(duration: 0, mediaTime: 1024)])
        let fragments = top.filter { $0.type == "moof" }
        #expect(fragments.count == 6)
        #expect(fragments.allSatisfy { $0.track(1) != nil && $0.track(2) != nil }, "pictures and sound in each")
        // Each fragment puts its own sound samples in the roll group the moov describes.
        #expect(try #require(top[1].track(2)).find("mdia", "minf", "stbl", "sgpd") != nil)
        #expect(fragments.allSatisfy { fragment in
            guard let traf = fragment.track(2), let sbgp = traf.find("sbgp"), let trun = traf.find("trun") else { return false }
            return sbgp.field(1) == 1 && sbgp.field(2) == trun.field(0) && sbgp.field(3) == 1
        })
        #expect(fragments.allSatisfy { $0.track(1)?.find("sbgp") == nil })
        // Sound decode times run on from fragment to fragment, from 0.
        let decodeTimes = fragments.compactMap { $0.track(2)?.find("tfdt") }.map { Box.u64($0.bytes, $0.offset + $0.headerSize + 4) }
        let counts = fragments.compactMap { $0.track(2)?.find("trun")?.field(0) }
        #expect(decodeTimes.first == 0)
        #expect(zip(decodeTimes, decodeTimes.dropFirst()).enumerated().allSatisfy { index, pair in
            pair.1 - pair.0 == UInt64(counts[index]) * 1024
        })
        #expect(Box.samplesInCompleteFragments(top, track: 2) == sound.packets.count)

        let (streams, packets) = try Self.probe(path)
        #expect(streams.map { $0["codec_name"] as? String } == ["h264", "aac"])
        #expect(Self.packetSizes(packets, stream: 1) == sound.packets.map(\.data.count))
        #expect(Self.packetSizes(packets, stream: 0).count == Self.frames.count)
        try Self.expectBeeps(path, at: [0, 48_000, 96_000], "fragmented")
    }

    /// What a kill leaves (whole fragments, each written at once), and a file cut inside a later
    /// fragment's `mdat`: both tracks play to the last complete fragment. (FFmpeg 5.1 does not
    /// open a fragmented file cut inside a `moof`, its own files neither.)
    @Test(arguments: codecs)
    func aCutFilePlaysBothTracksToItsLastCompleteFragment(_ codec: AudioCodec) throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("killed.mp4")
        let sound = try Fixture.make(codec)
        let writer = try Self.record(Self.frames, sound, to: path)
        defer { writer.abandon() }
        let bytes = try AnnexBWriterTests.contents(path)
        let top = Box.read(bytes[...])
        // Three fragments are whole, each half a second of pictures; the fourth is cut.
        let moof = top.filter { $0.type == "moof" }[3]
        let mdat = top.filter { $0.type == "mdat" }[3]
        for (cut, place) in [(moof.offset, "end of a fragment"), (mdat.offset + mdat.size / 2, "mdat")] {
            let cutPath = dir.path("cut-\(cut).mp4")
            try Data(bytes[..<cut]).write(to: URL(fileURLWithPath: cutPath))
            let whole = Box.read(bytes[..<cut])
            let pictures = Box.samplesInCompleteFragments(whole, track: 1)
            let packets = Box.samplesInCompleteFragments(whole, track: 2)
            #expect(pictures == 45 && packets > 60, "cut in the \(place)")

            let (streams, read) = try Self.probe(cutPath)
            #expect(streams.map { $0["codec_name"] as? String } == ["h264", codec.rawValue])
            let videoSizes = Self.packetSizes(read, stream: 0)
            let soundSizes = Self.packetSizes(read, stream: 1)
            // A reader may also take what it finds of the cut fragment's data.
            #expect(place == "mdat" ? videoSizes.count >= pictures : videoSizes.count == pictures, "cut in the \(place)")
            #expect(place == "mdat" ? soundSizes.count >= packets : soundSizes.count == packets, "cut in the \(place)")
            #expect(Array(soundSizes.prefix(packets)) == sound.packets.prefix(packets).map(\.data.count))
            try Self.expectBeeps(cutPath, at: [0, 48_000], "\(codec) cut in the \(place)")
        }
    }

    /// A named pipe, like standard output, cannot be finalized: the fragments stream through with
    /// both tracks.
    @Test func aPipeGetsBothTracksInFragments() throws {
        let dir = try TemporaryDirectory()
        let fifo = dir.path("pipe.mp4")
        let copy = dir.path("copy.mp4")
        try #require(mkfifo(fifo, 0o600) == 0)
        let reader = try ChildProcess(["sh", "-c", "cat \"$0\" > \"$1\"", fifo, copy],
                                      environment: ProcessInfo.processInfo.environment)
        let sound = try Fixture.make(.opus)
        let writer = try Self.record(Self.frames, sound, to: fifo)
        try writer.finish(keepEmpty: false)
        #expect(!writer.isFinalized)
        #expect(reader.wait(timeout: .seconds(20)).status == 0)
        let (streams, packets) = try Self.probe(copy)
        #expect(streams.map { $0["codec_name"] as? String } == ["h264", "opus"])
        #expect(Self.packetSizes(packets, stream: 1) == sound.packets.map(\.data.count))
    }

    @Test func soundAnMP4CannotCarryIsRefusedBeforeTheFileIsMade() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("refused.mp4")
        let pcm = AudioFormatDescription(codec: .pcm, sampleRate: 48_000, channels: 2, bitRate: nil, magicCookie: [],
                                         primingSamples: 0, samplesPerPacket: 1024)
        let noConfig = AudioFormatDescription(codec: .aac, sampleRate: 48_000, channels: 2, bitRate: 128_000,
                                              magicCookie: [], primingSamples: 1024, samplesPerPacket: 1024)
        var head = try Fixture.make(.opus).format
        head.magicCookie[18] = 1  // mapping family 1 without its table
        head.magicCookie = Array(head.magicCookie.prefix(19))
        for format in [pcm, noConfig, head] {
            #expect {
                _ = try Self.writer(path, audio: format)
            } throws: { error in
                guard case .muxer(let where_, let reason) = error as? OutputError else { return false }
                return where_ == path && !reason.isEmpty
            }
            #expect(access(path, F_OK) != 0, "\(format.codec): no file")
        }
        let message = try #require(throws: OutputError.self) { try Self.writer(path, audio: pcm) }
        #expect(message.description.contains("PCM") && message.description.contains("Matroska"))
    }
}
