import VTCore

extension MP4Boxes {
    /// The one entry of a track's `stsd`: `avc1` with its `avcC` (and `pasp` for pixels that are
    /// not square) for H.264 pictures, `mp4v` naming JPEG in its `esds` for Motion JPEG (as
    /// FFmpeg writes it in an MP4, and reads it back), `mp4a` or `Opus` for the sound.
    static func sampleEntry(_ w: inout BoxBuilder, _ media: MP4Media) {
        switch media {
        case let .video(width, height, coding, sampleAspectRatio):
            w.box(coding == .jpeg ? "mp4v" : "avc1") { w in
                w.zeros(6)
                w.u16(1)  // data reference index
                w.zeros(16)
                w.u16(UInt16(width))
                w.u16(UInt16(height))
                w.u32(0x0048_0000)  // 72 dpi
                w.u32(0x0048_0000)
                w.u32(0)
                w.u16(1)  // frames per sample
                w.zeros(32)  // compressor name
                w.u16(0x0018)  // depth
                w.u16(0xFFFF)  // pre_defined -1
                switch coding {
                case .avc(let avcC):
                    w.box("avcC") { w in w.append(avcC) }
                case .jpeg:
                    // JPEG (ISO/IEC 10918-1) from the MP4 registration authority's object
                    // types, in a visual stream, with no decoder-specific bytes.
                    w.append(elementaryStreamDescriptor(objectType: 0x6C, streamType: 0x04, bufferSize: 0, bitRate: 0,
                                                        specificInfo: nil))
                }
                if let sar = sampleAspectRatio, sar.width != sar.height {
                    w.box("pasp") { w in
                        w.u32(UInt32(sar.width))
                        w.u32(UInt32(sar.height))
                    }
                }
            }
        case .sound(let entry):
            entry.write(&w)
        }
    }

    /// An `esds` box: an ES_Descriptor (ISO/IEC 14496-1) whose decoder configuration names the
    /// stream's object type and stream type (4 visual, 5 audio), with the decoder-specific bytes
    /// when the coding has any.
    static func elementaryStreamDescriptor(objectType: UInt8, streamType: UInt8, bufferSize: UInt32, bitRate: UInt32,
                                           specificInfo: [UInt8]?) -> [UInt8] {
        var w = BoxBuilder()
        w.fullBox("esds") { w in
            w.descriptor(0x03) { w in  // ES_Descriptor
                w.u16(0)  // ES_ID: 0 in a file (14496-14); the track ID names the stream
                w.u8(0)  // no dependence, URL or OCR stream; priority 0
                w.descriptor(0x04) { w in  // DecoderConfigDescriptor
                    w.u8(objectType)
                    w.u8(streamType << 2 | 1)  // not upstream, reserved bit set
                    w.u24(bufferSize)
                    w.u32(bitRate)  // maxBitrate
                    w.u32(bitRate)  // avgBitrate
                    if let specificInfo { w.descriptor(0x05) { w in w.append(specificInfo) } }  // DecoderSpecificInfo
                }
                w.descriptor(0x06) { w in w.u8(2) }  // SLConfigDescriptor: predefined for MP4
            }
        }
        return w.bytes
    }
}

/// The sample entry of a sound track (an AudioSampleEntry of ISO/IEC 14496-12): `mp4a` with an
/// `esds` for AAC (14496-14), `Opus` with a `dOps` for Opus ("Encapsulation of Opus in ISO
/// Base Media File Format"). Built once, when the writer opens, from the encoder's setup bytes.
struct MP4SoundSampleEntry: Equatable {
    /// Why a sound cannot go into an MP4: a codec this writer does not store, or setup bytes
    /// that do not describe the stream.
    struct Refusal: Error, Equatable {
        var reason: String
    }

    let format: AudioFormatDescription
    /// `mp4a` or `Opus`.
    let type: String
    /// The channels a player gets (Opus: its header's output channel count).
    let channelCount: Int
    /// The samplerate field: 16.16 fixed point, 0 for a rate that does not fit.
    let sampleRateField: UInt32
    /// The entry's configuration box: `esds` or `dOps`.
    let configuration: [UInt8]
    /// How many packets before any packet a decoder must start at for that packet to come out
    /// right (an AudioRollRecoveryEntry's roll_distance, negative): AAC overlaps each frame with
    /// the one before; Opus needs 80 ms.
    let rollDistance: Int16

