import Foundation
import Testing
import VTCore
import VTDecoding
import VTH264
import VTTestSupport

/// Which decoder `--decoder auto` and `vaapi` pick for a stream no VA-API device decodes
/// (4:4:4 from FFmpeg's libx264), with and without a device to ask.
@Suite struct DecoderSelectionTests {
    static let reason = "VA-API decodes 8-bit 4:2:0 H.264, and this stream is not"

    /// The stream's parameter sets as a format description.
    static func format444(_ dir: TemporaryDirectory) throws -> VideoFormatDescription {
        let path = dir.path("444.h264")
        let made = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=64x64:rate=30",
                                            "-frames:v", "1", "-c:v", "libx264", "-pix_fmt", "yuv444p", "-y", path])
        try #require(made.status == 0, "\(made.stderr)")
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let units = AnnexB.nalUnitRanges(in: data).map { Array(data[$0]) }
        return VideoFormatDescription(width: 64, height: 64, sequenceParameterSets: units.filter { $0.first.map { $0 & 0x1F } == 7 },
                                      pictureParameterSets: units.filter { $0.first.map { $0 & 0x1F } == 8 })
    }

    /// On a machine without a device, auto decodes in software with nothing to explain, as it
    /// does every stream there: no "decoding in software" line for verify or thumbnail.
    @Test func autoWithoutADeviceHasNoReason() throws {
        let renderNodes = (try? FileManager.default.contentsOfDirectory(atPath: "/dev/dri"))?.filter { $0.hasPrefix("renderD") } ?? []
        try #require(renderNodes.isEmpty, "this machine has a render node: \(renderNodes)")
        let dir = try TemporaryDirectory()
        let selection = try DecoderSelection.select(.auto, vaDevice: nil, format: try Self.format444(dir))
        #expect(selection.backend == .software && selection.reason == nil, "\(selection)")
    }

    /// A device named with --va-device is passed over with the stream's reason (auto), or the
    /// stream is refused with it (vaapi), with or without a device.
    @Test func aNamedDeviceOrVAAPIGivesTheReason() throws {
        let dir = try TemporaryDirectory()
        let format = try Self.format444(dir)
        let named = try DecoderSelection.select(.auto, vaDevice: "/dev/dri/renderD128", format: format)
        #expect(named.backend == .software && named.reason == Self.reason, "\(named)")
        let refused = #expect(throws: DecoderError.self) { try DecoderSelection.select(.vaapi, vaDevice: nil, format: format) }
        #expect(refused?.description.contains(Self.reason) == true, "\(String(describing: refused))")
    }
}
