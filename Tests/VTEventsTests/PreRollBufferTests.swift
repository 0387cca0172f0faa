import Testing
import VTCore
@testable import VTEvents

/// The pre-roll on made-up streams: 10 pictures a second, a keyframe every `gop` pictures.
struct PreRollBufferTests {
    static let format = VideoFormatDescription(width: 64, height: 64, sequenceParameterSets: [[0x67]], pictureParameterSets: [[0x68]])

    static func frame(_ n: Int, gop: Int, bytes: Int = 100) -> ClipPacket {
        .frame(EncodedFrame(data: [UInt8](repeating: 0, count: bytes), pts: MediaTime(value: Int64(n), timescale: 10),
                            dts: MediaTime(value: Int64(n), timescale: 10), isKeyFrame: n % gop == 0,
                            token: FrameToken(UInt64(n))), format)
    }

    static func numbers(_ packets: ArraySlice<ClipPacket>) -> [Int] {
        packets.compactMap { if case .frame(let f, _) = $0 { Int(f.pts.value) } else { nil } }
    }

    @Test func holdsFromTheNewestKeyframeOldEnough() {
        var held = PreRollBuffer(seconds: 2, byteLimit: 1_000_000)
        for n in 0..<57 { held.append(Self.frame(n, gop: 10)) }
        // Newest 5.6 s: the newest keyframe at or before 3.6 s is at 3.0 s.
        let start = held.start(for: MediaTime(value: 56, timescale: 10), notBefore: nil)
        #expect(start?.pts == MediaTime(value: 30, timescale: 10))
        #expect(Self.numbers(held.packets(from: start!.position)) == Array(30..<57))
        #expect(held.bytes == 27 * 100)
    }

    @Test func nothingIsHeldBeforeTheFirstKeyframe() {
        var held = PreRollBuffer(seconds: 2, byteLimit: 1_000_000)
        for n in 5..<15 { held.append(Self.frame(n, gop: 10)) }
        let start = held.start(for: MediaTime(value: 14, timescale: 10), notBefore: nil)
        #expect(Self.numbers(held.packets(from: start!.position)) == Array(10..<15))
    }

    @Test func aClipNeverStartsBeforeTheLastOneEnded() {
        var held = PreRollBuffer(seconds: 5, byteLimit: 1_000_000)
        var positions: [Int: Int] = [:]
        for n in 0..<60 {
            positions[n] = held.end
            held.append(Self.frame(n, gop: 10))
        }
        let start = held.start(for: MediaTime(value: 59, timescale: 10), notBefore: positions[40])
        #expect(start?.pts == MediaTime(value: 40, timescale: 10))
    }

    @Test func theByteLimitLetsWholeGOPsGoOldestFirst() {
        var held = PreRollBuffer(seconds: 100, byteLimit: 2_500)
        for n in 0..<40 { held.append(Self.frame(n, gop: 10)) }
        #expect(held.bytes <= 2_500)
        #expect(held.gopsDroppedForBytes == 2)
        let start = held.start(for: MediaTime(value: 39, timescale: 10), notBefore: nil)
        #expect(Self.numbers(held.packets(from: start!.position)) == Array(20..<40))
        // One GOP bigger than the bound goes whole; nothing is held until the next keyframe.
        var small = PreRollBuffer(seconds: 100, byteLimit: 500)
        for n in 0..<8 { small.append(Self.frame(n, gop: 10)) }
        #expect(small.bytes <= 500)
        #expect(small.start(for: MediaTime(value: 7, timescale: 10), notBefore: nil) == nil)
        #expect(small.peakBytes <= 500)
    }

    @Test func soundTravelsWithItsGOP() {
        var held = PreRollBuffer(seconds: 1, byteLimit: 1_000_000)
        for n in 0..<30 {
            held.append(Self.frame(n, gop: 10))
            held.append(.sound(EncodedAudioPacket(data: [1, 2], pts: Int64(n) * 4800, duration: 4800)))
        }
        // Newest 2.9 s: the keyframe at or before 1.9 s is at 1.0 s; each picture's sound with it.
        let start = held.start(for: MediaTime(value: 29, timescale: 10), notBefore: nil)!
        #expect(start.pts == MediaTime(value: 10, timescale: 10))
        let packets = held.packets(from: start.position)
        #expect(packets.count == 40)
        #expect(held.bytes == 20 * 100 + 20 * 2)
    }
}

struct ControlCommandTests {
    @Test(arguments: [
        ("event", ControlCommand.event(label: nil, duration: 0)),
        ("event door", .event(label: "door", duration: 0)),
        ("event door 30s", .event(label: "door", duration: 30)),
        ("event - 1m", .event(label: nil, duration: 60)),
        ("event gate open", .event(label: "gate", duration: nil)),
        ("  event-end ", .eventEnd),
        ("status", .status),
        ("stop", .stop),
        ("snapshot /tmp/a still.jpg", .snapshot(path: "/tmp/a still.jpg")),
    ])
    func linesThatAreCommands(line: String, command: ControlCommand) throws {
        #expect(try ControlCommand.parse(line) == command)
    }

    @Test(arguments: ["", "events", "event a b c", "snapshot", "snapshot -", "event ../x", "event door soon", "status now", "stop now", "event .hidden",
                      "event door -5s"])
    func linesThatAreNot(line: String) {
        #expect(throws: ControlCommand.ParseError.self) { try ControlCommand.parse(line) }
    }
}
