import Testing
import VTCore
import VTDecoding
import VTH264
@testable import VTEncoding

/// `--check-frames decode` for a camera's H.264: x264's access units, whole and with the middle
/// of one slice's data lost (what a transfer that dropped packets leaves), each decoded by
/// libavcodec as the source hands them on.
@Suite struct H264DecodeCheckTests {
    /// 20 access units of the moving test picture, an IDR every 10, no B-frames.
    static func units() throws -> (VideoFormatDescription, [EncodedFrame]) {
        var settings = EncoderSettings()
        settings.keyFrameInterval = .frames(10)
        settings.bFrames = 0
        let (session, frames) = try X264SessionTests().encode(settings, count: 20)
        return (session.formatDescription, frames)
    }

    /// `unit` (AVCC) with the middle third of its last NAL unit's payload taken out, its length
    /// mended: every NAL unit stays well formed.
    static func withAHole(_ unit: [UInt8]) -> [UInt8] {
        var start = 0
        var last = 0
        while start + 4 <= unit.count {
            last = start
            let length = Int(unit[start]) << 24 | Int(unit[start + 1]) << 16 | Int(unit[start + 2]) << 8 | Int(unit[start + 3])
            start += 4 + length
        }
        let payload = last + 5
        let third = (unit.count - payload) / 3
        var cut = Array(unit[..<(payload + third)]) + Array(unit[(payload + 2 * third)...])
        let length = cut.count - last - 4
        cut[last] = UInt8(length >> 24 & 0xFF)
        cut[last + 1] = UInt8(length >> 16 & 0xFF)
        cut[last + 2] = UInt8(length >> 8 & 0xFF)
        cut[last + 3] = UInt8(length & 0xFF)
        return cut
    }

    @Test func wholeUnitsPassAndOneWithAHoleIsFound() throws {
        let (format, frames) = try Self.units()
        try #require(frames.count == 20 && frames[0].isKeyFrame)
        let check = try H264DecodeCheck()
        for frame in frames {
            #expect(check.check(frame.data, format: format, isKeyFrame: frame.isKeyFrame) == .whole, "\(frame.token)")
        }

        // Units 0–3 whole, then 4 with a hole: found at 4, with its own picture named.
        let damaged = try H264DecodeCheck()
        for frame in frames.prefix(4) {
            #expect(damaged.check(frame.data, format: format, isKeyFrame: frame.isKeyFrame) == .whole)
        }
        let finding = damaged.check(Self.withAHole(frames[4].data), format: format, isKeyFrame: false)
        #expect(finding == .damaged("the decoder concealed damage in its picture"), "\(finding)")
        // The source then waits for the next IDR picture, which decodes whole.
        #expect(damaged.check(frames[10].data, format: format, isKeyFrame: true) == .whole)
    }
}
