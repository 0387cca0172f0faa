import Foundation
import Testing
import VTCore
import VTTestSupport
@testable import VTCapture

/// Bounded fuzz runs of the Y4M reader: a damaged header or stream must end in a
/// `CaptureError` that exits 2 (bad input), never a trap, a hang or a picture of the wrong size.
/// The seed is printed; FUZZ_SEED replays a run and FUZZ_ITERATIONS lengthens it.
@Suite struct Y4MFuzzTests {
    static let tokens: [[UInt8]] = ["YUV4MPEG2", "YUV4MPEG2 ", " W", " H", " F", " A", " I", " C", " X", "FRAME",
                                    "FRAME\n", "\n", " ", ":", "0:0", "C420", "C420jpeg", "C420paldv", "C420mpeg2",
                                    "Cmono", "C444", "C422", "Ip", "It", "Im", "I?", "XCOLORRANGE=FULL",
                                    "XCOLORRANGE=LIMITED", "W16384", "H16384", "W16385", "F30000:1001"].map { Array($0.utf8) }

    /// Headers with every tag the reader knows, each followed by frames of the size it gives.
    static var corpus: [[UInt8]] {
        let headers = [
            "YUV4MPEG2 W16 H8 F30:1 Ip A1:1 C420jpeg XYSCSS=420JPEG",
            "YUV4MPEG2 W15 H7 F30000:1001 It A16:15 C420paldv XCOLORRANGE=LIMITED",
            "YUV4MPEG2 W8 H4 F25:1 Ib A0:0 Cmono XCOLORRANGE=FULL",
            "YUV4MPEG2 W6 H2 F0:0 Im C420mpeg2",
            "YUV4MPEG2 W4 H4",
            "YUV4MPEG2  W2  H2  I?  C420 ",
        ]
        return headers.enumerated().map { index, header in
            let tags = header.split(separator: " ")
            let width = Int(tags.first { $0.hasPrefix("W") }!.dropFirst())!
            let height = Int(tags.first { $0.hasPrefix("H") }!.dropFirst())!
            let size = header.contains("Cmono") ? width * height : PixelFormat.i420.imageSize(width: width, height: height)
            var bytes = Array("\(header)\n".utf8)
            for frame in 0..<index % 3 + 1 {
                bytes += Array((frame == 1 ? "FRAME Ixyz\n" : "FRAME\n").utf8)
                bytes += (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ frame) }
            }
            return bytes
        }
    }

    @Test func streamHeader() {
        var campaign = FuzzCampaign(target: "y4m-header", corpus: Self.corpus, tokens: Self.tokens, iterations: 20000,
                                    maximumSize: 512)
        let findings = campaign.run { input in
            let line = Array(input.prefix { $0 != UInt8(ascii: "\n") })
            do throws(CaptureError) {
                let header = try Y4MStreamHeader.parse(line, path: "fuzz.y4m")
                guard (1...Y4MStreamHeader.maximumDimension).contains(header.width),
                      (1...Y4MStreamHeader.maximumDimension).contains(header.height), header.pictureSize > 0 else {
                    return "accepted a \(header.width)x\(header.height) header (picture size \(header.pictureSize))"
                }
            } catch {
                if error.exitStatus != .usage { return "\(error) exits \(error.exitStatus), not 2" }
            }
            return nil
        }
        for finding in findings.prefix(5) { Issue.record("\(finding)") }
    }

    /// The whole reader, through a file: every frame it hands out has the header's size, and
    /// it stops, by nil or by a bad-input error, within one frame of the end of the data.
    @Test func wholeStream() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("fuzz.y4m")
        let (logger, _) = RecordingLogHandler.logger()
        var campaign = FuzzCampaign(target: "y4m-stream", corpus: Self.corpus, tokens: Self.tokens, iterations: 3000,
                                    maximumSize: 4096)
        let findings = campaign.run { input in
            guard FileManager.default.createFile(atPath: path, contents: Data(input)) else { return "cannot write \(path)" }
            do throws(CaptureError) {
                let source = try Y4MSource(path: path, bufferCount: 1, logger: logger)
                let size = PixelFormat.i420.imageSize(width: source.format.width, height: source.format.height)
                var frames = 0
                while let frame = try source.nextFrame() {
                    frames += 1
                    if pictureBytes(frame.buffer!).count != size { return "frame \(frames) is not \(size) bytes" }
                    if frames > input.count { return "more frames than bytes: the reader does not stop" }
                }
            } catch {
                if error.exitStatus != .usage { return "\(error) exits \(error.exitStatus), not 2" }
            }
            return nil
        }
        for finding in findings.prefix(5) { Issue.record("\(finding)") }
    }
}
