import CTurboJPEG
import CYUV
import VTCore

/// What a thumbnail, a contact sheet and a still are made with: copies, libyuv scaling,
/// tiling and libturbojpeg's JPEG encoder, on I420 pictures.
public enum Pictures {
    /// A tightly packed I420 copy of an I420 or NV12 picture that owns its memory (a decoder's
    /// or a camera's picture goes back to it once released).
    public static func copy(_ picture: PixelBuffer) -> PixelBuffer {
        let copy = PixelBuffer(format: .i420, width: picture.width, height: picture.height)
        guard picture.format == .nv12 else {
            place(picture, into: copy, x: 0, y: 0)
            return copy
        }
        let s = picture.planes
        let d = copy.planes
        let status = NV12ToI420(s[0].baseAddress, Int32(s[0].bytesPerRow), s[1].baseAddress, Int32(s[1].bytesPerRow),
                                d[0].baseAddress, Int32(d[0].bytesPerRow), d[1].baseAddress, Int32(d[1].bytesPerRow),
                                d[2].baseAddress, Int32(d[2].bytesPerRow), Int32(picture.width), Int32(picture.height))
        precondition(status == 0, "NV12ToI420 refused a \(picture.width)x\(picture.height) picture")
        return copy
    }

    /// A captured picture (I420 or NV12, a camera's or a file's) as a JPEG, made from a packed
    /// copy with video levels stretched to JPEG's full range unless `fullRange` already.
    public static func still(_ picture: PixelBuffer, fullRange: Bool, quality: Int) throws(JPEGError) -> [UInt8] {
        let packed = copy(picture)
        if !fullRange { expandToFullRange(packed) }
        return try jpeg(packed, quality: quality)
    }

    /// `picture` (I420 or NV12) scaled to `width`×`height` as I420 with libyuv's box filter
    /// (the best for shrinking).
    public static func scaled(_ picture: PixelBuffer, width: Int, height: Int) -> PixelBuffer {
        if picture.width == width && picture.height == height { return copy(picture) }
        if picture.format != .i420 { return scaled(copy(picture), width: width, height: height) }
        let out = PixelBuffer(format: .i420, width: width, height: height)
        let s = picture.planes
        let d = out.planes
        let status = I420Scale(s[0].baseAddress, Int32(s[0].bytesPerRow), s[1].baseAddress, Int32(s[1].bytesPerRow),
                               s[2].baseAddress, Int32(s[2].bytesPerRow), Int32(picture.width), Int32(picture.height),
                               d[0].baseAddress, Int32(d[0].bytesPerRow), d[1].baseAddress, Int32(d[1].bytesPerRow),
                               d[2].baseAddress, Int32(d[2].bytesPerRow), Int32(width), Int32(height), kFilterBox)
        precondition(status == 0, "I420Scale refused \(picture.width)x\(picture.height) → \(width)x\(height)")
        return out
    }

    /// Pictures of one size side by side, `columns` to a row, on black.
    public static func tiled(_ pictures: [PixelBuffer], columns: Int, rows: Int) -> PixelBuffer {
        let cell = (width: pictures[0].width, height: pictures[0].height)
        let sheet = PixelBuffer(format: .i420, width: cell.width * columns, height: cell.height * rows)
        for (plane, value) in zip(sheet.planes, [UInt8(16), 128, 128]) {
            SetPlane(plane.baseAddress, Int32(plane.bytesPerRow), Int32(plane.rowBytes), Int32(plane.rows), UInt32(value))
        }
        for (index, picture) in pictures.enumerated() {
            place(picture, into: sheet, x: index % columns * cell.width, y: index / columns * cell.height)
        }
        return sheet
    }

    /// Copies `picture` into `target` with its top left corner at (`x`, `y`), both even.
    private static func place(_ picture: PixelBuffer, into target: PixelBuffer, x: Int, y: Int) {
        let s = picture.planes
        let d = target.planes
        func at(_ plane: Int) -> UnsafeMutablePointer<UInt8> {
            let shift = plane == 0 ? 0 : 1
            return d[plane].baseAddress + (y >> shift) * d[plane].bytesPerRow + (x >> shift)
        }
        let status = I420Copy(s[0].baseAddress, Int32(s[0].bytesPerRow), s[1].baseAddress, Int32(s[1].bytesPerRow),
                              s[2].baseAddress, Int32(s[2].bytesPerRow), at(0), Int32(d[0].bytesPerRow),
                              at(1), Int32(d[1].bytesPerRow), at(2), Int32(d[2].bytesPerRow),
                              Int32(picture.width), Int32(picture.height))
        precondition(status == 0, "I420Copy refused a \(picture.width)x\(picture.height) picture")
    }

    /// Stretches limited-range (video) levels to the full range a JPEG (JFIF) holds, in place:
    /// luma 16–235 and chroma 16–240 to 0–255, as FFmpeg does when it writes a JPEG.
    public static func expandToFullRange(_ picture: PixelBuffer) {
        var luma = [UInt8](repeating: 0, count: 256)
        var chroma = [UInt8](repeating: 0, count: 256)
        for value in 0..<256 {
            luma[value] = UInt8(clamping: Int(((Double(value) - 16) * 255 / 219).rounded()))
            chroma[value] = UInt8(clamping: Int(((Double(value) - 128) * 255 / 224 + 128).rounded()))
        }
        for (index, plane) in picture.planes.enumerated() {
            (index == 0 ? luma : chroma).withUnsafeBufferPointer { table in
                let map = table.baseAddress!
                for row in 0..<plane.rows {
                    let line = plane.baseAddress + row * plane.bytesPerRow
                    for column in 0..<plane.rowBytes { line[column] = map[Int(line[column])] }
                }
            }
        }
    }

    /// Why a JPEG could not be made.
    public struct JPEGError: ReportableError {
        public let description: String
        public var exitStatus: ExitStatus { .failure }
    }

    /// `picture` (I420, full range) as a baseline JPEG, 4:2:0, at `quality` (1–100).
    public static func jpeg(_ picture: PixelBuffer, quality: Int) throws(JPEGError) -> [UInt8] {
        guard let handle = tjInitCompress() else { throw JPEGError(description: "libturbojpeg could not start its encoder") }
        defer { tjDestroy(handle) }
        var planes: [UnsafePointer<UInt8>?] = picture.planes.map { UnsafePointer($0.baseAddress) }
        var strides: [Int32] = picture.planes.map { Int32($0.bytesPerRow) }
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let status = tjCompressFromYUVPlanes(handle, &planes, Int32(picture.width), &strides, Int32(picture.height),
                                             Int32(TJSAMP_420.rawValue), &output, &size, Int32(quality), 0)
        defer { if let output { tjFree(output) } }
        guard status == 0, let output else {
            let reason = tjGetErrorStr2(handle).map { String(cString: $0) } ?? "unknown error"
            throw JPEGError(description: "libturbojpeg could not encode the picture: \(reason)")
        }
        return Array(UnsafeBufferPointer(start: output, count: Int(size)))
    }
}
