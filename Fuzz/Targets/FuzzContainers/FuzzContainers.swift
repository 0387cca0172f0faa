import Foundation
import VTCore
import VTH264
import VTOutput

/// libFuzzer target: MP4, Matroska and MPEG-TS files through the reader behind `vtrecord
/// inspect` and `remux` (FFmpeg's demuxers and vtrecord's conversion of what they give). Each
/// input is written to a file in /dev/shm, as the reader takes a path. Bad input must end in a
/// ReadError, never a crash; every frame handed out must convert to Annex B or fail cleanly.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let path = "/dev/shm/vtrecord-fuzz-containers-\(getpid())"
    guard FileManager.default.createFile(atPath: path, contents: Data(bytes: data ?? UnsafePointer(bitPattern: 1)!, count: size)) else {
        fatalError("cannot write \(path)")
    }
    defer { unlink(path) }
    guard let reader = try? AssetReader(path: path) else { return 0 }
    var frames = 0
    while frames < 10_000, let frame = try? reader.nextFrame() {
        if let format = reader.format { _ = try? AnnexB.annexB(frame, format: format) }
        frames += 1
    }
    _ = MP4Layout(bytes: Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