    init(_ format: AudioFormatDescription) throws(Refusal) {
        self.format = format
        switch format.codec {
        case .aac:
            // Two bytes at least: object type, frequency index and channel configuration.
            guard format.magicCookie.count >= 2, format.magicCookie[0] >> 3 != 0 else {
                throw Refusal(reason: "the AAC encoder gave no AudioSpecificConfig for the MP4 sound track "
                              + "(\(format.magicCookie.count) bytes of setup)")
            }
            type = "mp4a"
            channelCount = format.channels
            sampleRateField = format.sampleRate <= 0xFFFF ? UInt32(format.sampleRate) << 16 : 0
            configuration = Self.elementaryStreamDescriptor(format)
            rollDistance = -1
        case .opus:
            guard format.sampleRate == 48_000 else {
                throw Refusal(reason: "Opus in an MP4 is timed at 48000 Hz; the sound is at \(format.sampleRate) Hz")
            }
            let head = try OpusHead(format.magicCookie)
            type = "Opus"
            channelCount = head.channels
            sampleRateField = 48_000 << 16
            configuration = head.opusSpecificBox()
            let preRoll = 3840  // 80 ms at 48 kHz
            rollDistance = Int16(clamping: -((preRoll + format.samplesPerPacket - 1) / format.samplesPerPacket))
        case .pcm:
            throw Refusal(reason: "PCM sound cannot be stored in an MP4 here: record it as AAC or Opus, "
                          + "or into Matroska (.mkv)")
        }
    }

    func write(_ w: inout BoxBuilder) {
        w.box(type) { w in
            w.zeros(6)
            w.u16(1)  // data reference index
            w.zeros(8)
            w.u16(UInt16(channelCount))
            w.u16(16)  // sample size
            w.u16(0)
            w.u16(0)
            w.u32(sampleRateField)
            w.append(configuration)
        }
    }

    /// The `esds` box naming MPEG-4 audio (14496-3) and carrying the AudioSpecificConfig as it is.
    private static func elementaryStreamDescriptor(_ format: AudioFormatDescription) -> [UInt8] {
        // The largest AAC frame: 6144 bits a channel (14496-3, 4.5.3.1).
        MP4Boxes.elementaryStreamDescriptor(objectType: 0x40, streamType: 0x05,
                                            bufferSize: UInt32(min(768 * format.channels, 0xFF_FFFF)),
                                            bitRate: UInt32(clamping: format.bitRate ?? 0), specificInfo: format.magicCookie)
    }
}

/// Opus's identification header (RFC 7845, 5.1), as the encoder gives it: little-endian fields.
struct OpusHead: Equatable {
    var channels: Int
    var preSkip: UInt16
    var inputSampleRate: UInt32
    var outputGain: Int16
    var mappingFamily: UInt8
    /// Family other than 0: the stream count, coupled count and one mapping byte per channel.
    var channelMapping: [UInt8]

    /// Reads `bytes`; throws on anything but a version-0 header that holds what it announces.
    init(_ bytes: [UInt8]) throws(MP4SoundSampleEntry.Refusal) {
        func refuse(_ why: String) -> MP4SoundSampleEntry.Refusal {
            MP4SoundSampleEntry.Refusal(reason: "the Opus encoder's identification header cannot be stored in an MP4: \(why)")
        }
        guard bytes.count >= 19, bytes[0..<8].elementsEqual("OpusHead".utf8) else {
            throw refuse("it is not an OpusHead of 19 bytes or more (\(bytes.count) bytes)")
        }
        // Minor versions are compatible; a new major version (the upper nibble) is not.
        guard bytes[8] >> 4 == 0 else { throw refuse("version \(bytes[8]) is not one this writer knows") }
        channels = Int(bytes[9])
        preSkip = UInt16(bytes[10]) | UInt16(bytes[11]) << 8
        inputSampleRate = (12..<16).reversed().reduce(0) { $0 << 8 | UInt32(bytes[$1]) }
        outputGain = Int16(bitPattern: UInt16(bytes[16]) | UInt16(bytes[17]) << 8)
        mappingFamily = bytes[18]
        guard channels > 0 else { throw refuse("it has no channels") }
        if mappingFamily == 0 {
            guard channels <= 2 else { throw refuse("mapping family 0 has \(channels) channels (at most 2)") }
            channelMapping = []
        } else {
            guard bytes.count >= 21 + channels else {
                throw refuse("its channel mapping table is cut short (\(bytes.count) bytes for \(channels) channels)")
            }
            channelMapping = Array(bytes[19..<(21 + channels)])
        }
    }

    /// The `dOps` box: the same fields big-endian, version 0, without the magic signature.
    func opusSpecificBox() -> [UInt8] {
        var w = BoxBuilder()
        w.box("dOps") { w in
            w.u8(0)  // version
            w.u8(UInt8(channels))
            w.u16(preSkip)
            w.u32(inputSampleRate)
            w.u16(UInt16(bitPattern: outputGain))
            w.u8(mappingFamily)
            w.append(channelMapping)
        }
        return w.bytes
    }
}
