import Foundation
import Logging
import VTCore
@testable import VTCapture

/// The whole stream goes through a file, as `--input` reads it; one file per process, so
/// libFuzzer's -jobs/-workers runs do not share it.
let path = FileManager.default.temporaryDirectory.appendingPathComponent("vtrecord-fuzz-\(getpid()).y4m").path
let quiet = Logger(label: "fuzz") { _ in SwiftLogNoOpLogHandler() }

/// libFuzzer target: a Y4M header line, then the whole stream through `Y4MSource`. Bad input
/// must throw a `CaptureError` that exits 2; every frame handed out must have the header's size.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    do throws(CaptureError) {
        let header = try Y4MStreamHeader.parse(Array(input.prefix { $0 != UInt8(ascii: "\n") }), path: "fuzz.y4m")
        precondition((1...Y4MStreamHeader.maximumDimension).contains(header.width)
                     && (1...Y4MStreamHeader.maximumDimension).contains(header.height) && header.pictureSize > 0,
                     "accepted a \(header.width)x\(header.height) header")
    } catch {
        precondition(error.exitStatus == .usage, "\(error) exits \(error.exitStatus), not 2")
    }
    guard FileManager.default.createFile(atPath: path, contents: Data(input)) else { fatalError("cannot write \(path)") }
    do throws(CaptureError) {
        let source = try Y4MSource(path: path, bufferCount: 1, logger: quiet)
        let pictureSize = PixelFormat.i420.imageSize(width: source.format.width, height: source.format.height)
        var frames = 0
        while let frame = try source.nextFrame() {
            frames += 1
            let planes = frame.buffer.planes.reduce(0) { $0 + $1.rows * $1.rowBytes }
            frame.buffer.release()
            precondition(planes == pictureSize, "frame \(frames) has \(planes) bytes, not \(pictureSize)")
            precondition(frames <= input.count, "more frames than bytes: the reader does not stop")
        }
    } catch {
        precondition(error.exitStatus == .usage, "\(error) exits \(error.exitStatus), not 2")
    }
    return 0
}
