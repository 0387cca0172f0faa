import CTurboJPEG
import CYUV
import VTCore

#if canImport(Glibc)
import Glibc
#endif

/// Turns one camera picture into an I420 `PixelBuffer`, once: YUYV with libyuv, Motion-JPEG
/// with libturbojpeg. Used by the capture thread only. Package-visible so vtrecord-bench can
/// time the very code the capture thread runs.
package final class FrameConverter {
    package enum Failure: Error, Equatable {
        /// Fewer bytes than a picture of the format needs.
        case short(bytes: Int, needed: Int)
        /// The JPEG could not be decoded, or decoded with damage.
        case undecodable(reason: String)
        /// The JPEG's size is not the negotiated one.
        case wrongSize(width: Int, height: Int)
    }

    let width: Int
    let height: Int
    private var decompressor: tjhandle?
    /// Chroma planes at the JPEG's own subsampling, before they are scaled to 4:2:0.
    private var chromaScratch: [UnsafeMutablePointer<UInt8>] = []
    private var chromaScratchSize = 0

    package init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    deinit {
        if let decompressor { tjDestroy(decompressor) }
        for plane in chromaScratch { plane.deallocate() }
    }

    /// Packed YUYV 4:2:2 to I420, halving the chroma vertically.
    package func convertYUYV(_ source: UnsafeRawPointer, bytesPerLine: Int, bytes: Int,
                     into buffer: PixelBuffer) throws(Failure) {
        let needed = bytesPerLine * (height - 1) + width * 2
        guard bytes >= needed else { throw .short(bytes: bytes, needed: needed) }
        let p = buffer.planes
        let result = YUY2ToI420(source.assumingMemoryBound(to: UInt8.self), Int32(bytesPerLine),
                                p[0].baseAddress, Int32(p[0].bytesPerRow),
                                p[1].baseAddress, Int32(p[1].bytesPerRow),
                                p[2].baseAddress, Int32(p[2].bytesPerRow),
                                Int32(width), Int32(height))
        // libyuv fails only on bad arguments (null pointers, zero sizes), which the
        // negotiated format rules out.
        precondition(result == 0, "YUY2ToI420 refused a negotiated \(width)x\(height) picture")
    }

    /// Planar or semi-planar 4:2:0 copied into a pooled buffer: as I420 when the camera's
    /// strides cannot be handed to the encoder as they are, or in its own layout (NV12 into an
    /// NV12 buffer) when the driver's buffer must go back before the encoder is done with it.
    package func copy420(_ source: UnsafeRawPointer, layout: PixelFormat, bytesPerLine: Int, bytes: Int,
                         into buffer: PixelBuffer) throws(Failure) {
        let needed = Self.imageSize(layout: layout, width: width, height: height, bytesPerLine: bytesPerLine)
        guard bytes >= needed else { throw .short(bytes: bytes, needed: needed) }
        let base = source.assumingMemoryBound(to: UInt8.self)
        let p = buffer.planes
        let lumaSize = bytesPerLine * height
        if layout == .nv12 && buffer.format == .nv12 {
            CopyPlane(base, Int32(bytesPerLine), p[0].baseAddress, Int32(p[0].bytesPerRow), Int32(width), Int32(height))
            CopyPlane(base + lumaSize, Int32(bytesPerLine), p[1].baseAddress, Int32(p[1].bytesPerRow),
                      Int32(p[1].rowBytes), Int32(p[1].rows))
        } else if layout == .nv12 {
            NV12ToI420(base, Int32(bytesPerLine), base + lumaSize, Int32(bytesPerLine),
                       p[0].baseAddress, Int32(p[0].bytesPerRow), p[1].baseAddress, Int32(p[1].bytesPerRow),
                       p[2].baseAddress, Int32(p[2].bytesPerRow), Int32(width), Int32(height))
        } else {
            let chromaStride = bytesPerLine / 2
            let chromaSize = chromaStride * ((height + 1) / 2)
            I420Copy(base, Int32(bytesPerLine), base + lumaSize, Int32(chromaStride),
                     base + lumaSize + chromaSize, Int32(chromaStride),
                     p[0].baseAddress, Int32(p[0].bytesPerRow), p[1].baseAddress, Int32(p[1].bytesPerRow),
                     p[2].baseAddress, Int32(p[2].bytesPerRow), Int32(width), Int32(height))
        }
    }

    /// Bytes a single-planar 4:2:0 picture takes with `bytesPerLine` luma rows (V4L2 lays the
    /// chroma rows at half that pitch for YU12, the same pitch for NV12).
    package static func imageSize(layout: PixelFormat, width: Int, height: Int, bytesPerLine: Int) -> Int {
        let chromaRows = (height + 1) / 2
        return layout == .nv12
            ? bytesPerLine * height + bytesPerLine * chromaRows
            : bytesPerLine * height + 2 * (bytesPerLine / 2) * chromaRows
    }

    /// Decodes a Motion-JPEG frame into I420. The luma is decoded in place; chroma at the
    /// JPEG's subsampling (4:2:2 from most webcams) is scaled to 4:2:0 with a box filter.
    /// Any decoder warning (a corrupt or truncated frame) fails the frame: a damaged picture
    /// is dropped and counted rather than encoded.
    package func decodeJPEG(_ source: UnsafeRawPointer, bytes: Int, into buffer: PixelBuffer) throws(Failure) {
        guard bytes > 0 else { throw .short(bytes: 0, needed: 1) }
        if decompressor == nil { decompressor = tjInitDecompress() }
        guard let decompressor else { throw .undecodable(reason: "cannot start the JPEG decoder") }
        let jpeg = source.assumingMemoryBound(to: UInt8.self)
        var w: Int32 = 0, h: Int32 = 0, subsampling: Int32 = 0, colourspace: Int32 = 0
        guard tjDecompressHeader3(decompressor, jpeg, UInt(bytes), &w, &h, &subsampling, &colourspace) == 0 else {
            throw .undecodable(reason: Self.errorText(decompressor))
        }
        guard Int(w) == width, Int(h) == height else { throw .wrongSize(width: Int(w), height: Int(h)) }

        let p = buffer.planes
        let flags = Int32(TJFLAG_STOPONWARNING)
        if subsampling == TJSAMP_420.rawValue {
            var planes: [UnsafeMutablePointer<UInt8>?] = [p[0].baseAddress, p[1].baseAddress, p[2].baseAddress]
            var strides: [Int32] = [Int32(p[0].bytesPerRow), Int32(p[1].bytesPerRow), Int32(p[2].bytesPerRow)]
            guard tjDecompressToYUVPlanes(decompressor, jpeg, UInt(bytes), &planes, w, &strides, h, flags) == 0 else {
                throw .undecodable(reason: Self.errorText(decompressor))
            }
            return
        }
        if subsampling == TJSAMP_GRAY.rawValue {
            var planes: [UnsafeMutablePointer<UInt8>?] = [p[0].baseAddress, nil, nil]
            var strides: [Int32] = [Int32(p[0].bytesPerRow), 0, 0]
            guard tjDecompressToYUVPlanes(decompressor, jpeg, UInt(bytes), &planes, w, &strides, h, flags) == 0 else {
                throw .undecodable(reason: Self.errorText(decompressor))
            }
            for plane in p.dropFirst() {
                for row in 0..<plane.rows { memset(plane.baseAddress + row * plane.bytesPerRow, 128, plane.rowBytes) }
            }
            return
        }
        let chromaWidth = Int(tjPlaneWidth(1, w, subsampling))
        let chromaHeight = Int(tjPlaneHeight(1, h, subsampling))
        guard chromaWidth > 0, chromaHeight > 0 else {
            throw .undecodable(reason: "unsupported JPEG subsampling \(subsampling)")
        }
        prepareChromaScratch(bytes: chromaWidth * chromaHeight)
        var planes: [UnsafeMutablePointer<UInt8>?] = [p[0].baseAddress, chromaScratch[0], chromaScratch[1]]
        var strides: [Int32] = [Int32(p[0].bytesPerRow), Int32(chromaWidth), Int32(chromaWidth)]
        guard tjDecompressToYUVPlanes(decompressor, jpeg, UInt(bytes), &planes, w, &strides, h, flags) == 0 else {
            throw .undecodable(reason: Self.errorText(decompressor))
        }
        for component in 1...2 {
            ScalePlane(chromaScratch[component - 1], Int32(chromaWidth), Int32(chromaWidth), Int32(chromaHeight),
                       p[component].baseAddress, Int32(p[component].bytesPerRow),
                       Int32(p[component].rowBytes), Int32(p[component].rows), kFilterBox)
        }
    }

    private func prepareChromaScratch(bytes: Int) {
        guard bytes > chromaScratchSize else { return }
        for plane in chromaScratch { plane.deallocate() }
        chromaScratch = [.allocate(capacity: bytes), .allocate(capacity: bytes)]
        chromaScratchSize = bytes
    }

    private static func errorText(_ handle: tjhandle) -> String {
        guard let text = tjGetErrorStr2(handle) else { return "unknown JPEG error" }
        return String(cString: text)
    }
}
