import Foundation
import Testing
import VTCore
import VTOutput
import VTTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Sound for the MP4 tests, made by FFmpeg's encoders and split into packets here: AAC from an
/// ADTS stream, Opus from an Ogg stream. The sound is silent but for a 1 kHz beep in the first
/// 100 ms of every whole second, so where each beep starts shows where the sound is.
struct MP4SoundFixture {
    /// Sound these tests do not make.
    struct NoFixture: Error {
        var codec: AudioCodec
    }

    var format: AudioFormatDescription
    var packets: [EncodedAudioPacket]

    static let sampleRate = 48_000
    /// Three seconds of a beep at 0, 1 and 2 s, two channels.
    static let beep = "aevalsrc='if(lt(mod(t,1),0.1),sin(2*PI*1000*t),0)':s=48000:d=3"

    /// Runs a program that must succeed; its standard output.
    @discardableResult
    static func run(_ arguments: [String]) throws -> Data {
        let result = try ChildProcess.run(arguments, environment: ProcessInfo.processInfo.environment)
        try #require(result.status == 0, "\(arguments.joined(separator: " ")): \(result.standardError)")
        return result.standardOutput
    }

    /// The sound of `beep` coded by `codec`, each packet moved `offset` samples along the
    /// recording's timeline (the first packet starts at offset − priming).
    static func make(_ codec: AudioCodec, offset: Int64 = 0) throws -> MP4SoundFixture {
        switch codec {
        case .aac:
            let out = try run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", beep, "-ac", "2", "-c:a", "aac",
                               "-b:a", "128k", "-f", "adts", "-"])
            return try adts([UInt8](out), offset: offset)
        case .opus:
            let out = try run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", beep, "-ac", "2", "-c:a", "libopus",
                               "-b:a", "96k", "-f", "ogg", "-"])
            return try ogg([UInt8](out), offset: offset)
        case .pcm:
            throw NoFixture(codec: codec)
        }
    }

    /// Raw AAC packets from ADTS frames (a 7-byte header, 9 with a CRC, that gives the frame's
    /// length), and the 2-byte AudioSpecificConfig its fields make: object type, frequency
    /// index, channel configuration. FFmpeg's encoder primes with 1024 samples.
    static func adts(_ bytes: [UInt8], offset: Int64) throws -> MP4SoundFixture {
        let rates = [96_000, 88_200, 64_000, 48_000, 44_100, 32_000, 24_000, 22_050, 16_000, 12_000, 11_025, 8000, 7350]
        var packets: [[UInt8]] = []
        var config: [UInt8] = []
        var rate = 0
        var channels = 0
        var at = 0
        while at + 7 <= bytes.count {
            try #require(bytes[at] == 0xFF && bytes[at + 1] & 0xF0 == 0xF0, "ADTS sync word at \(at)")
            let headerSize = bytes[at + 1] & 1 == 1 ? 7 : 9
            let objectType = Int(bytes[at + 2] >> 6) + 1
            let frequencyIndex = Int(bytes[at + 2] >> 2 & 0x0F)
            let channelConfiguration = Int(bytes[at + 2] & 1) << 2 | Int(bytes[at + 3] >> 6)
            let length = Int(bytes[at + 3] & 3) << 11 | Int(bytes[at + 4]) << 3 | Int(bytes[at + 5] >> 5)
            try #require(length > headerSize && at + length <= bytes.count, "ADTS frame at \(at) runs past the end")
            if config.isEmpty {
                let asc = UInt16(objectType) << 11 | UInt16(frequencyIndex) << 7 | UInt16(channelConfiguration) << 3
                config = [UInt8(asc >> 8), UInt8(asc & 0xFF)]
                rate = rates[frequencyIndex]
                channels = channelConfiguration
            }
            packets.append(Array(bytes[(at + headerSize)..<(at + length)]))
            at += length
        }
        try #require(at == bytes.count && packets.count > 100)
        let format = AudioFormatDescription(codec: .aac, sampleRate: rate, channels: channels, bitRate: 128_000,
                                            magicCookie: config, primingSamples: 1024, samplesPerPacket: 1024)
        return MP4SoundFixture(format: format, packets: packets.enumerated().map { index, data in
            EncodedAudioPacket(data: data, pts: offset - 1024 + Int64(index) * 1024, duration: 1024)
        })
    }

    /// Opus packets from Ogg pages (27-byte header, a segment table whose lacing values join
    /// segments into packets): OpusHead first (the setup bytes; its pre-skip is the priming),
    /// OpusTags next (skipped), then the sound, each packet as long as its TOC byte says.
    static func ogg(_ bytes: [UInt8], offset: Int64) throws -> MP4SoundFixture {
        var packets: [[UInt8]] = []
        var partial: [UInt8] = []
        var at = 0
        while at + 27 <= bytes.count {
            try #require(bytes[at..<(at + 4)].elementsEqual("OggS".utf8), "Ogg page at \(at)")
            let segments = Int(bytes[at + 26])
            let table = Array(bytes[(at + 27)..<(at + 27 + segments)])
            var data = at + 27 + segments
            for lacing in table {
                partial += bytes[data..<(data + Int(lacing))]
                data += Int(lacing)
                if lacing < 255 {
                    packets.append(partial)
                    partial = []
                }
            }
            at = data
        }
        try #require(at == bytes.count && packets.count > 100)
        let head = packets[0]
        try #require(head.starts(with: Array("OpusHead".utf8)) && packets[1].starts(with: Array("OpusTags".utf8)))
        let preSkip = Int(head[10]) | Int(head[11]) << 8
        let format = AudioFormatDescription(codec: .opus, sampleRate: 48_000, channels: Int(head[9]), bitRate: 96_000,
                                            magicCookie: head, primingSamples: preSkip, samplesPerPacket: 960)
        var pts = offset - Int64(preSkip)
        let sound = packets.dropFirst(2).map { data in
            defer { pts += Int64(opusSamples(data)) }
            return EncodedAudioPacket(data: data, pts: pts, duration: opusSamples(data))
        }
        return MP4SoundFixture(format: format, packets: sound)
    }

    /// Samples at 48 kHz in an Opus packet, from its TOC byte (RFC 6716, 3.1): the frame size of
    /// its configuration times the frame count its code gives.
    static func opusSamples(_ packet: [UInt8]) -> Int {
        let config = Int(packet[0] >> 3)
        let frame = switch config {
        case 0..<12: [480, 960, 1920, 2880][config % 4]
        case 12..<16: [480, 960][config % 2]
        default: [120, 240, 480, 960][config % 4]
        }
        let frames = switch packet[0] & 3 {
        case 0: 1
        case 1, 2: 2
        default: Int(packet[1] & 0x3F)
        }
        return frame * frames
    }

    /// Decodes the sound of `path` with FFmpeg to mono samples from the movie's time 0: silence
    /// before a track that starts later, and what comes before 0 (an encoder's priming that a
    /// fragmented file shifts there) cut off. `-copyts` keeps the times the file gives, which
    /// FFmpeg otherwise moves to start at 0.
    static func decodedSound(_ path: String) throws -> [Float] {
        let out = try run(["ffmpeg", "-v", "error", "-copyts", "-i", path, "-map", "0:a",
                           "-af", "aresample=async=1:first_pts=0", "-f", "f32le", "-ac", "1", "-"])
        return out.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// Where each beep starts: the first loud sample after half a second of quiet.
    static func onsets(_ samples: [Float]) -> [Int] {
        var found: [Int] = []
        var lastLoud = Int.min / 2
        for (index, sample) in samples.enumerated() where abs(sample) > 0.3 {
            if index - lastLoud > sampleRate / 2 { found.append(index) }
            lastLoud = index
        }
        return found
    }
}

/// A fresh directory under the system temporary directory, removed when the value goes away.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("vtoutput-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}
